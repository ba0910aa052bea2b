/**
 * Every relative link and #anchor in every Markdown file of the repository resolves: the file or
 * folder exists, and an anchor names a heading of the target (GitHub's slugs) or an explicit id.
 * Links with a scheme (https:, mailto:) are not followed: nothing here may reach the network.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { anchorsOf, linksOf, slug } from "../support/markdown-links.ts";

const ROOT = join(import.meta.dir, "..", "..");

/** Tracked Markdown files, and new ones not yet committed (not ignored): what a fresh clone will have. */
function markdownFiles(): string[] {
  const r = Bun.spawnSync(["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.md"], { cwd: ROOT });
  if (r.exitCode !== 0) throw new Error(`git ls-files failed: ${r.stderr.toString()}`);
  return r.stdout
    .toString()
    .split("\n")
    .filter((f) => f && existsSync(join(ROOT, f)));
}

const anchorCache = new Map<string, Set<string>>();
function anchors(file: string): Set<string> {
  let a = anchorCache.get(file);
  if (!a) anchorCache.set(file, (a = anchorsOf(readFileSync(file, "utf8"))));
  return a;
}

/** What is wrong with one link of `file`, or undefined when it resolves. */
function problem(file: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined; // https:, mailto:, ...: not followed
  const hash = target.indexOf("#");
  const path = decodeURI(hash < 0 ? target : target.slice(0, hash));
  const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
  const dest = path === "" ? file : path.startsWith("/") ? join(ROOT, path) : join(dirname(file), path);
  if (!existsSync(dest)) return `${relative(ROOT, dest)} does not exist`;
  if (anchor === undefined || anchor === "") return undefined;
  if (statSync(dest).isDirectory() || !dest.endsWith(".md")) return `#${anchor} on a file that is not Markdown`;
  if (!anchors(dest).has(anchor)) return `${relative(ROOT, dest)} has no heading whose anchor is #${anchor}`;
  return undefined;
}

describe("links in Markdown", () => {
  test("GitHub's heading slugs", () => {
    expect(slug("The `run_python` tool")).toBe("the-run_python-tool");
    expect(slug("A person decides what code may change (approvals)")).toBe("a-person-decides-what-code-may-change-approvals");
    expect(slug("Engines: podman, docker & gVisor")).toBe("engines-podman-docker--gvisor");
    expect(slug("[Install](x.md) it")).toBe("install-it");
    expect([...anchorsOf("# A\n## A\n```\n# not a heading\n```\n## A\n")]).toEqual(["a", "a-1", "a-2"]);
  });

  test("links are found outside code only", () => {
    const text = "see [a](a.md) and `[b](b.md)`\n```\n[c](c.md)\n```\n[![badge](img.svg)](https://x) [d]: d.md\n[e]: e.md\n";
    expect(
      linksOf(text)
        .map((l) => l.target)
        .sort(),
    ).toEqual(["a.md", "e.md", "https://x", "img.svg"]);
  });

  test("every relative link and anchor in every Markdown file resolves", () => {
    const files = markdownFiles();
    expect(files).toContain("README.md");
    const broken: string[] = [];
    let checked = 0;
    for (const rel of files) {
      const file = join(ROOT, rel);
      for (const link of linksOf(readFileSync(file, "utf8"))) {
        checked++;
        const why = problem(file, link.target);
        if (why) broken.push(`${rel}:${link.line}: (${link.target}): ${why}`);
      }
    }
    expect(broken, broken.join("\n")).toEqual([]);
    expect(checked).toBeGreaterThan(50);
  });
});
