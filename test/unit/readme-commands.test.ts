/**
 * The commands the README shows are the CLI's: its first lines (setup, start, test) name a script and
 * package.json scripts that exist, and every `mcp-code-exec <command> [action] [--flag]` (or the same
 * through `bun src/main.ts` / `bun run start`) in its code names a command, an action and flags that
 * the real CLI's `--help` lists (the top-level help's line for the command, and the command's own help).
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..", "..");
const README = readFileSync(join(ROOT, "README.md"), "utf8");
const PKG = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };

async function help(args: string[]): Promise<string> {
  const proc = Bun.spawn(["bun", "src/main.ts", ...args, "--help"], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  if (code !== 0) throw new Error(`bun src/main.ts ${args.join(" ")} --help exited with ${code}`);
  return out.slice(0, out.indexOf("\nEnvironment:") >>> 0); // the variables are listed by every help
}

/** The README's code: fenced blocks' lines and inline code spans. */
function codeOf(text: string): string[] {
  const code: string[] = [];
  let inFence = false;
  for (const line of text.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    else if (inFence) code.push(line);
    else for (const m of line.matchAll(/`([^`]+)`/g)) code.push(m[1]!);
  }
  return code;
}

interface Shown {
  command: string;
  words: string[];
  text: string;
}

/** Every invocation of the CLI in `code`: the command and what follows it, up to a comment or pipe. */
function invocations(code: string[]): Shown[] {
  const shown: Shown[] = [];
  for (const line of code) {
    for (const m of line.matchAll(
      /(?:^|[\s(])(?:sudo\s+)?(?:mcp-code-exec|bun src\/main\.ts|bun run start)\s+([a-z][a-z-]*)([^#|;&)]*)/g,
    )) {
      shown.push({ command: m[1]!, words: m[2]!.trim().split(/\s+/).filter(Boolean), text: m[0].trim() });
    }
  }
  return shown;
}

let topHelp = "";
const commandHelp = new Map<string, string>();

beforeAll(async () => {
  topHelp = await help([]);
  const names = [...topHelp.matchAll(/^ {2}([a-z][a-z-]*)\b/gm)].map((m) => m[1]!);
  const helps = await Promise.all(names.map((n) => help([n])));
  names.forEach((n, i) => commandHelp.set(n, helps[i]!));
});

describe("the README's commands", () => {
  test("the first lines: the setup script exists, start and test are package.json scripts", () => {
    const first = /```sh\n([\s\S]*?)```/.exec(README)?.[1] ?? "";
    const lines = first
      .split("\n")
      .map((l) => l.replace(/#.*/, "").trim())
      .filter(Boolean);
    expect(lines).toEqual(["bash scripts/setup.sh", "bun run start", "bun run test"]);
    expect(existsSync(join(ROOT, "scripts", "setup.sh"))).toBe(true);
    expect(Object.keys(PKG.scripts)).toEqual(expect.arrayContaining(["start", "test", "build", "test:fast", "typecheck", "format:check"]));
    expect(PKG.scripts.start).toBe("bun src/main.ts");
    // The lines the README says right under them.
    for (const script of ["build", "test:fast", "typecheck", "format:check"]) {
      if (README.includes(`bun run ${script}`)) expect(PKG.scripts[script], script).toBeDefined();
    }
  });

  test("every `mcp-code-exec <command> [action] [--flags]` shown is in the CLI's --help", () => {
    const shown = invocations(codeOf(README));
    expect(shown.length).toBeGreaterThan(10);
    const wrong: string[] = [];
    for (const s of shown) {
      const own = commandHelp.get(s.command);
      if (own === undefined) {
        wrong.push(`${s.text}: no command '${s.command}' in --help`);
        continue;
      }
      const line = topHelp.split("\n").find((l) => l.startsWith(`  ${s.command} `)) ?? "";
      const about = `${line}\n${own}`;
      const takesAction = /<action>|\[action\]|<what>/.test(line);
      s.words.forEach((w, i) => {
        const flag = /^(--?[a-z][a-z-]*)/.exec(w)?.[1];
        if (flag && !new RegExp(`(^|[\\s,])${flag}\\b`, "m").test(about))
          wrong.push(`${s.text}: ${flag} is not in \`${s.command} --help\``);
        if (i === 0 && takesAction && /^[a-z]+$/.test(w) && !new RegExp(`\\b${w}\\b`).test(about))
          wrong.push(`${s.text}: action '${w}' is not in the help of '${s.command}'`);
      });
    }
    expect(wrong, wrong.join("\n")).toEqual([]);
  });

  test("the check catches a command, an action or a flag the CLI lacks", () => {
    const shown = invocations(["mcp-code-exec frobnicate", "mcp-code-exec image polish", "sudo mcp-code-exec doctor --fix # comment"]);
    expect(shown.map((s) => [s.command, ...s.words])).toEqual([["frobnicate"], ["image", "polish"], ["doctor", "--fix"]]);
    expect(commandHelp.has("frobnicate")).toBe(false);
    expect(commandHelp.get("image")).not.toMatch(/\bpolish\b/);
    expect(commandHelp.get("doctor")).not.toMatch(/--fix\b/);
  });
});
