/** What the plugin/extension suites share: writing a client's files, and running its CLI's install steps. */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { RunOutput } from "../support/run.ts";

/** Write JSON (or text as is), making its folder. */
export function write(file: string, value: unknown): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, typeof value === "string" ? value : JSON.stringify(value, null, 2));
}

/** Run each step with the client's CLI; the first that fails throws with what it printed. */
export async function installSteps(client: string, cli: (...args: string[]) => Promise<RunOutput>, steps: string[][]): Promise<void> {
  for (const args of steps) {
    const r = await cli(...args);
    if (r.code !== 0) throw new Error(`${client} ${args.join(" ")}: ${r.stdout}${r.stderr}`);
  }
}
