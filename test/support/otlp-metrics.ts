/**
 * Where the receiver's metrics come out: Jaeger stores traces only, so its collector pipeline forwards
 * every metric its OTLP receiver accepted to this sink (the collector's own otlphttp exporter, JSON
 * encoding) on a loopback port the test owns. What arrives here was parsed and re-encoded by the real
 * receiver, so a malformed export from the code under test never reaches it (the receiver answers
 * 400 instead). Arrival is an event: `waitFor` resolves when an export makes the condition true.
 */
import { z } from "zod";
import { attributes, KeyValueSchema, micros, parseOrExplain, ResourceSchema, ScopeSchema, serviceName } from "./otlp-json.ts";

export interface ReceivedPoint {
  attributes: Record<string, unknown>;
  startUs?: number;
  timeUs: number;
  /** Sum and gauge points. */
  value?: number;
  /** Histogram points. */
  count?: number;
  sum?: number;
  min?: number;
  max?: number;
  bucketCounts?: number[];
  explicitBounds?: number[];
}

export interface ReceivedMetric {
  service?: string;
  resource: Record<string, unknown>;
  scope: { name?: string; version?: string };
  name: string;
  unit?: string;
  description?: string;
  type: "sum" | "gauge" | "histogram" | "exponentialHistogram" | "summary";
  /** OTLP AggregationTemporality: 1 delta, 2 cumulative. */
  temporality?: number;
  monotonic?: boolean;
  points: ReceivedPoint[];
}

const Num = z.union([z.number(), z.string()]).transform(Number);
const PointSchema = z.object({
  attributes: z.array(KeyValueSchema).optional(),
  startTimeUnixNano: z.union([z.string(), z.number()]).optional(),
  timeUnixNano: z.union([z.string(), z.number()]),
  asDouble: Num.optional(),
  asInt: Num.optional(),
  count: Num.optional(),
  sum: Num.optional(),
  min: Num.optional(),
  max: Num.optional(),
  bucketCounts: z.array(Num).optional(),
  explicitBounds: z.array(Num).optional(),
});
const DataSchema = z.object({
  dataPoints: z.array(PointSchema).optional(),
  aggregationTemporality: z.number().optional(),
  isMonotonic: z.boolean().optional(),
});
const MetricSchema = z.object({
  name: z.string(),
  unit: z.string().optional(),
  description: z.string().optional(),
  sum: DataSchema.optional(),
  gauge: DataSchema.optional(),
  histogram: DataSchema.optional(),
  exponentialHistogram: DataSchema.optional(),
  summary: DataSchema.optional(),
});
export const MetricsDataSchema = z.object({
  resourceMetrics: z
    .array(
      z.object({
        resource: ResourceSchema,
        scopeMetrics: z.array(z.object({ scope: ScopeSchema, metrics: z.array(MetricSchema).optional() })).optional(),
      }),
    )
    .optional(),
});

const TYPES = ["sum", "gauge", "histogram", "exponentialHistogram", "summary"] as const;

/** One ExportMetricsServiceRequest as flat metrics, one per (resource, scope, metric). */
export function flattenMetrics(body: unknown): ReceivedMetric[] {
  const data = parseOrExplain(MetricsDataSchema, body, "metrics export from the collector");
  const out: ReceivedMetric[] = [];
  for (const rm of data.resourceMetrics ?? []) {
    for (const sm of rm.scopeMetrics ?? []) {
      for (const m of sm.metrics ?? []) {
        const type = TYPES.find((t) => m[t] !== undefined);
        if (!type) throw new Error(`[otlp-receiver] metric ${m.name} has no data (none of ${TYPES.join(", ")})`);
        const data = m[type] ?? {};
        out.push({
          service: serviceName(rm.resource),
          resource: attributes(rm.resource?.attributes),
          scope: { name: sm.scope?.name, version: sm.scope?.version },
          name: m.name,
          unit: m.unit || undefined,
          description: m.description || undefined,
          type,
          temporality: data.aggregationTemporality,
          monotonic: data.isMonotonic,
          points: (data.dataPoints ?? []).map((p) => ({
            attributes: attributes(p.attributes),
            startUs: p.startTimeUnixNano === undefined ? undefined : micros(p.startTimeUnixNano),
            timeUs: micros(p.timeUnixNano),
            value: p.asDouble ?? p.asInt,
            count: p.count,
            sum: p.sum,
            min: p.min,
            max: p.max,
            bucketCounts: p.bucketCounts,
            explicitBounds: p.explicitBounds,
          })),
        });
      }
    }
  }
  return out;
}

export interface MetricsSink {
  /** http://127.0.0.1:PORT, for the collector's otlphttp exporter. */
  url: string;
  /** Everything received so far; throws if an export could not be read. */
  received(): ReceivedMetric[];
  waitFor(until: (all: ReceivedMetric[]) => boolean, timeoutMs: number, what: string): Promise<ReceivedMetric[]>;
  close(): void;
}

export function startMetricsSink(): MetricsSink {
  const all: ReceivedMetric[] = [];
  const waiters = new Set<() => void>();
  let failure: Error | undefined;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      if (req.method !== "POST" || new URL(req.url).pathname !== "/v1/metrics") return new Response("not found", { status: 404 });
      let bytes = new Uint8Array(await req.arrayBuffer());
      if (req.headers.get("content-encoding") === "gzip") bytes = Bun.gunzipSync(bytes);
      try {
        all.push(...flattenMetrics(JSON.parse(new TextDecoder().decode(bytes))));
      } catch (e) {
        failure = e as Error; // surfaced by received() and waitFor: the collector would only log an error
      }
      for (const wake of waiters) wake();
      return Response.json({});
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    received() {
      if (failure) throw failure;
      return [...all];
    },
    waitFor(until, timeoutMs, what) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (failure) return done(() => reject(failure));
          if (until(all)) done(() => resolve([...all]));
        };
        const timer = setTimeout(
          () => done(() => reject(new Error(`[otlp-receiver] no ${what} within ${timeoutMs} ms; received: ${names(all)}`))),
          timeoutMs,
        );
        const done = (settle: () => void) => {
          clearTimeout(timer);
          waiters.delete(check);
          settle();
        };
        waiters.add(check);
        check();
      });
    },
    close: () => void server.stop(true),
  };
}

function names(all: ReceivedMetric[]): string {
  return all.length ? [...new Set(all.map((m) => `${m.service ?? "?"}/${m.name}`))].join(", ") : "nothing";
}
