/**
 * The arguments of a call as a person reads them in an approval question: one line per argument.
 *
 * The rule is that the person sees what the call does. A value is masked only when it is a credential
 * and nothing else (one word shaped like a token, `Bearer <token>`, a secret-named argument holding one
 * word, a URL's password or key): a value with more in it is shown whole, whatever its name. Whatever is
 * masked or cut says so outside the quotes (`<secret: 40 characters, masked>`, `<… 1,234 characters not
 * shown …>`), where no value can write it, and a closing line counts what the person did not see.
 * Every character that changes how text renders is escaped (visible.ts).
 */
import { maskUrl, TOKEN_SHAPE } from "../config/mask.ts";
import { quoted, visible } from "./visible.ts";

/** Argument names whose values are secrets (narrower than config/mask.ts: `author` or `session_id` stay readable). */
const SECRET_NAME = /token|secret|passw|pwd|api[-_]?key|apikey|credential|private[-_]?key|access[-_]?key|^auth(orization)?$|cookie/i;
/** One word that could be a credential: printable, no spaces, nothing a shell or a query would act on. */
const ONE_WORD = /^[\w.+/=~@:%-]{1,512}$/;
const SCHEME_AND_TOKEN = /^(bearer|basic|token|bot)\s+([\w.+/=~-]{8,})$/i;

/** Characters of one argument's value shown before the cut (head and tail). */
export const MAX_VALUE_CHARS = 200;
const TAIL_CHARS = 50;
/** Arguments shown one per line; the rest are named on one line. */
export const MAX_ARGS = 20;
const MAX_TOTAL_CHARS = 2_000;
const MAX_DEPTH = 20;

interface Marks {
  masked: number;
  cut: number;
}

/** `key: value` lines, or "(no arguments)". */
export function summarizeArgs(args: Record<string, unknown>): string {
  const keys = Object.keys(args);
  if (!keys.length) return "(no arguments)";
  const marks: Marks = { masked: 0, cut: 0 };
  const lines: string[] = [];
  let total = 0;
  let shown = 0;
  for (const key of keys.slice(0, MAX_ARGS)) {
    const line = `${keyText(key)}: ${cut(render(args[key], SECRET_NAME.test(key), 0, marks), marks)}`;
    if (total + line.length > MAX_TOTAL_CHARS) break;
    total += line.length + 1;
    lines.push(line);
    shown++;
  }
  const hidden = keys.slice(shown);
  if (hidden.length) {
    const names = hidden.slice(0, 10).map(keyText).join(", ");
    lines.push(
      `<… ${hidden.length} more argument(s) not shown: ${names}${hidden.length > 10 ? ", …" : ""}; the call sends them too (${keys.length} in all)>`,
    );
  }
  const notes = [
    marks.masked ? `${marks.masked} secret(s) masked` : "",
    marks.cut ? `${marks.cut} value(s) cut` : "",
    hidden.length ? `${hidden.length} argument(s) not shown` : "",
  ].filter(Boolean);
  if (notes.length) lines.push(`(Shown in part: ${notes.join(", ")}. The call sends every value in full.)`);
  return lines.join("\n");
}

/** An argument's name: a plain word as is, anything else quoted, so it cannot add or reorder lines. */
function keyText(key: string): string {
  return /^[\w.-]{1,64}$/.test(key) ? key : cut(quoted(key), { masked: 0, cut: 0 });
}

/** One value as JSON-like text, credentials masked and marked, every string escaped. */
function render(v: unknown, secretNamed: boolean, depth: number, marks: Marks): string {
  if (typeof v === "string") return renderString(v, secretNamed, marks);
  if (v === null || typeof v !== "object") return visible(String(JSON.stringify(v) ?? v));
  if (depth >= MAX_DEPTH) {
    marks.cut++;
    return `<nested deeper than ${MAX_DEPTH} levels, not shown>`;
  }
  if (Array.isArray(v)) return `[${v.map((x) => render(x, secretNamed, depth + 1, marks)).join(", ")}]`;
  const parts = Object.entries(v).map(([k, x]) => `${quoted(k)}: ${render(x, secretNamed || SECRET_NAME.test(k), depth + 1, marks)}`);
  return `{${parts.join(", ")}}`;
}

function renderString(s: string, secretNamed: boolean, marks: Marks): string {
  const secret = (text: string) => {
    marks.masked++;
    return `<secret: ${text.length} characters, masked>`;
  };
  if (TOKEN_SHAPE.test(s) || (secretNamed && ONE_WORD.test(s))) return secret(s);
  const scheme = SCHEME_AND_TOKEN.exec(s);
  if (scheme) {
    marks.masked++;
    return `${quoted(`${scheme[1]} `)} + <secret: ${scheme[2]!.length} characters, masked>`;
  }
  if (/^[a-z][a-z0-9+.-]*:\/\/\S+$/i.test(s)) {
    const url = maskUrl(s);
    if (url !== s) {
      marks.masked++;
      return `${quoted(url)} <credentials in the URL masked>`;
    }
  }
  return quoted(s);
}

/** Long text keeps its head and tail; what is left out is counted where no value can write it. */
function cut(s: string, marks: Marks): string {
  if (s.length <= MAX_VALUE_CHARS) return s;
  marks.cut++;
  // Never split a surrogate pair: half of one is a character nobody can see.
  let head = s.slice(0, MAX_VALUE_CHARS - TAIL_CHARS);
  if (/[\uD800-\uDBFF]$/.test(head)) head = head.slice(0, -1);
  let tail = s.slice(-TAIL_CHARS);
  if (/^[\uDC00-\uDFFF]/.test(tail)) tail = tail.slice(1);
  return `${head} <… ${(s.length - head.length - tail.length).toLocaleString("en-US")} characters not shown …> ${tail}`;
}
