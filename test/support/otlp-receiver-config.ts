/**
 * The collector configuration the tests run Jaeger with, written from Jaeger's own all-in-one default
 * (cmd/jaeger/internal/all-in-one.yaml in v1.76.0) cut down to what a test reads, with every listener on
 * 127.0.0.1. What the default has and this leaves out, and why:
 *   - the jaeger, zipkin receivers and OTLP over gRPC: the exporter under test speaks OTLP/HTTP
 *   - remote_sampling (5778, 5779), expvar (27777), zpages (27778): nothing here reads them
 *   - the batch processor: without it (and with no exporter queue) a span is stored before the OTLP
 *     receiver answers the POST, so a test needs no wait after a flush
 *   - the collector's own metrics (a Prometheus listener on 8888): level none opens no port
 * Jaeger's query gRPC, which no test dials, cannot be turned off: it listens on 127.0.0.1:0, an ephemeral
 * port. (The health check's gRPC listener opens only when configured.)
 */
export interface ReceiverPorts {
  otlpHttp: number;
  query: number;
  health: number;
  /** http://127.0.0.1:PORT of the sink metrics are forwarded to. */
  metricsSink: string;
}

export function receiverConfig(p: ReceiverPorts): string {
  return `# written by test/support/otlp-receiver-config.ts
service:
  extensions: [jaeger_storage, jaeger_query, healthcheckv2]
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [jaeger_storage_exporter]
    metrics:
      receivers: [otlp]
      exporters: [otlphttp/sink]
  telemetry:
    metrics:
      level: none
    logs:
      level: info

extensions:
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 10000
  jaeger_query:
    storage:
      traces: memstore
    # Jaeger traces its own queries by default; that would add a service to what tests read.
    enable_tracing: false
    http:
      endpoint: 127.0.0.1:${p.query}
    # Left out, the query gRPC listens on *:16685, every interface.
    grpc:
      endpoint: 127.0.0.1:0
  healthcheckv2:
    use_v2: true
    http:
      endpoint: 127.0.0.1:${p.health}

receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:${p.otlpHttp}

exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
  otlphttp/sink:
    metrics_endpoint: ${p.metricsSink}/v1/metrics
    encoding: json
    compression: none
    # Synchronous: the receiver answers an export only after the sink has it.
    sending_queue:
      enabled: false
    retry_on_failure:
      enabled: false
`;
}
