/**
 * What of a tool is indexed, field by field: server, name, title, the description's first sentence
 * and the rest of it (sentences that give the model orders left out), parameter names and
 * parameter descriptions. Text in Chinese also carries the English words of its Chinese words
 * (han-lexicon.ts), so an English request finds a tool described only in Chinese.
 */
import type { ToolDoc } from "../search.ts";
import { oneLine, sentences } from "../text.ts";
import { isDirective } from "./directives.ts";
import { type HanLexicon, hasHan } from "./han-lexicon.ts";

export const F_SERVER = 0;
export const F_NAME = 1;
export const F_TITLE = 2;
export const F_FIRST = 3;
export const F_REST = 4;
export const F_PARAM_NAMES = 5;
export const F_PARAM_DESCS = 6;
export const NUM_FIELDS = 7;

export interface DocFields {
  server: string;
  name: string;
  title: string;
  /** Texts per field, indexed by the F_* constants. */
  texts: string[][];
}

function str(x: unknown): string {
  return typeof x === "string" ? x : "";
}

/** Descriptive sentences of a description: first paragraph split in sentences, then the rest, orders dropped. */
export function descriptiveSentences(description: string): string[] {
  const paragraphs = description.split(/\r?\n[ \t]*\r?\n|\r?\n(?=\s*[-*#\d])/);
  const out: string[] = [];
  for (const p of paragraphs) for (const s of sentences(oneLine(p))) if (!isDirective(s)) out.push(s);
  return out;
}

export function docFields(doc: ToolDoc, han?: HanLexicon): DocFields {
  const en = (text: string) => (han && hasHan(text) ? withEnglish(text, han) : text);
  const server = str(doc.server);
  const name = str(doc.name);
  const title = en(str(doc.title));
  const description = str(doc.description);
  const kept = descriptiveSentences(description).map(en);
  const first = kept[0] ?? "";
  const rest = kept.slice(1).join(" ");
  const pNames: string[] = [];
  const pDescs: string[] = [];
  collectParams(doc.inputSchema, pNames, pDescs);
  return {
    server,
    name,
    title,
    texts: [[server], [name], [title], [first], [rest], pNames, pDescs.filter((d) => !isDirective(d)).map(en)],
  };
}

/** Collect parameter names and descriptions from a JSON schema (nested properties too, bounded). */
function collectParams(schema: unknown, names: string[], descs: string[], depth = 0): void {
  if (depth > 3 || !schema || typeof schema !== "object" || Array.isArray(schema)) return;
  const s = schema as Record<string, unknown>;
  const props = s.properties;
  if (props && typeof props === "object" && !Array.isArray(props)) {
    for (const [key, value] of Object.entries(props as Record<string, unknown>)) {
      names.push(key);
      if (value && typeof value === "object" && !Array.isArray(value)) {
        const v = value as Record<string, unknown>;
        descs.push(str(v.description), str(v.title), enumText(v.enum), enumText((v.items as Record<string, unknown> | undefined)?.enum));
        collectParams(v, names, descs, depth + 1);
      }
    }
  }
  if (s.items) collectParams(s.items, names, descs, depth + 1);
  // The branches of a union ("a page id, or an object whose page_id is ...") describe the parameter too.
  for (const key of ["anyOf", "oneOf", "allOf"]) {
    const branches = s[key];
    if (!Array.isArray(branches)) continue;
    for (const b of branches.slice(0, MAX_BRANCHES)) {
      if (!b || typeof b !== "object" || Array.isArray(b)) continue;
      const v = b as Record<string, unknown>;
      descs.push(str(v.description), str(v.title), enumText(v.enum));
    }
  }
}
const MAX_BRANCHES = 16;

/** An enum's allowed strings as text ("python", "ruby", ...: what the tool works with), bounded. */
function enumText(values: unknown): string {
  if (!Array.isArray(values)) return "";
  const words: string[] = [];
  for (const v of values.slice(0, MAX_ENUM)) if (typeof v === "string" && v.length <= 40) words.push(v);
  return words.join(", ");
}
const MAX_ENUM = 64;

/**
 * The text followed by the English of its Chinese words: the first two senses of a word of two or
 * more characters, the first sense of a single character (those are mostly particles, with many senses).
 */
function withEnglish(text: string, han: HanLexicon): string {
  const words: string[] = [];
  for (const { word, senses } of han.words(text)) for (const sense of senses.slice(0, word.length > 1 ? 2 : 1)) words.push(...sense);
  return words.length ? `${text} ${words.join(" ")}` : text;
}
