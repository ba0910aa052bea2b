import { describe, expect, test } from "bun:test";
import { compact, json, RENDERERS } from "../../src/render/render.ts";
import type { RunOutcome } from "../../src/session/outcome.ts";

const base: RunOutcome = { outputCap: 1024, durationMs: 5, notes: [] };

describe.each(Object.entries(RENDERERS))("renderer contract: %s", (_name, render) => {
  test("empty parts are left out of structuredContent", () => {
    const r = render({ ...base, stdout: "hi\n" });
    expect(r.structured).toEqual({ stdout: "hi\n", duration_ms: 5 });
    expect(r.isError).toBe(false);
  });

  test("errors set isError and carry type, message and traceback", () => {
    const r = render({ ...base, error: { type: "ValueError", message: "bad", traceback: "Traceback...\nValueError: bad" } });
    expect(r.isError).toBe(true);
    expect(r.structured.error).toEqual({ type: "ValueError", message: "bad", traceback: "Traceback...\nValueError: bad" });
    expect(r.text).toContain("ValueError: bad");
  });

  test("dropped bytes and session resets are visible", () => {
    const r = render({
      ...base,
      stdout: "x",
      stdoutDropped: 10,
      sessionReset: "gone",
      error: { type: "SandboxExited", message: "gone", traceback: "" },
    });
    expect(r.structured.stdout_dropped_bytes).toBe(10);
    expect(r.structured.session_reset).toBe("gone");
    expect(r.text).toContain("10");
  });
});

describe("compact renderer", () => {
  test("reads like a REPL", () => {
    expect(compact({ ...base, stdout: "hi\n", value: "42" }).text).toBe("hi\n[value] 42");
    expect(compact({ ...base, stderr: "warn\n" }).text).toBe("[stderr]\nwarn");
    expect(compact(base).text).toBe("(no output)");
    expect(compact({ ...base, stdout: "a", stdoutDropped: 7 }).text).toContain(
      "7 more bytes of stdout dropped: output is capped at 1024 bytes",
    );
  });
});

describe("toon renderer", () => {
  test("text decodes back to the structured payload; tables become uniform rows", async () => {
    const { decode } = await import("@toon-format/toon");
    const { toon } = await import("../../src/render/render.ts");
    const r = toon({
      ...base,
      value: "df",
      table: {
        columns: ["a", "b"],
        index: [0, 1],
        rows: [
          [1, "x"],
          [2, "y"],
        ],
        total_rows: 2,
        total_columns: 2,
      },
    });
    expect(decode(r.text) as unknown).toEqual(r.structured);
    expect(r.text).toContain("rows[2]{index,a,b}:");
    expect(r.structured).not.toHaveProperty("value");
  });
});

describe("json renderer", () => {
  test("text is the structured payload", () => {
    const r = json({ ...base, value: "1" });
    expect(JSON.parse(r.text)).toEqual(r.structured);
  });
});
