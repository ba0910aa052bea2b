/** What the Args section says about an argument beyond its type: ranges, lengths, formats, long enums. */
import { leadSentences, oneLine, truncate } from "../text.ts";
import type { Obj } from "./schema.ts";
import { pyLiteral } from "./types.ts";

const ARG_DESC_MAX = 200;
/** Sentences after the first are kept only while an arg description stays this short. */
const ARG_DESC_SOFT = 80;
const ENUM_LIST_MAX = 200;
const PATTERN_MAX = 60;
/** Numeric bounds at or beyond this magnitude (int32 max, MAX_SAFE_INTEGER, ...) are not shown. */
const BOUND_SENTINEL = 2147483647;

/** Filler that carries no information in an Args line. */
const FILLER_PREFIX = /^(?:\(optional\)|optional[.:]|\(required\)|required[.:])\s*/i;

/** A leading "The" ("The organization's slug" -> "Organization's slug"). */
const LEADING_ARTICLE = /^the\s+(?=[A-Za-z])/i;

/** Arg description for the Args section: leading sentence(s), filler stripped, no final period. */
export function argDescription(raw: unknown): string {
  if (typeof raw !== "string") return "";
  let text = oneLine(raw).replace(FILLER_PREFIX, "").replace(LEADING_ARTICLE, "");
  text = leadSentences(text, ARG_DESC_SOFT, ARG_DESC_MAX);
  if (/[^.]\.$/.test(text)) text = text.slice(0, -1); // drop a final period, keep "..."
  if (text) text = text[0]!.toUpperCase() + text.slice(1);
  return text;
}

function numRange(s: Obj): string | undefined {
  // Sentinel bounds like 2**31-1 or Number.MAX_SAFE_INTEGER say nothing useful.
  const num = (x: unknown) => (typeof x === "number" && Number.isFinite(x) && Math.abs(x) < BOUND_SENTINEL ? x : undefined);
  let lo = num(s.minimum);
  let hi = num(s.maximum);
  let loEx = false;
  let hiEx = false;
  // draft-04 boolean form vs draft-06+ numeric form
  if (s.exclusiveMinimum === true) loEx = true;
  else if (num(s.exclusiveMinimum) !== undefined) [lo, loEx] = [num(s.exclusiveMinimum), true];
  if (s.exclusiveMaximum === true) hiEx = true;
  else if (num(s.exclusiveMaximum) !== undefined) [hi, hiEx] = [num(s.exclusiveMaximum), true];
  if (lo !== undefined && hi !== undefined && !loEx && !hiEx) return `${lo}-${hi}`;
  const parts: string[] = [];
  if (lo !== undefined) parts.push(`${loEx ? ">" : ">="}${lo}`);
  if (hi !== undefined) parts.push(`${hiEx ? "<" : "<="}${hi}`);
  return parts.length ? parts.join(", ") : undefined;
}

function countRange(min: unknown, max: unknown, unit: string, prefix: string): string | undefined {
  const lo = typeof min === "number" ? min : undefined;
  const hi = typeof max === "number" ? max : undefined;
  if (lo !== undefined && hi !== undefined) return lo === hi ? `${prefix}${lo}${unit}` : `${prefix}${lo}-${hi}${unit}`;
  if (lo !== undefined) return `${prefix}>=${lo}${unit}`;
  if (hi !== undefined) return `${prefix}<=${hi}${unit}`;
  return undefined;
}

export function constraintsOf(s: Obj): string[] {
  const out: string[] = [];
  const r = numRange(s);
  if (r) out.push(r);
  const len = countRange(s.minLength, s.maxLength, "", "len ");
  if (len) out.push(len.replace("len >=", "len>=").replace("len <=", "len<="));
  const items = countRange(s.minItems, s.maxItems, " items", "");
  if (items) out.push(items);
  if (typeof s.format === "string") out.push(s.format);
  if (typeof s.pattern === "string") out.push(`pattern ${truncate(s.pattern, PATTERN_MAX)}`);
  return out;
}

export function enumList(values: unknown[]): string {
  const rendered = values.map(pyLiteral);
  let text = "one of: ";
  for (let i = 0; i < rendered.length; i++) {
    const piece = (i ? ", " : "") + rendered[i];
    if (text.length + piece.length > ENUM_LIST_MAX) {
      text += `, … (+${rendered.length - i})`;
      break;
    }
    text += piece;
  }
  return text;
}
