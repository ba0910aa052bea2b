/**
 * OpenTelemetry from the compiled bridge (`serve --http`) to a real OTLP receiver (Jaeger v2, built by
 * scripts/otlp-receiver.sh): a call made inside a client's trace (W3C traceparent in `_meta`) gives a
 * server span under it, a sandbox-start span and a proxied-call span under that, and the upstream
 * server is handed the proxied call's own traceparent; counters and a duration histogram arrive too.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ENGINES, ROOT } from "../support/env.ts";
import { modernPost, startHttpBridge } from "../support/http-bridge.ts";
import { startOtlpReceiver, type OtlpReceiver } from "../support/otlp-receiver.ts";

const FIXTURE = join(ROOT, "test", "fixtures", "hostile-upstream.ts");
const SERVICE = `mcx-otel-${crypto.randomUUID().slice(0, 8)}`;
const TOKEN = `alice-${crypto.randomUUID()}`;
const CLIENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN = "00f067aa0ba902b7";

let receiver: OtlpReceiver;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
}, 60_000);
afterAll(() => receiver?.close());

test("a call inside a client's trace: server span, sandbox start and proxied call under it; the upstream gets the traceparent; metrics", async () => {
  const home = mkdtempSync(join(tmpdir(), "mcx-otel-"));
  mkdirSync(join(home, ".config", "mcp", "servers"), { recursive: true });
  writeFileSync(
    join(home, ".config", "mcp", "servers", "hostile.json"),
    JSON.stringify({ mcpServers: { hostile: { command: process.execPath, args: [FIXTURE] } } }),
  );
  const b = await startHttpBridge({
    HOME: home,
    MCP_BRIDGE_STATE_DIR: join(home, "state"),
    MCP_BRIDGE_RUNTIME: ENGINES[0]!,
    MCP_BRIDGE_STRUCTURED_CONTENT: "1",
    MCP_BRIDGE_HTTP_TOKENS: `alice=${TOKEN}`,
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
    OTEL_SERVICE_NAME: SERVICE,
  });
  const r = await modernPost(b.url, TOKEN, "tools/call", {
    name: "run_python",
    arguments: { code: "(await mcp_hostile.echo_meta())['meta']", servers: ["hostile"] },
    _meta: { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` },
  });
  expect(r.body.result.isError).toBe(false);
  const upstreamMeta = String(r.body.result.structuredContent?.value);
  // The bridge flushes what it holds when it stops.
  expect(await b.close()).toBe(0);
  const spans = await receiver.waitForSpans(SERVICE, (s) => s.length >= 3);
  const byName = (n: string) => spans.find((s) => s.name === n)!;
  const call = byName("tools/call run_python");
  const start = byName("sandbox start");
  const proxied = byName("tools/call hostile/echo_meta");
  expect(call).toMatchObject({ traceId: CLIENT_TRACE, parentSpanId: CLIENT_SPAN, kind: 2 });
  expect(call.attributes).toMatchObject({ "gen_ai.tool.name": "run_python", "enduser.id": "token:alice", "mcp_code_exec.outcome": "ok" });
  expect(call.attributes["mcp_code_exec.session"]).toMatch(/^s_/);
  expect(start).toMatchObject({ traceId: CLIENT_TRACE, parentSpanId: call.spanId });
  expect(proxied).toMatchObject({ traceId: CLIENT_TRACE, parentSpanId: call.spanId, kind: 3 });
  expect(proxied.attributes).toMatchObject({
    "mcp_code_exec.server": "hostile",
    "mcp_code_exec.decision": "allow",
    "mcp_code_exec.outcome": "ok",
  });
  // The upstream server was handed the proxied call's own span as its parent.
  expect(upstreamMeta).toContain(`'traceparent': '00-${CLIENT_TRACE}-${proxied.spanId}-01'`);
  const metrics = await receiver.waitForMetrics(SERVICE, (m) => m.some((x) => x.name === "mcp_code_exec.run.duration"));
  const runs = metrics.filter((m) => m.name === "mcp_code_exec.runs").at(-1)!;
  expect(runs).toMatchObject({ type: "sum", monotonic: true, temporality: 2 });
  expect(runs.points.some((p) => p.attributes.outcome === "ok" && (p.value ?? 0) >= 1)).toBe(true);
  expect(metrics.find((m) => m.name === "mcp_code_exec.run.duration")).toMatchObject({ type: "histogram", unit: "ms" });
}, 120_000);
