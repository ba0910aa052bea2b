/**
 * Our own record of project-scope servers the user approved (`mcp-code-exec servers trust NAME`), kept
 * in the "trust" section of our config file with a digest of what would run. A definition whose digest
 * changed since it was approved needs approval again.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { parse, type ParseError } from "jsonc-parser";
import { writeConfigText } from "./config-file.ts";
import * as z from "zod";
import { setJsonValue } from "./json-edit.ts";

export const TrustRecordSchema = z.object({
  name: z.string().min(1).describe("Server name as the client's file spells it"),
  file: z.string().min(1).describe("Absolute path of the file that defines it"),
  client: z.string().optional().describe("Client that owns the file"),
  digest: z
    .string()
    .min(1)
    .describe("SHA-256 of the definition as written and of the files it reads or names in the repository (config/trust-digest.ts)"),
  approved: z.string().optional().describe("When it was approved (ISO 8601)"),
});
export type TrustRecord = z.infer<typeof TrustRecordSchema>;

const TrustSectionSchema = z.object({ servers: z.array(z.unknown()).default([]) }).loose();

export interface TrustStore {
  file: string;
  records: TrustRecord[];
  /** Values for VS Code `${input:id}` variables ("inputs" in our config file). */
  inputs: Record<string, string>;
  /** Why the file could not be used; the store is then empty (nothing is trusted by it). */
  problem?: string;
}

/** Read the trust records; a broken file trusts nothing and says why. */
export function readTrustStore(file: string): TrustStore {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { file, records: [], inputs: {} };
    return { file, records: [], inputs: {}, problem: `cannot read: ${(e as Error).message}` };
  }
  const errors: ParseError[] = [];
  const data = parse(text, errors, { allowTrailingComma: true }) as Record<string, unknown> | undefined;
  if (errors.length || !data || typeof data !== "object")
    return { file, records: [], inputs: {}, problem: "not valid JSON; fix it to use the approvals stored there" };
  const inputs: Record<string, string> = {};
  if (data.inputs && typeof data.inputs === "object")
    for (const [k, v] of Object.entries(data.inputs)) if (typeof v === "string") inputs[k] = v;
  if (data.trust === undefined) return { file, records: [], inputs };
  const section = TrustSectionSchema.safeParse(data.trust);
  if (!section.success) return { file, records: [], inputs, problem: `trust: ${section.error.issues[0]?.message}` };
  const records: TrustRecord[] = [];
  for (const r of section.data.servers) {
    const v = TrustRecordSchema.safeParse(r);
    if (v.success) records.push(v.data);
  }
  return { file, records, inputs };
}

/** Add (or replace) the approval of `record.name` defined in `record.file`. Keeps the file's formatting. */
export function addTrust(file: string, record: TrustRecord): void {
  const store = readTrustStore(file);
  if (store.problem) throw new Error(`${file}: ${store.problem}`);
  const kept = store.records.filter((r) => !(r.name === record.name && r.file === record.file));
  writeRecords(file, [...kept, record]);
}

/** Remove approvals of `name` (of one file, or of every file). Returns how many were removed. */
export function removeTrust(file: string, name: string, definedIn?: string): number {
  const store = readTrustStore(file);
  if (store.problem) throw new Error(`${file}: ${store.problem}`);
  const kept = store.records.filter((r) => !(r.name === name && (definedIn === undefined || r.file === definedIn)));
  const removed = store.records.length - kept.length;
  if (removed) writeRecords(file, kept);
  return removed;
}

function writeRecords(file: string, records: TrustRecord[]): void {
  let text = "{}\n";
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
  const next = setJsonValue(text, ["trust", "servers"], records);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  writeConfigText(file, next, 0o600);
}
