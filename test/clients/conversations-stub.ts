/**
 * A stand-in for the Anthropic Messages API that holds several conversations at once (fake: no model
 * service can run here), for clients that run many conversations through one MCP connection
 * (`opencode serve`). A request belongs to the conversation whose name starts its first user message;
 * each user message opens a turn, and the conversation's script says what the model calls in each turn.
 * A step may depend on what the model has read so far (the system prompt, earlier results), as a real
 * model's next call does: that is how a scripted model follows our instructions and passes a handle on.
 */
import { reply, toSeen, type Block, type ModelStub } from "./anthropic-stub.ts";
import { isOurTool, type Seen, type Step } from "./scenario.ts";

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
