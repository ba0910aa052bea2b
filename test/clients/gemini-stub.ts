/**
 * A stand-in for the Gemini API on loopback (fake: no model service can run here), for `gemini -p`
 * through GOOGLE_GEMINI_BASE_URL. The main conversation gets the scripted `run_python` calls as
 * functionCall parts; the functionResponse parts the client sends back are recorded, with any inline
 * images that travel beside them.
 */
import type { ModelStub } from "./anthropic-stub.ts";
import { isOurTool, type Seen, type Step } from "./scenario.ts";

type Part = {
  text?: string;
  functionCall?: { name: string; args: unknown; id?: string };
  functionResponse?: { name: string; id?: string; response: unknown; parts?: Part[] };
  inlineData?: { mimeType: string; data: string };
};
type Content = { role: string; parts: Part[] };

export function startGeminiStub(steps: Step[]): ModelStub {
  const seen: Seen[] = [];
  const requests: unknown[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      if (req.method !== "POST") return Response.json({});
      const body = (await req.json()) as { contents?: Content[]; tools?: Array<{ functionDeclarations?: Array<{ name: string }> }> };
      requests.push({ path: url.pathname, body });
      if (url.pathname.endsWith(":countTokens")) return Response.json({ totalTokens: 10 });
      const stream = url.pathname.endsWith(":streamGenerateContent");
      const tool = body.tools?.flatMap((t) => t.functionDeclarations ?? []).find((f) => isOurTool(f.name));
      if (!tool) return reply(stream, [{ text: "ok" }]);
      // Function responses in order; each model turn with a call is followed by the user turn answering it.
      const contents = body.contents ?? [];
      let results = 0;
      for (let i = 0; i < contents.length; i++) {
        const responses = contents[i]!.parts.filter((p) => p.functionResponse && isOurTool(p.functionResponse.name));
        for (const r of responses) {
          const step = steps[results++];
          if (results > seen.length) seen.push(toSeen(step?.label ?? `call-${results}`, r, contents[i]!.parts));
        }
      }
      const step = steps[results];
      if (!step) return reply(stream, [{ text: "done" }]);
      return reply(stream, [{ functionCall: { name: tool.name, args: step.args } }]);
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, seen, requests, close: () => server.stop(true) };
}

function toSeen(label: string, r: Part, siblings: Part[]): Seen {
  const fr = r.functionResponse!;
  const inline = [...(fr.parts ?? []), ...siblings.filter((p) => p.inlineData)].filter((p) => p.inlineData);
  const texts = [
    JSON.stringify(fr.response),
    ...(fr.parts ?? []).filter((p) => p.text).map((p) => p.text!),
    ...siblings.filter((p) => p.text).map((p) => p.text!),
  ];
  const response = fr.response as { error?: unknown } | undefined;
  return {
    label,
    text: texts.join("\n"),
    images: inline.map((p) => p.inlineData!.mimeType),
    isError: response?.error !== undefined,
    raw: siblings,
  };
}

function reply(stream: boolean, parts: Part[]): Response {
  const chunk = {
    candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }],
    usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 },
    modelVersion: "gemini-stub",
  };
  if (!stream) return Response.json(chunk);
  return new Response(`data: ${JSON.stringify(chunk)}\r\n\r\n`, { headers: { "content-type": "text/event-stream" } });
}
