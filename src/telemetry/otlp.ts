/**
 * The OTLP/HTTP exporter: finished spans batched (every 2 s, or at 512), counters and histograms kept
 * cumulative and sent every 15 s, both as OTLP JSON. An endpoint that does not answer costs a log line
 * a minute and the batch it was sent; nothing waits for it.
 */
import type { Attributes, FinishedSpan } from "./telemetry.ts";

export interface Exporter {
  span(s: FinishedSpan): void;
  count(name: string, value: number, attributes: Attributes): void;
  record(name: string, ms: number, attributes: Attributes): void;
  flush(): Promise<void>;
  close(): Promise<void>;
}

export interface OtlpOptions {
  traces?: string;
  metrics?: string;
  headers: Record<string, string>;
  resource: Record<string, string>;
  onError: (why: string) => void;
  spanIntervalMs?: number;
  metricIntervalMs?: number;
}

const MAX_BATCH = 512;
/** Spans kept while the endpoint is away; older ones are dropped. */
const MAX_BUFFERED = 8_192;
/** Histogram bucket bounds, milliseconds. */
const BOUNDS = [1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000];
const KIND = { internal: 1, server: 2, client: 3 } as const;

type OtlpValue = { stringValue: string } | { intValue: string } | { doubleValue: number } | { boolValue: boolean };

function value(v: string | number | boolean): OtlpValue {
  if (typeof v === "string") return { stringValue: v };
  if (typeof v === "boolean") return { boolValue: v };
  return Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v };
}

function attributes(a: Attributes): Array<{ key: string; value: OtlpValue }> {
  return Object.entries(a)
    .filter((e): e is [string, string | number | boolean] => e[1] !== undefined)
    .map(([key, v]) => ({ key, value: value(v) }));
}

interface Series {
  attributes: Attributes;
  start: bigint;
  sum: number;
  count: number;
  buckets?: number[];
}

const nowNs = () => BigInt(Date.now()) * 1_000_000n;

export function otlpExporter(opts: OtlpOptions): Exporter {
  const resource = { attributes: attributes(opts.resource) };
  const scope = { name: "mcp-code-exec", version: opts.resource["service.version"] ?? "" };
  let spans: FinishedSpan[] = [];
  const sums = new Map<string, Map<string, Series>>();
  const histograms = new Map<string, Map<string, Series>>();
  let lastError = 0;
  const fail = (why: string) => {
    if (Date.now() - lastError < 60_000) return;
    lastError = Date.now();
    opts.onError(why);
  };
  const post = async (url: string, body: unknown) => {
    try {
      const r = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", ...opts.headers },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      });
      await r.body?.cancel().catch(() => {});
      if (!r.ok) fail(`the OTLP endpoint ${url} answered HTTP ${r.status}`);
    } catch (err) {
      fail(`the OTLP endpoint ${url} could not be reached: ${(err as Error).message}`);
    }
  };

  const sendSpans = async () => {
    if (!opts.traces || !spans.length) return;
    while (spans.length) {
      const batch = spans.slice(0, MAX_BATCH);
      spans = spans.slice(MAX_BATCH);
      await post(opts.traces, {
        resourceSpans: [
          {
            resource,
            scopeSpans: [
              {
                scope,
                spans: batch.map((s) => ({
                  traceId: s.traceId,
                  spanId: s.spanId,
                  ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}),
                  name: s.name,
                  kind: KIND[s.kind],
                  startTimeUnixNano: String(s.startNs),
                  endTimeUnixNano: String(s.endNs),
                  attributes: attributes(s.attributes),
                  status: s.error ? { code: 2, message: s.error.slice(0, 500) } : { code: 1 },
                })),
              },
            ],
          },
        ],
      });
    }
  };

  const sendMetrics = async () => {
    if (!opts.metrics || (!sums.size && !histograms.size)) return;
    const time = String(nowNs());
    const metrics = [
      ...[...sums].map(([name, series]) => ({
        name,
        unit: "1",
        sum: {
          aggregationTemporality: 2,
          isMonotonic: true,
          dataPoints: [...series.values()].map((s) => ({
            attributes: attributes(s.attributes),
            startTimeUnixNano: String(s.start),
            timeUnixNano: time,
            asInt: String(s.sum),
          })),
        },
      })),
      ...[...histograms].map(([name, series]) => ({
        name,
        unit: "ms",
        histogram: {
          aggregationTemporality: 2,
          dataPoints: [...series.values()].map((s) => ({
            attributes: attributes(s.attributes),
            startTimeUnixNano: String(s.start),
            timeUnixNano: time,
            count: String(s.count),
            sum: s.sum,
            bucketCounts: s.buckets!.map(String),
            explicitBounds: BOUNDS,
          })),
        },
      })),
    ];
    await post(opts.metrics, { resourceMetrics: [{ resource, scopeMetrics: [{ scope, metrics }] }] });
  };

  const series = (table: Map<string, Map<string, Series>>, name: string, a: Attributes, histogram: boolean): Series => {
    let byKey = table.get(name);
    if (!byKey) table.set(name, (byKey = new Map()));
    const key = JSON.stringify(Object.entries(a).sort());
    let s = byKey.get(key);
    if (!s)
      byKey.set(
        key,
        (s = { attributes: a, start: nowNs(), sum: 0, count: 0, ...(histogram ? { buckets: new Array(BOUNDS.length + 1).fill(0) } : {}) }),
      );
    return s;
  };

  const spanTimer = setInterval(() => void sendSpans(), opts.spanIntervalMs ?? 2_000);
  const metricTimer = setInterval(() => void sendMetrics(), opts.metricIntervalMs ?? 15_000);
  (spanTimer as { unref?: () => void }).unref?.();
  (metricTimer as { unref?: () => void }).unref?.();

  return {
    span(s) {
      if (!opts.traces) return;
      spans.push(s);
      if (spans.length > MAX_BUFFERED) spans = spans.slice(-MAX_BUFFERED);
      if (spans.length >= MAX_BATCH) void sendSpans();
    },
    count(name, v, a) {
      if (!opts.metrics) return;
      series(sums, name, a, false).sum += v;
    },
    record(name, ms, a) {
      if (!opts.metrics) return;
      const s = series(histograms, name, a, true);
      s.count++;
      s.sum += ms;
      const i = BOUNDS.findIndex((b) => ms <= b);
      s.buckets![i < 0 ? BOUNDS.length : i]!++;
    },
    flush: async () => {
      await Promise.all([sendSpans(), sendMetrics()]);
    },
    close: async () => {
      clearInterval(spanTimer);
      clearInterval(metricTimer);
      await Promise.all([sendSpans(), sendMetrics()]);
    },
  };
}
