/**
 * Reading OTLP JSON (the protobuf JSON mapping: camelCase names, int64 as strings, ids as hex) into flat
 * values a test can assert on. Used on what the receiver hands back: Jaeger's /api/v3 traces and the
 * metrics the collector forwards to the test's sink. zod at the boundary, so a shape we did not expect
 * is an error that shows the path, not an `undefined` deep in a test.
 */
import { z } from "zod";

/** An OTLP AnyValue: exactly one member is set (none for an empty value). */
export type AnyValue = {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number | string;
  bytesValue?: string;
  arrayValue?: { values?: AnyValue[] };
  kvlistValue?: { values?: KeyValue[] };
};
export type KeyValue = { key: string; value?: AnyValue };

const AnyValueSchema: z.ZodType<AnyValue> = z.lazy(() =>
  z.object({
    stringValue: z.string().optional(),
    boolValue: z.boolean().optional(),
    intValue: z.union([z.string(), z.number()]).optional(),
    doubleValue: z.union([z.number(), z.string()]).optional(),
    bytesValue: z.string().optional().describe("base64"),
    arrayValue: z.object({ values: z.array(AnyValueSchema).optional() }).optional(),
    kvlistValue: z.object({ values: z.array(KeyValueSchema).optional() }).optional(),
  }),
);
export const KeyValueSchema: z.ZodType<KeyValue> = z.lazy(() => z.object({ key: z.string(), value: AnyValueSchema.optional() }));
const AttributesSchema = z.array(KeyValueSchema).optional().describe("OTLP attributes (KeyValue list)");
/**
 * Nanoseconds since the epoch: a decimal string in OTLP JSON (fixed64), a number from some encoders.
 * Jaeger's answer leaves zero values out (a span sent without a time, id or name comes back without
 * that field), so those default to zero here and a test sees the empty value instead of a parse error.
 */
const NanosSchema = z.union([z.string(), z.number()]).default("0").describe("fixed64 nanoseconds since the epoch");

export const ResourceSchema = z.object({ attributes: AttributesSchema }).optional();
export const ScopeSchema = z.object({ name: z.string().optional(), version: z.string().optional() }).optional();

export const SpanSchema = z.object({
  traceId: z.string().default("").describe("32 hex digits"),
  spanId: z.string().default("").describe("16 hex digits"),
  parentSpanId: z.string().optional().describe("16 hex digits, absent or empty for a root span"),
  name: z.string().default(""),
  kind: z.number().optional(),
  startTimeUnixNano: NanosSchema,
  endTimeUnixNano: NanosSchema,
  attributes: AttributesSchema,
  status: z.object({ code: z.number().optional(), message: z.string().optional() }).optional(),
});

export const TracesDataSchema = z.object({
  resourceSpans: z
    .array(
      z.object({
        resource: ResourceSchema,
        scopeSpans: z.array(z.object({ scope: ScopeSchema, spans: z.array(SpanSchema).optional() })).optional(),
      }),
    )
    .optional(),
});

/** An AnyValue as a plain JS value: int64 becomes a number (a string past 2^53), bytes stay base64. */
export function anyValue(v: AnyValue | undefined): unknown {
  if (!v) return undefined;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) {
    const n = Number(v.intValue);
    return Number.isSafeInteger(n) ? n : String(v.intValue);
  }
  if (v.doubleValue !== undefined) return Number(v.doubleValue);
  if (v.bytesValue !== undefined) return v.bytesValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(anyValue);
  if (v.kvlistValue) return attributes(v.kvlistValue.values);
  return undefined;
}

export function attributes(list: KeyValue[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of list ?? []) out[kv.key] = anyValue(kv.value);
  return out;
}

/** Nanoseconds (string or number) to whole microseconds, without losing precision on the way. */
export function micros(nanos: string | number): number {
  return Number(BigInt(typeof nanos === "number" ? Math.trunc(nanos) : nanos) / 1000n);
}

/** end - start in whole microseconds, computed on the nanoseconds so no rounding is doubled. */
export function durationMicros(start: string | number, end: string | number): number {
  const ns = (v: string | number) => BigInt(typeof v === "number" ? Math.trunc(v) : v);
  return Number((ns(end) - ns(start)) / 1000n);
}

/** The resource's `service.name`, which both Jaeger and our filters key spans and metrics by. */
export function serviceName(resource: z.infer<typeof ResourceSchema>): string | undefined {
  const name = attributes(resource?.attributes)["service.name"];
  return typeof name === "string" ? name : undefined;
}

/** Parses with a schema and says where the receiver's answer differed from what the support expects. */
export function parseOrExplain<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const problems = r.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ");
  throw new Error(`[otlp-receiver] unexpected ${what}: ${problems}\n${JSON.stringify(value).slice(0, 2000)}`);
}
