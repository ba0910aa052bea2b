/**
 * OpenTelemetry traces and metrics, exported over OTLP/HTTP (JSON) when `OTEL_EXPORTER_OTLP_ENDPOINT`
 * (or the per-signal `..._TRACES_ENDPOINT` / `..._METRICS_ENDPOINT`) is set; otherwise every call here
 * is a no-op that costs nothing. Spans: one per `tools/call`, per sandbox start, per proxied upstream
 * call. A W3C `traceparent` in the request's `_meta` makes the call part of the client's trace, and
 * each proxied call passes its own on to the upstream server the same way.
 *
 * Written here rather than taken from the OpenTelemetry JS SDK: what the bridge needs is a span type,
 * context passed by hand, and a batching JSON exporter (about 200 lines); the SDK's packages would add
 * megabytes to the binary and their start-up to every stdio start, for every user, to serve the few
 * who export telemetry.
 */
import { otlpExporter, type Exporter } from "./otlp.ts";

export interface SpanContext {
  traceId: string;
  spanId: string;
  /** Sampled (the flags' low bit). */
  sampled: boolean;
}

export type Attributes = Record<string, string | number | boolean | undefined>;

export interface Span {
  readonly context: SpanContext;
  set(attributes: Attributes): void;
  /** Ends the span; `error` marks it failed with that message. */
  end(error?: string): void;
  /** The W3C traceparent that makes a callee's spans children of this one. */
  traceparent(): string;
}

export interface Telemetry {
  readonly enabled: boolean;
  span(name: string, opts?: { parent?: SpanContext; kind?: SpanKind; attributes?: Attributes }): Span;
  /** Adds to a counter (cumulative). */
  count(name: string, value?: number, attributes?: Attributes): void;
  /** Records a value in a histogram (milliseconds). */
  record(name: string, ms: number, attributes?: Attributes): void;
  /** Sends what is buffered (at exit). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

export type SpanKind = "internal" | "server" | "client";

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The context a W3C traceparent names, or undefined when it is absent or malformed. */
export function parseTraceparent(value: unknown): SpanContext | undefined {
  if (typeof value !== "string") return undefined;
  const m = TRACEPARENT.exec(value.trim().toLowerCase());
  if (!m || /^0+$/.test(m[1]!) || /^0+$/.test(m[2]!)) return undefined;
  return { traceId: m[1]!, spanId: m[2]!, sampled: (Number.parseInt(m[3]!, 16) & 1) === 1 };
}

function randomHex(bytes: number): string {
  const b = crypto.getRandomValues(new Uint8Array(bytes));
  let s = "";
  for (const x of b) s += x.toString(16).padStart(2, "0");
  return s;
}

const NOOP_SPAN: Span = {
  context: { traceId: "0".repeat(32), spanId: "0".repeat(16), sampled: false },
  set() {},
  end() {},
  traceparent: () => "",
};

export const NO_TELEMETRY: Telemetry = {
  enabled: false,
  span: () => NOOP_SPAN,
  count() {},
  record() {},
  flush: async () => {},
  close: async () => {},
};

export interface FinishedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: SpanKind;
  startNs: bigint;
  endNs: bigint;
  attributes: Attributes;
  error?: string;
}

/** Wall-clock nanoseconds now, with the monotonic clock's precision. */
const origin = BigInt(Date.now()) * 1_000_000n - BigInt(Math.round(performance.now() * 1e6));
const nowNs = () => origin + BigInt(Math.round(performance.now() * 1e6));

/** Telemetry from the standard OTEL_* variables; NO_TELEMETRY when no endpoint is set. */
export function telemetryFromEnv(env: Record<string, string | undefined>, version: string, onError: (why: string) => void): Telemetry {
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim().replace(/\/+$/, "");
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || (base ? `${base}/v1/traces` : undefined);
  const metrics = env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT?.trim() || (base ? `${base}/v1/metrics` : undefined);
  if (env.OTEL_SDK_DISABLED === "true" || (!traces && !metrics)) return NO_TELEMETRY;
  const exporter = otlpExporter({
    traces,
    metrics,
    headers: parseHeaders(env.OTEL_EXPORTER_OTLP_HEADERS),
    resource: {
      "service.name": env.OTEL_SERVICE_NAME?.trim() || "mcp-code-exec",
      "service.version": version,
      ...parseHeaders(env.OTEL_RESOURCE_ATTRIBUTES),
    },
    onError,
  });
  return createTelemetry(exporter);
}

/** `k=v,k2=v2` as the OTEL variables write them (values URL-encoded). */
function parseHeaders(raw: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (raw ?? "").split(",")) {
    const eq = pair.indexOf("=");
    if (eq > 0) out[pair.slice(0, eq).trim()] = decodeURIComponent(pair.slice(eq + 1).trim());
  }
  return out;
}

export function createTelemetry(exporter: Exporter): Telemetry {
  return {
    enabled: true,
    span(name, opts = {}) {
      const parent = opts.parent;
      const context: SpanContext = { traceId: parent?.traceId ?? randomHex(16), spanId: randomHex(8), sampled: parent?.sampled ?? true };
      const attributes: Attributes = { ...opts.attributes };
      const startNs = nowNs();
      let ended = false;
      return {
        context,
        set(a) {
          Object.assign(attributes, a);
        },
        end(error) {
          if (ended) return;
          ended = true;
          if (!context.sampled) return;
          exporter.span({
            traceId: context.traceId,
            spanId: context.spanId,
            parentSpanId: parent?.spanId,
            name,
            kind: opts.kind ?? "internal",
            startNs,
            endNs: nowNs(),
            attributes,
            error,
          });
        },
        traceparent: () => `00-${context.traceId}-${context.spanId}-${context.sampled ? "01" : "00"}`,
      };
    },
    count: (name, value = 1, attributes = {}) => exporter.count(name, value, attributes),
    record: (name, ms, attributes = {}) => exporter.record(name, ms, attributes),
    flush: () => exporter.flush(),
    close: () => exporter.close(),
  };
}
