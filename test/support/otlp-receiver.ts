/**
 * A real OTLP receiver for tests: Jaeger v2 all-in-one (an OpenTelemetry Collector build) built by
 * `scripts/otlp-receiver.sh`, run with in-memory storage on loopback ports of its own. Point the code
 * under test at `endpoint` (OTEL_EXPORTER_OTLP_ENDPOINT: it posts OTLP/HTTP to /v1/traces and
 * /v1/metrics), then read back what the receiver accepted: spans through Jaeger's query API
 * (/api/v3/traces, OTLP JSON, raw: no Jaeger adjusters rewrite them), metrics through a sink the
 * collector forwards them to (see otlp-metrics.ts).
 *
 * The pipelines have no batch processor and no queue, so an export is stored before the receiver
 * answers it: once the exporter's POST (or the SDK's forceFlush) has returned, `spans()` sees it. For a
 * process whose flush the test cannot await, `waitForSpans` polls the query API.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./env.ts";
import { attributes, durationMicros, micros, parseOrExplain, serviceName, TracesDataSchema } from "./otlp-json.ts";
import { type ReceivedMetric, startMetricsSink } from "./otlp-metrics.ts";
import { receiverConfig } from "./otlp-receiver-config.ts";

export type { ReceivedMetric, ReceivedPoint } from "./otlp-metrics.ts";

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer (0/undefined: unspecified). */
  kind?: number;
  attributes: Record<string, unknown>;
  /** The span's resource attributes (service.name among them). */
  resource: Record<string, unknown>;
  scope: { name?: string; version?: string };
  startUs: number;
  durationUs: number;
  /** OTLP StatusCode: 1 ok, 2 error; absent when unset. */
  status?: { code: number; message?: string };
}

export interface OtlpReceiver {
  /** http://127.0.0.1:PORT, for OTEL_EXPORTER_OTLP_ENDPOINT (OTLP/HTTP, JSON or protobuf). */
  endpoint: string;
  /** Every span stored so far whose resource's service.name is `service`, oldest first. */
  spans(service: string): Promise<ReceivedSpan[]>;
  /** Polls `spans(service)` until `until` holds (the query API has no push), or fails after `timeoutMs`. */
  waitForSpans(service: string, until: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>;
  /** Every metric received so far whose resource's service.name is `service`, in arrival order. */
  metrics(service: string): Promise<ReceivedMetric[]>;
  /** Resolves when a metrics export makes `until` true for `service`'s metrics. */
  waitForMetrics(service: string, until: (metrics: ReceivedMetric[]) => boolean, timeoutMs?: number): Promise<ReceivedMetric[]>;
  /** Process id of the receiver (for checks on its sockets). */
  pid: number;
  /** What the receiver printed so far (its log, for failure messages). */
  log(): string;
  close(): Promise<void>;
}

const SCRIPT = "scripts/otlp-receiver.sh";

/** The binary the script builds: the version is read from the script, so the two never disagree. */
export function receiverBinary(): string {
  const version = /^JAEGER_VERSION=(\S+)$/m.exec(readFileSync(join(ROOT, SCRIPT), "utf8"))?.[1];
  if (!version) throw new Error(`[otlp-receiver] no JAEGER_VERSION= line in ${SCRIPT}`);
  return join(process.env.MCP_CODE_EXEC_CACHE ?? "/var/cache/mcp-code-exec", "bin", `jaeger-${version}`);
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const bin = receiverBinary();
  if (!existsSync(bin)) {
    throw new Error(`[otlp-receiver] ${bin} is not built: run \`bash ${SCRIPT}\` (a few minutes the first time), then the tests again`);
  }
  // Ports are picked free and handed over, so another process can take one in between: start again.
  for (let attempt = 1; ; attempt++) {
    try {
      return await launch(bin);
    } catch (e) {
      if (!(e instanceof PortTaken) || attempt === 3) throw e;
    }
  }
}

class PortTaken extends Error {}

async function launch(bin: string): Promise<OtlpReceiver> {
  const dir = mkdtempSync(join(tmpdir(), "mcx-otlp-receiver-"));
  const sink = startMetricsSink();
  const ports = { otlpHttp: freePort(), query: freePort(), health: freePort() };
  writeFileSync(join(dir, "config.yaml"), receiverConfig({ ...ports, metricsSink: sink.url }));
  const proc = Bun.spawn([bin, "--config", join(dir, "config.yaml")], {
    cwd: dir,
    env: { HOME: dir, TMPDIR: dir },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let log = "";
  const collect = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream) log += new TextDecoder().decode(chunk);
  };
  const drained = Promise.all([collect(proc.stdout), collect(proc.stderr)]);
  const stop = async () => {
    proc.kill("SIGTERM");
    const killer = setTimeout(() => proc.kill("SIGKILL"), 10_000);
    await proc.exited;
    clearTimeout(killer);
    await drained;
    sink.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await ready(proc, ports.health, () => log);
  } catch (e) {
    await stop();
    if (/address already in use/.test(log)) throw new PortTaken(log);
    throw e;
  }

  const query = `http://127.0.0.1:${ports.query}`;
  const spans = async (service: string) => readSpans(query, service);
  const forService = (service: string) => (all: ReceivedMetric[]) => all.filter((m) => m.service === service);
  return {
    endpoint: `http://127.0.0.1:${ports.otlpHttp}`,
    pid: proc.pid,
    spans,
    async waitForSpans(service, until, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const got = await spans(service);
        if (until(got)) return got;
        if (Date.now() > deadline) {
          throw new Error(
            `[otlp-receiver] spans of ${service} did not reach the expected state within ${timeoutMs} ms; have: ${got.map((s) => s.name).join(", ") || "none"}`,
          );
        }
        await Bun.sleep(100);
      }
    },
    metrics: async (service) => forService(service)(sink.received()),
    async waitForMetrics(service, until, timeoutMs = 30_000) {
      const pick = forService(service);
      return pick(await sink.waitFor((all) => until(pick(all)), timeoutMs, `metrics of ${service} in the expected state`));
    },
    log: () => log,
    close: stop,
  };
}

/** Ready is the health check's 200: every component of the collector reported itself started. */
async function ready(proc: Bun.Subprocess, healthPort: number, log: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`[otlp-receiver] Jaeger exited (${proc.exitCode}) while starting:\n${log()}`);
    if (Date.now() > deadline) throw new Error(`[otlp-receiver] Jaeger was not healthy within 60 s:\n${log()}`);
    const ok = await fetch(`http://127.0.0.1:${healthPort}/status`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return;
    await Bun.sleep(50);
  }
}

async function readSpans(query: string, service: string): Promise<ReceivedSpan[]> {
  const url = new URL("/api/v3/traces", query);
  url.searchParams.set("query.service_name", service);
  // The memory store filters on the trace's time; the support wants everything it holds.
  url.searchParams.set("query.start_time_min", "1970-01-01T00:00:00Z");
  url.searchParams.set("query.start_time_max", "2200-01-01T00:00:00Z");
  url.searchParams.set("query.num_traces", "10000");
  url.searchParams.set("query.raw_traces", "true");
  const res = await fetch(url);
  if (res.status === 404) return []; // Jaeger's answer for "no traces found"
  const text = await res.text();
  if (!res.ok) throw new Error(`[otlp-receiver] ${url} answered ${res.status}: ${text.slice(0, 500)}`);
  const body = JSON.parse(text) as { result?: unknown };
  const data = parseOrExplain(TracesDataSchema, body.result ?? {}, "answer from Jaeger's /api/v3/traces");
  const out: ReceivedSpan[] = [];
  for (const rs of data.resourceSpans ?? []) {
    if (serviceName(rs.resource) !== service) continue;
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId || undefined,
          name: s.name,
          kind: s.kind,
          attributes: attributes(s.attributes),
          resource: attributes(rs.resource?.attributes),
          scope: { name: ss.scope?.name, version: ss.scope?.version },
          startUs: micros(s.startTimeUnixNano),
          durationUs: durationMicros(s.startTimeUnixNano, s.endTimeUnixNano),
          status: s.status?.code ? { code: s.status.code, message: s.status.message || undefined } : undefined,
        });
      }
    }
  }
  return out.sort((a, b) => a.startUs - b.startUs);
}

function freePort(): number {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}
