/**
 * A stand-in for an OpenAI Responses-compatible provider on loopback (fake: no model service can run
 * here), for `codex exec` through a `model_providers` entry in Codex's config.toml. The main
 * conversation gets the scripted `run_python` calls as function_call items; the function_call_output
 * items Codex sends back are recorded.
 */
import type { ModelStub } from "./anthropic-stub.ts";
import { isOurTool, type Seen, type Step } from "./scenario.ts";

type Item = { type?: string; call_id?: string; name?: string; output?: unknown; [k: string]: unknown };
type Tool = { type: string; name?: string; tools?: Tool[] };

export function startResponsesStub(steps: Step[]): ModelStub {
  const seen: Seen[] = [];
  const requests: unknown[] = [];
  const labels = new Map<string, string>();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      if (req.method !== "POST") return Response.json({ data: [], models: [] });
      const body = (await req.json()) as { input?: Item[]; tools?: Tool[] };
      requests.push({ path: url.pathname, body });
      const tool = findTool(body.tools ?? []);
      if (!tool) return reply([{ type: "message", role: "assistant", content: [{ type: "output_text", text: "ok" }] }]);
      let results = 0;
      for (const item of body.input ?? []) {
        if (item.type !== "function_call_output" || !labels.has(String(item.call_id))) continue;
        results++;
        if (results > seen.length) seen.push(toSeen(labels.get(String(item.call_id))!, item));
      }
      const step = steps[results];
      if (!step) return reply([{ type: "message", role: "assistant", content: [{ type: "output_text", text: "done" }] }]);
      const callId = `call_${String(results).padStart(3, "0")}`;
      labels.set(callId, step.label);
      return reply([{ type: "function_call", ...tool, arguments: JSON.stringify(step.args), call_id: callId }]);
    },
  });
  return { url: `http://127.0.0.1:${server.port}/v1`, seen, requests, close: () => server.stop(true) };
}

/** Our tool, at top level or inside a namespace (Codex groups each MCP server's tools as `mcp__<server>`). */
function findTool(tools: Tool[]): { name: string; namespace?: string } | undefined {
  for (const t of tools) {
    if (t.type === "function" && t.name && isOurTool(t.name)) return { name: t.name };
    const inner = t.tools?.find((f) => f.name && isOurTool(f.name));
    if (inner) return { name: inner.name!, namespace: t.name };
  }
  return undefined;
}

function toSeen(label: string, item: Item): Seen {
  const out = item.output;
  const parts: Array<{ type: string; text?: string; image_url?: string }> =
    typeof out === "string" ? [{ type: "input_text", text: out }] : ((out as never[]) ?? []);
  const text = parts
    .filter((p) => p.type === "input_text" || p.type === "output_text")
    .map((p) => p.text ?? "")
    .join("\n");
  const images = parts.filter((p) => p.type === "input_image").map((p) => /^data:([^;]+);/.exec(p.image_url ?? "")?.[1] ?? "image");
  return { label, text, images, isError: false, raw: item };
}

function reply(output: Item[]): Response {
  const id = `resp_${crypto.randomUUID()}`;
  const events: unknown[] = [{ type: "response.created", response: { id } }];
  output.forEach((item, output_index) => events.push({ type: "response.output_item.done", output_index, item }));
  events.push({
    type: "response.completed",
    response: {
      id,
      output,
      usage: {
        input_tokens: 1,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 1,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 2,
      },
    },
  });
  const text = events.map((e) => `event: ${(e as { type: string }).type}\ndata: ${JSON.stringify(e)}\n\n`).join("");
  return new Response(text, { headers: { "content-type": "text/event-stream" } });
}
