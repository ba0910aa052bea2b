/**
 * A stand-in for the Anthropic Messages API on loopback (fake: no model service can run here), for
 * `claude -p` through ANTHROPIC_BASE_URL. Each request of the main conversation is answered with the
 * next scripted `run_python` call; the tool_result blocks the client sends back are recorded.
 */
import { isOurTool, type Seen, type Step } from "./scenario.ts";

export type Block = { type: string; [k: string]: unknown };
type Message = { role: string; content: string | Block[] };

export interface ModelStub {
  url: string;
  seen: Seen[];
  /** Every request body received, for debugging. */
  requests: unknown[];
  close(): void;
}

export function startAnthropicStub(steps: Step[]): ModelStub {
  const seen: Seen[] = [];
  const requests: unknown[] = [];
  const recorded = new Set<string>();
  const labels = new Map<string, string>();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      if (req.method !== "POST") return Response.json({});
      const body = (await req.json()) as { messages?: Message[]; tools?: Array<{ name: string }>; stream?: boolean; model?: string };
      requests.push({ path: url.pathname, body });
      if (url.pathname.endsWith("/count_tokens")) return Response.json({ input_tokens: 10 });
      const names = (body.tools ?? []).map((t) => t.name);
      const prompt = JSON.stringify(body);
      const deferred = /mcp__[\w-]+__run_python/.exec(prompt)?.[0];
      if (!names.some(isOurTool) && !(deferred && names.includes("ToolSearch")))
        return reply(body, [{ type: "text", text: "ok" }], "end_turn");
      let results = 0;
      for (const m of body.messages ?? []) {
        if (typeof m.content === "string") continue;
        for (const b of m.content) {
          const id = String(b.tool_use_id);
          if (b.type !== "tool_result" || !labels.has(id)) continue;
          results++;
          if (recorded.has(id)) continue;
          recorded.add(id);
          seen.push(toSeen(labels.get(id)!, b));
        }
      }
      const step = steps[results];
      if (!step) return reply(body, [{ type: "text", text: "done" }], "end_turn");
      // Claude Code defers MCP tools behind ToolSearch: load ours first, as a model would.
      const tool = names.find(isOurTool) ?? (prompt.includes('"tool_reference"') ? deferred : undefined);
      if (!tool)
        return reply(
          body,
          [{ type: "tool_use", id: `toolu_search_${results}`, name: "ToolSearch", input: { query: `select:${deferred}`, max_results: 1 } }],
          "tool_use",
        );
      const id = `toolu_${String(results).padStart(3, "0")}`;
      labels.set(id, step.label);
      return reply(body, [{ type: "tool_use", id, name: tool, input: step.args }], "tool_use");
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, seen, requests, close: () => server.stop(true) };
}

/** A tool result as the model read it: its text, its images' types, whether it was an error. */
export function toSeen(label: string, b: Block): Seen {
  const content = b.content;
  const blocks: Block[] = typeof content === "string" ? [{ type: "text", text: content }] : ((content as Block[] | undefined) ?? []);
  const text = blocks
    .filter((c) => c.type === "text")
    .map((c) => String(c.text))
    .join("\n");
  const images = blocks.filter((c) => c.type === "image").map((c) => String((c.source as { media_type?: string })?.media_type ?? "image"));
  return { label, text, images, isError: b.is_error === true, raw: b };
}

/** A non-streaming answer, or the same as server-sent events when the client streams. */
export function reply(body: { stream?: boolean; model?: string }, content: Block[], stopReason: string): Response {
  const message = {
    id: `msg_${crypto.randomUUID()}`,
    type: "message",
    role: "assistant",
    model: body.model ?? "claude-stub",
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 1 },
  };
  if (!body.stream) return Response.json(message);
  const events: Array<[string, unknown]> = [
    ["message_start", { type: "message_start", message: { ...message, content: [], stop_reason: null } }],
  ];
  content.forEach((c, index) => {
    if (c.type === "tool_use") {
      events.push(["content_block_start", { type: "content_block_start", index, content_block: { ...c, input: {} } }]);
      events.push([
        "content_block_delta",
        { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: JSON.stringify(c.input) } },
      ]);
    } else {
      events.push(["content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } }]);
      events.push(["content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: c.text } }]);
    }
    events.push(["content_block_stop", { type: "content_block_stop", index }]);
  });
  events.push([
    "message_delta",
    { type: "message_delta", delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 1 } },
  ]);
  events.push(["message_stop", { type: "message_stop" }]);
  const text = events.map(([e, d]) => `event: ${e}\ndata: ${JSON.stringify(d)}\n\n`).join("");
  return new Response(text, { headers: { "content-type": "text/event-stream" } });
}
