/**
 * What bench/search needs to put another revision of the search beside this one in the same run:
 * that revision's src/ (git archive) in a temporary folder whose node_modules is this checkout's,
 * imported as a second module; and the memory a fresh process holds after its first search.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const REPO = path.join(import.meta.dir, "..");

/** Temporary folders of this run, removed when the process exits. */
const made: string[] = [];
process.on("exit", () => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});
function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** The search module of this checkout, or of git revision `ref` (extracted once per run). */
export function searchModulePath(ref?: string): string {
  if (!ref) return path.join(REPO, "src", "docs", "search.ts");
  const dir = tempDir("bench-search-before-");
  const tar = execFileSync("git", ["-C", REPO, "archive", "--format=tar", ref, "src"], { maxBuffer: 1 << 30 });
  execFileSync("tar", ["-x", "-C", dir], { input: tar });
  symlinkSync(path.join(REPO, "node_modules"), path.join(dir, "node_modules"));
  return path.join(dir, "src", "docs", "search.ts");
}

/** Size of the word vectors a search module embeds (the binary grows or shrinks by as much). */
export function vectorFileBytes(modulePath: string): number {
  const f = path.join(path.dirname(modulePath), "semantic", "word-vectors.bin");
  return existsSync(f) ? statSync(f).size : Number.NaN;
}

const RSS_SCRIPT = `
import { readFileSync } from "node:fs";
const m = await import(process.argv[2]);
const docs = JSON.parse(readFileSync(process.argv[3], "utf8"));
const start = process.memoryUsage().rss;
await m.loadWordVectors();
await m.loadForeignWords();
const index = m.createSearchIndex(docs);
index.search("how high above sea level is this point", 5);
Bun.gc(true);
console.log(JSON.stringify({ start, after: process.memoryUsage().rss }));
`;

/**
 * Resident memory (MiB) of a fresh process that imports the search module, loads its vectors and
 * glossary, indexes `docs` and answers one request: the median of `runs` processes, and what the
 * same processes held before loading anything.
 */
export function rssAfterFirstSearch(modulePath: string, docs: unknown[], runs = 3): { start: number; after: number } {
  const dir = tempDir("bench-search-rss-");
  const script = path.join(dir, "rss.ts");
  const docsFile = path.join(dir, "docs.json");
  writeFileSync(script, RSS_SCRIPT);
  writeFileSync(docsFile, JSON.stringify(docs));
  const starts: number[] = [];
  const afters: number[] = [];
  for (let r = 0; r < runs; r++) {
    const out = spawnSync(process.execPath, [script, modulePath, docsFile], { encoding: "utf8" });
    if (out.status !== 0) throw new Error(`rss probe failed: ${out.stderr}`);
    const { start, after } = JSON.parse(out.stdout.trim().split("\n").at(-1)!) as { start: number; after: number };
    starts.push(start / 2 ** 20);
    afters.push(after / 2 ** 20);
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  return { start: med(starts), after: med(afters) };
}
