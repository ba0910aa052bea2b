/**
 * A stand-in for the Anthropic Messages API that holds several conversations at once (fake: no model
 * service can run here), for clients that run many conversations through one MCP connection
 * (`opencode serve`). A request belongs to the conversation whose name starts its first user message;
 * each user message opens a turn, and the conversation's script says what the model calls in each turn.
 * A step may depend on what the model has read so far (the system prompt, earlier results), as a real
 * model's next call does: that is how a scripted model follows our instructions and passes a handle on.
 */
import type { ModelStub } from "./anthropic-stub.ts";
import { isOurTool, type Seen, type Step } from "./scenario.ts";

type Block = { type: string; [k: string]: unknown };
type Message = { role: string; content: string | Block[] };

/** What the model knows when it makes a call: its system prompt and the results of its conversation so far. */
export interface ModelView {
  system: string;
  seen: Seen[];
}

export type ScriptedStep = { label: string; args: (view: ModelView) => Step["args"] };

export interface ConversationsStub extends ModelStub {
  /** What each conversation's model got, by conversation name. */
  byConversation: Map<string, Seen[]>;
}

/** `scripts[name][turn]`: the calls the model makes in that turn of that conversation, one after another. */
export function startConversationsStub(scripts: Record<string, ScriptedStep[][]>): ConversationsStub {
  const byConversation = new Map<string, Seen[]>();
  const seen: Seen[] = [];
  const requests: unknown[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      if (req.method !== "POST") return Response.json({});
      const body = (await req.json()) as { system?: unknown; messages?: Message[]; tools?: Array<{ name: string }>; model?: string };
      requests.push(body);
      const tool = (body.tools ?? []).map((t) => t.name).find(isOurTool);
      const messages = body.messages ?? [];
      // `opencode run` quotes the prompt it was given.
      const opening = firstText(messages[0]).replace(/^"/, "");
      const name = Object.keys(scripts).find((n) => opening.startsWith(n));
      // Other requests (a title for the session, a summary) get a plain answer.
      if (!tool || name === undefined) return reply(body, [{ type: "text", text: "ok" }], "end_turn");
      const own = byConversation.get(name) ?? [];
      byConversation.set(name, own);
      // Turns are the user messages that are not tool results; results are counted within the last turn.
      let turn = -1;
      let inTurn = 0;
      for (const m of messages) {
        if (typeof m.content === "string" || m.content.every((b) => b.type !== "tool_result")) {
          if (m.role === "user") {
            turn++;
            inTurn = 0;
          }
          continue;
        }
        for (const b of m.content) {
          if (b.type !== "tool_result") continue;
          const id = String(b.tool_use_id);
          const label = /^toolu_\d+_\d+_(.+)$/.exec(id)?.[1];
          if (label === undefined) continue;
          inTurn++;
          if (!own.some((s) => (s.raw as Block).tool_use_id === id)) {
            const s = toSeen(label, b);
            own.push(s);
            seen.push({ ...s, label: `${name}/${label}` });
          }
        }
      }
      const step = scripts[name]![turn]?.[inTurn];
      if (!step) return reply(body, [{ type: "text", text: "done" }], "end_turn");
      const system = typeof body.system === "string" ? body.system : firstText({ role: "system", content: (body.system as Block[]) ?? [] });
      const args = step.args({ system, seen: own });
      const id = `toolu_${turn}_${inTurn}_${step.label}`;
      return reply(body, [{ type: "tool_use", id, name: tool, input: args }], "tool_use");
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, seen, requests, byConversation, close: () => server.stop(true) };
}

function firstText(m: Message | undefined): string {
  if (!m) return "";
  if (typeof m.content === "string") return m.content;
  return m.content
    .filter((b) => b.type === "text")
    .map((b) => String(b.text))
    .join("\n");
}

function toSeen(label: string, b: Block): Seen {
  const blocks: Block[] = typeof b.content === "string" ? [{ type: "text", text: b.content }] : ((b.content as Block[] | undefined) ?? []);
  const text = blocks
    .filter((c) => c.type === "text")
    .map((c) => String(c.text))
    .join("\n");
  const images = blocks.filter((c) => c.type === "image").map((c) => String((c.source as { media_type?: string })?.media_type ?? "image"));
  return { label, text, images, isError: b.is_error === true, raw: b };
}

/** A non-streaming answer, or the same as server-sent events when the client streams. */
function reply(body: { stream?: boolean; model?: string }, content: Block[], stopReason: string): Response {
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
    const start = c.type === "tool_use" ? { ...c, input: {} } : { type: "text", text: "" };
    const delta =
      c.type === "tool_use" ? { type: "input_json_delta", partial_json: JSON.stringify(c.input) } : { type: "text_delta", text: c.text };
    events.push(["content_block_start", { type: "content_block_start", index, content_block: start }]);
    events.push(["content_block_delta", { type: "content_block_delta", index, delta }]);
    events.push(["content_block_stop", { type: "content_block_stop", index }]);
  });
  events.push([
    "message_delta",
    { type: "message_delta", delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 1 } },
  ]);
  events.push(["message_stop", { type: "message_stop" }]);
  return new Response(events.map(([e, d]) => `event: ${e}\ndata: ${JSON.stringify(d)}\n\n`).join(""), {
    headers: { "content-type": "text/event-stream" },
  });
}
