/**
 * The OTLP receiver support against the real receiver (Jaeger v2 built by scripts/otlp-receiver.sh):
 * exports are posted with plain fetch as OTLP/HTTP JSON, the way an exporter sends them, and read back
 * through the support. The cases at the end pin what the receiver insists on in OTLP JSON, so an
 * exporter that gets an id encoding wrong fails here first.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { type OtlpReceiver, receiverBinary, startOtlpReceiver } from "./otlp-receiver.ts";

const hex = (bytes: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("hex");
const nanos = (ms: number) => `${BigInt(ms) * 1_000_000n}`;
const resource = (service: string) => ({ attributes: [{ key: "service.name", value: { stringValue: service } }] });

async function post(r: OtlpReceiver, signal: "traces" | "metrics", body: unknown, contentType = "application/json") {
  const res = await fetch(`${r.endpoint}/v1/${signal}`, {
    method: "POST",
    headers: { "content-type": contentType },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
}

function twoSpans(service: string, traceId: string, parentId: string, childId: string) {
  const t0 = Date.now();
  return {
    resourceSpans: [
      {
        resource: resource(service),
        scopeSpans: [
          {
            scope: { name: "otlp-receiver-test", version: "1.0.0" },
            spans: [
              {
                traceId,
                spanId: parentId,
                name: "tools/call run_python",
                kind: 2,
                startTimeUnixNano: nanos(t0),
                endTimeUnixNano: nanos(t0 + 250),
                attributes: [
                  { key: "mcp.tool.name", value: { stringValue: "run_python" } },
                  { key: "mcp.session.runs", value: { intValue: "3" } },
                  { key: "mcp.cached", value: { boolValue: true } },
                ],
                status: { code: 1 },
              },
              {
                traceId,
                spanId: childId,
                parentSpanId: parentId,
                name: "sandbox.exec",
                kind: 1,
                startTimeUnixNano: nanos(t0 + 10),
                endTimeUnixNano: nanos(t0 + 210),
                attributes: [
                  { key: "sandbox.engine", value: { stringValue: "podman" } },
                  { key: "sandbox.cpu_seconds", value: { doubleValue: 0.5 } },
                  { key: "sandbox.argv", value: { arrayValue: { values: [{ stringValue: "python3" }, { stringValue: "-c" }] } } },
                ],
                status: { code: 2, message: "exit 1" },
              },
            ],
          },
        ],
      },
    ],
  };
}

let receiver: OtlpReceiver;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

describe("otlp receiver (real Jaeger v2)", () => {
  test("a parent and a child span posted as OTLP/HTTP JSON come back with the link, attributes and status", async () => {
    const service = `otlp-test-${hex(4)}`;
    const [traceId, parentId, childId] = [hex(16), hex(8), hex(8)];
    // An empty partialSuccess: nothing was rejected.
    expect(await post(receiver, "traces", twoSpans(service, traceId, parentId, childId))).toEqual({
      status: 200,
      text: '{"partialSuccess":{}}',
    });

    const spans = await receiver.spans(service);
    expect(spans.map((s) => s.name)).toEqual(["tools/call run_python", "sandbox.exec"]);
    const [parent, child] = spans;
    expect(parent).toMatchObject({ traceId, spanId: parentId, parentSpanId: undefined, kind: 2, durationUs: 250_000 });
    expect(parent?.attributes).toEqual({ "mcp.tool.name": "run_python", "mcp.session.runs": 3, "mcp.cached": true });
    expect(parent?.status).toEqual({ code: 1, message: undefined });
    expect(parent?.resource["service.name"]).toBe(service);
    expect(parent?.scope).toEqual({ name: "otlp-receiver-test", version: "1.0.0" });
    expect(child).toMatchObject({ traceId, spanId: childId, parentSpanId: parentId, kind: 1, durationUs: 200_000 });
    expect(child?.attributes).toEqual({ "sandbox.engine": "podman", "sandbox.cpu_seconds": 0.5, "sandbox.argv": ["python3", "-c"] });
    expect(child?.status).toEqual({ code: 2, message: "exit 1" });
    expect((child?.startUs ?? 0) - (parent?.startUs ?? 0)).toBe(10_000);
    // Another service's spans are not mixed in.
    expect(await receiver.spans(`${service}-other`)).toEqual([]);
  });

  test("metrics posted as OTLP/HTTP JSON reach the sink with their values, in the same export's answer", async () => {
    const service = `otlp-test-${hex(4)}`;
    const t0 = Date.now();
    const point = (extra: object) => ({ startTimeUnixNano: nanos(t0), timeUnixNano: nanos(t0 + 1000), ...extra });
    const body = {
      resourceMetrics: [
        {
          resource: resource(service),
          scopeMetrics: [
            {
              scope: { name: "otlp-receiver-test" },
              metrics: [
                {
                  name: "mcp.runs",
                  unit: "{run}",
                  sum: {
                    aggregationTemporality: 2,
                    isMonotonic: true,
                    dataPoints: [point({ asInt: "7", attributes: [{ key: "engine", value: { stringValue: "docker" } }] })],
                  },
                },
                {
                  name: "mcp.run.duration",
                  unit: "s",
                  histogram: {
                    aggregationTemporality: 2,
                    dataPoints: [
                      point({ count: "3", sum: 1.5, bucketCounts: ["1", "2", "0"], explicitBounds: [0.1, 1], min: 0.05, max: 0.9 }),
                    ],
                  },
                },
              ],
            },
          ],
        },
      ],
    };
    expect(await post(receiver, "metrics", body)).toEqual({ status: 200, text: '{"partialSuccess":{}}' });
    // No queue in the pipeline: the sink had the export before the receiver answered.
    const metrics = await receiver.metrics(service);
    expect(metrics.map((m) => [m.name, m.type, m.unit, m.temporality])).toEqual([
      ["mcp.runs", "sum", "{run}", 2],
      ["mcp.run.duration", "histogram", "s", 2],
    ]);
    expect(metrics[0]?.monotonic).toBe(true);
    expect(metrics[0]?.points).toMatchObject([{ value: 7, attributes: { engine: "docker" } }]);
    expect(metrics[1]?.points).toMatchObject([
      { count: 3, sum: 1.5, bucketCounts: [1, 2, 0], explicitBounds: [0.1, 1], min: 0.05, max: 0.9 },
    ]);
    expect(await receiver.waitForMetrics(service, (m) => m.length === 2, 1000)).toHaveLength(2);
  });

  test("waitForSpans resolves once spans posted after it started are stored", async () => {
    const service = `otlp-test-${hex(4)}`;
    const waiting = receiver.waitForSpans(service, (spans) => spans.length === 2);
    await post(receiver, "traces", twoSpans(service, hex(16), hex(8), hex(8)));
    expect((await waiting).map((s) => s.name)).toEqual(["tools/call run_python", "sandbox.exec"]);
  });

  test("every port the receiver listens on is bound to 127.0.0.1", () => {
    const inodes = new Set<string>();
    for (const fd of readdirSync(`/proc/${receiver.pid}/fd`)) {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkOrEmpty(`/proc/${receiver.pid}/fd/${fd}`));
      if (m?.[1]) inodes.add(m[1]);
    }
    const listening: string[] = [];
    for (const table of ["tcp", "tcp6", "udp", "udp6"]) {
      for (const line of readFileSync(`/proc/${receiver.pid}/net/${table}`, "utf8").trim().split("\n").slice(1)) {
        const f = line.trim().split(/\s+/);
        const [local, state, inode] = [f[1] ?? "", f[3], f[9] ?? ""];
        // TCP LISTEN is 0A; an unconnected UDP socket (07) is a listener too.
        if (inodes.has(inode) && (state === "0A" || (table.startsWith("udp") && state === "07"))) listening.push(`${table} ${local}`);
      }
    }
    expect(listening.length).toBeGreaterThanOrEqual(3); // OTLP HTTP, query HTTP, health at least
    // 0100007F is 127.0.0.1 as /proc/net/tcp prints it (little-endian hex).
    expect(listening.filter((l) => !/^tcp 0100007F:/.test(l))).toEqual([]);
  });
});

// What an exporter must get right: the receiver's answers, measured here, so a change of receiver or of
// its version that alters them shows up in this file.
describe("what the receiver insists on in OTLP/HTTP JSON", () => {
  const span = (service: string, over: Record<string, unknown>) => {
    const body = twoSpans(service, hex(16), hex(8), hex(8));
    const spans = body.resourceSpans[0]?.scopeSpans[0]?.spans ?? [];
    Object.assign(spans[1] ?? {}, over);
    return body;
  };

  test("ids are hex, not base64 as protobuf's own JSON mapping has them: a base64 id fails the whole request", async () => {
    const service = `otlp-test-${hex(4)}`;
    const base64 = Buffer.from(hex(8), "hex").toString("base64");
    const res = await post(receiver, "traces", span(service, { spanId: base64 }));
    expect(res.status).toBe(400);
    expect(res.text).toContain("ID.UnmarshalJSONIter: length mismatch");
    expect(await receiver.spans(service)).toEqual([]); // the valid parent in the same request is gone too
  });

  test("a parentSpanId of the wrong length fails the request; an empty one means a root span", async () => {
    const bad = `otlp-test-${hex(4)}`;
    expect((await post(receiver, "traces", span(bad, { parentSpanId: hex(4) }))).status).toBe(400);
    const root = `otlp-test-${hex(4)}`;
    expect((await post(receiver, "traces", span(root, { parentSpanId: "" }))).status).toBe(200);
    expect((await receiver.spans(root)).map((s) => s.parentSpanId)).toEqual([undefined, undefined]);
  });

  test("a span without a traceId is accepted (200) but never stored: the loss is silent", async () => {
    const service = `otlp-test-${hex(4)}`;
    const body = twoSpans(service, hex(16), hex(8), hex(8));
    for (const s of body.resourceSpans[0]?.scopeSpans[0]?.spans ?? []) s.traceId = "";
    expect((await post(receiver, "traces", body)).status).toBe(200);
    expect(await receiver.spans(service)).toEqual([]);
  });

  test("the content type must be application/json (or application/x-protobuf): anything else is 415", async () => {
    const res = await post(receiver, "traces", twoSpans(`otlp-test-${hex(4)}`, hex(16), hex(8), hex(8)), "text/plain");
    expect(res.status).toBe(415);
  });
});

describe("otlp receiver support without the binary", () => {
  test("starting it names the script that builds the binary", async () => {
    const before = process.env.MCP_CODE_EXEC_CACHE;
    process.env.MCP_CODE_EXEC_CACHE = join(process.env.TMPDIR ?? "/tmp", `no-cache-${hex(4)}`);
    try {
      expect(receiverBinary()).toStartWith(process.env.MCP_CODE_EXEC_CACHE);
      await expect(startOtlpReceiver()).rejects.toThrow("is not built: run `bash scripts/otlp-receiver.sh`");
    } finally {
      if (before === undefined) delete process.env.MCP_CODE_EXEC_CACHE;
      else process.env.MCP_CODE_EXEC_CACHE = before;
    }
  });
});

function readlinkOrEmpty(path: string): string {
  try {
    return readlinkSync(path);
  } catch {
    return ""; // the fd closed between readdir and readlink
  }
}
