/**
 * scripts/homebrew-formula.ts and the tap in packaging/homebrew-tap/. brew is not installed here (it
 * does not run as root on Linux), so nothing here is `brew audit` or `brew test`: the generated Ruby is
 * read back block by block (each platform's own URL and sum), the tap layout and class name are checked
 * against Homebrew's documented naming rules, a few audit rules are checked by hand, and `ruby -c`
 * runs only where ruby is installed. Bad input is refused; the committed formula is what the script
 * makes from the committed SHA256SUMS and package.json's version.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { readdirSync } from "node:fs";
import { FORMULA_PATH, formula, parseSums, PLATFORMS, RELEASES, TAP } from "../../scripts/homebrew-formula.ts";
import { ROOT } from "../support/env.ts";
import { run } from "../support/run.ts";

const TAP_DIR = join(ROOT, "packaging/homebrew-tap");
const COMMITTED = join(TAP_DIR, FORMULA_PATH);
const COMMITTED_SUMS = join(TAP_DIR, "SHA256SUMS");

/** url and sha256 per nested on_<os>/on_<arch> block, plus the version, read from formula text. */
function readFormula(ruby: string): { version: string | undefined; entries: Record<string, { url?: string; sha256?: string }> } {
  const stack: string[] = [];
  const entries: Record<string, { url?: string; sha256?: string }> = {};
  let version: string | undefined;
  for (const raw of ruby.split("\n")) {
    const line = raw.trim();
    const open = /^(on_\w+) do$/.exec(line);
    if (open) stack.push(open[1] as string);
    else if (/ do$|^def |^class /.test(line)) stack.push("other");
    else if (line === "end") stack.pop();
    const kv = /^(url|sha256|version) "([^"]*)"$/.exec(line);
    if (!kv) continue;
    if (kv[1] === "version") version = kv[2];
    else {
      const key = stack.filter((s) => s.startsWith("on_")).join("/");
      entries[key] = { ...entries[key], [kv[1] as string]: kv[2] };
    }
  }
  expect(stack).toEqual([]);
  return { version, entries };
}

/**
 * A stand-in for the part of Homebrew's Formula DSL the formula uses at load time: on_<os>/on_<arch>
 * yield only for the platform given in ARGV, and every value set is recorded and printed as JSON.
 */
const FAKE_FORMULA_DSL = `
OS, ARCH, FILE = ARGV
class Formula
  @@seen = {}
  def self.seen = @@seen
  %w[desc homepage version license url sha256].each { |m| define_singleton_method(m) { |v| @@seen[m] = v } }
  def self.on_macos = (yield if OS == "macos")
  def self.on_linux = (yield if OS == "linux")
  def self.on_arm = (yield if ARCH == "arm")
  def self.on_intel = (yield if ARCH == "intel")
  def self.test(&block) = (@@seen["test"] = !block.nil?)
end
load FILE
klass = Object.const_get(:McpCodeExec)
raise "McpCodeExec is not a Formula" unless klass < Formula
require "json"
puts JSON.generate(Formula.seen.merge("methods" => klass.instance_methods(false).map(&:to_s).sort))
`;

const fakeSums = () => PLATFORMS.map((p, i) => `${String(i + 1).repeat(64)}  mcp-code-exec-${p.platform}`).join("\n") + "\n";

describe("homebrew formula", () => {
  test("each on_macos/on_linux × on_arm/on_intel block gets its own URL and sum", () => {
    const text = formula({ version: "1.2.3", baseUrl: "https://example.test/rel/v1.2.3/", sums: parseSums(fakeSums()) });
    const { version, entries } = readFormula(text);
    expect(version).toBe("1.2.3");
    expect(entries).toEqual({
      "on_macos/on_arm": { url: "https://example.test/rel/v1.2.3/mcp-code-exec-darwin-arm64", sha256: "1".repeat(64) },
      "on_macos/on_intel": { url: "https://example.test/rel/v1.2.3/mcp-code-exec-darwin-x64", sha256: "2".repeat(64) },
      "on_linux/on_arm": { url: "https://example.test/rel/v1.2.3/mcp-code-exec-linux-arm64", sha256: "3".repeat(64) },
      "on_linux/on_intel": { url: "https://example.test/rel/v1.2.3/mcp-code-exec-linux-x64", sha256: "4".repeat(64) },
    });
    expect(text).toContain('bin.install Dir["mcp-code-exec-*"].first => "mcp-code-exec"');
  });

  test("a missing platform or a malformed line is refused with what to do", () => {
    const partial = parseSums(
      fakeSums()
        .split("\n")
        .filter((l) => !l.includes("linux-arm64"))
        .join("\n"),
    );
    expect(() => formula({ version: "1.0.0", baseUrl: "https://x", sums: partial })).toThrow(
      "SHA256SUMS has no entry for mcp-code-exec-linux-arm64: build them with `bun run build:release`",
    );
    expect(() => parseSums("abc  mcp-code-exec-linux-x64\n")).toThrow('SHA256SUMS line 1 is not "<sha256>  <file>"');
  });

  test("the committed formula is what the script generates from the committed SHA256SUMS and version", async () => {
    const r = await run(["bun", "scripts/homebrew-formula.ts", "--sums", COMMITTED_SUMS], { cwd: ROOT });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(readFileSync(COMMITTED, "utf8"));
    const { version, entries } = readFormula(r.stdout);
    expect(version).toBe(pkg.version);
    const sums = parseSums(readFileSync(COMMITTED_SUMS, "utf8"));
    for (const p of PLATFORMS) {
      expect(entries[`on_${p.os}/on_${p.arch}`]).toEqual({
        url: `${RELEASES}/v${pkg.version}/mcp-code-exec-${p.platform}`,
        sha256: sums.get(`mcp-code-exec-${p.platform}`),
      });
    }
  });

  test("--out writes the same text, every time", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mcp-code-exec-brew-"));
    for (const name of ["a.rb", "b.rb"]) {
      const r = await run(
        ["bun", "scripts/homebrew-formula.ts", "--sums", COMMITTED_SUMS, "--version", "9.9.9", "--out", join(dir, name)],
        { cwd: ROOT },
      );
      expect(r.code).toBe(0);
    }
    expect(readFileSync(join(dir, "a.rb"), "utf8")).toBe(readFileSync(join(dir, "b.rb"), "utf8"));
    expect(readFormula(readFileSync(join(dir, "a.rb"), "utf8")).version).toBe("9.9.9");
  });

  test("the tap is laid out as Homebrew expects: Formula/<name>.rb whose class is the name in CamelCase", () => {
    // github.com/<user>/homebrew-<tap> is tapped as <user>/<tap>; formulae live in Formula/.
    expect(TAP).toBe("mcp-code-exec/tap");
    expect(readdirSync(join(TAP_DIR, "Formula"))).toEqual(["mcp-code-exec.rb"]);
    expect(readdirSync(TAP_DIR).filter((f) => f.endsWith(".rb"))).toEqual([]);
    // Homebrew's Formulary: "mcp-code-exec" -> "McpCodeExec" (split on - and _, capitalise each part).
    const klass = "mcp-code-exec"
      .split(/[-_]/)
      .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
      .join("");
    expect(readFileSync(COMMITTED, "utf8")).toContain(`\nclass ${klass} < Formula\n`);
    expect(readFileSync(join(TAP_DIR, "README.md"), "utf8")).toContain(`brew install ${TAP}/mcp-code-exec`);
  });

  test("a few brew audit rules, checked by hand: desc, https URLs, license, a test block", () => {
    const text = readFileSync(COMMITTED, "utf8");
    const desc = /^ {2}desc "([^"]*)"$/m.exec(text)?.[1] ?? "";
    expect(desc.length).toBeGreaterThan(0);
    expect(desc.length).toBeLessThanOrEqual(80);
    expect(desc).not.toMatch(/^(a|an|the|mcp-code-exec)\b/i);
    expect(desc).not.toMatch(/\.$/);
    for (const [, url] of text.matchAll(/(?:url|homepage) "([^"]*)"/g)) expect(url).toStartWith("https://");
    expect(text).toMatch(/^ {2}license "MIT"$/m);
    expect(text).toMatch(/^ {2}test do$/m);
  });

  test("the formula is valid Ruby (ruby -c)", async () => {
    const r = await run(["ruby", "-c", COMMITTED]);
    expect(r.stdout.trim()).toBe("Syntax OK");
  });

  test("its Ruby, run against a stand-in for Homebrew's Formula DSL (not brew), picks each platform's own URL and sum", async () => {
    const sums = parseSums(readFileSync(COMMITTED_SUMS, "utf8"));
    for (const p of PLATFORMS) {
      const r = await run(["ruby", "-e", FAKE_FORMULA_DSL, p.os, p.arch, COMMITTED]);
      expect(r.stderr).toBe("");
      expect(JSON.parse(r.stdout)).toEqual({
        desc: expect.any(String),
        homepage: "https://github.com/mcp-code-exec/mcp-code-exec",
        version: pkg.version,
        license: "MIT",
        url: `${RELEASES}/v${pkg.version}/mcp-code-exec-${p.platform}`,
        sha256: sums.get(`mcp-code-exec-${p.platform}`),
        methods: ["caveats", "install"],
        test: true,
      });
    }
  });
});
