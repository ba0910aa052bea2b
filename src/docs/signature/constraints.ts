/** What the Args section says about an argument beyond its type: ranges, lengths, formats, long enums. */
import { leadSentences, oneLine, truncate } from "../text.ts";
import type { Obj } from "./schema.ts";
import { pyLiteral } from "./types.ts";

const ARG_DESC_MAX = 200;
/** Sentences after the first are kept only while an arg description stays this short. */
const ARG_DESC_SOFT = 80;
const PATTERN_MAX = 60;
/** Numeric bounds at or beyond this magnitude (int32 max, MAX_SAFE_INTEGER, ...) are not shown. */
const BOUND_SENTINEL = 2147483647;

/** Filler that carries no information in an Args line. */
const FILLER_PREFIX = /^(?:\(optional\)|optional[.:]|\(required\)|required[.:])\s*/i;

/** A leading "The" ("The organization's slug" -> "Organization's slug"). */
const LEADING_ARTICLE = /^the\s+(?=[A-Za-z])/i;
/** ... or "A" / "An", once the other filler is gone ("A limit on the number" -> "Limit on the number"). */
const ANY_LEADING_ARTICLE = /^(?:the|an?)\s+(?=[A-Za-z])/i;

/** A leading "Specifies" ("Specifies the Azure subscription to use" -> "Azure subscription to use"). */
const LEADING_SPECIFIES = /^specif(?:y|ies)\s+(?:(?:the|a|an)\s+)?(?=[A-Za-z])/i;

/** A closing "to use" after a noun ("Retry strategy to use" -> "Retry strategy"), not after "whether" etc. */
const TRAILING_TO_USE = /(?<!\b(?:whether|which|what|how|when|where|who|not|and|or))\s+to use$/i;

/** "Optional" said of an argument whose signature already says `= None` or `= default`. */
const OPTIONAL_LEAD = /^optional\s+(?=[a-z])/i;
const OPTIONAL_TAIL = /(?:\s*\(optional(?:\s*-\s*defaults to (?:null|none|undefined))?\)|,\s*optional)$/i;

/** What a `bool` annotation already says ("Whether to include images" -> "Include images"). */
const BOOL_LEAD = /^(?:whether(?: or not)? to|if true,?|when true,?|set (?:this )?to true to)\s+(?=[A-Za-z])/i;

/** What a `list[...]` annotation already says ("Array of files to push" -> "Files to push"). */
const LIST_LEAD = /^(?:an?\s+)?(?:array|list) of\s+(?=[A-Za-z])/i;

/** Words that carry nothing when checking whether a description only restates the name. */
const NAME_FILLER = new Set(["a", "an", "the", "of", "to", "for", "this", "that", "its", "use"]);

function words(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean)
    .map((w) => (w.length > 3 ? w.replace(/s$/, "") : w)); // plural -> singular, roughly
}

/**
 * True when every word of the description is in the argument's or the tool's name: `channel_id: ID of
 * the channel`, `route_delete(route_id)`: "ID of the route to delete".
 */
function restatesName(text: string, name: string, tool = ""): boolean {
  const named = new Set([...words(name), ...words(tool)]);
  const said = words(text).filter((w) => !NAME_FILLER.has(w));
  return said.length > 0 && said.every((w) => named.has(w));
}

export interface ArgContext {
  /** The argument's (wire) name: a description that only restates it (and the tool's name) is dropped. */
  name?: string;
  /** The tool's name. */
  tool?: string;
  /** The signature gives it a default: "Optional" / "(optional)" is dropped. */
  optional?: boolean;
  /** Its rendered annotation: "Whether to" before a bool, "Array of" before a list is dropped. */
  type?: string;
}

/**
 * Arg description for the Args section: leading sentence(s), filler stripped (what the signature
 * line already says: optional, bool, list, the name itself), no final period.
 */
export function argDescription(raw: unknown, arg: ArgContext = {}): string {
  if (typeof raw !== "string") return "";
  let text = oneLine(raw).replace(FILLER_PREFIX, "").replace(LEADING_ARTICLE, "");
  text = leadSentences(text, ARG_DESC_SOFT, ARG_DESC_MAX);
  if (/[^.]\.$/.test(text)) text = text.slice(0, -1); // drop a final period, keep "..."
  // What the signature line already says goes. Only after the sentences are chosen, so that these
  // cuts never make room for another sentence: they only ever shorten.
  if (arg.optional) text = text.replace(OPTIONAL_LEAD, "").replace(OPTIONAL_TAIL, "");
  text = text.replace(LEADING_SPECIFIES, "");
  if (arg.type !== undefined && /^bool\b/.test(arg.type)) text = text.replace(BOOL_LEAD, "");
  if (arg.type !== undefined && /^list\b/.test(arg.type)) text = text.replace(LIST_LEAD, "");
  text = text.replace(ANY_LEADING_ARTICLE, "").replace(TRAILING_TO_USE, "");
  if (arg.name !== undefined && restatesName(text, arg.name, arg.tool)) return "";
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

/** Every allowed value: a model cannot guess the ones left out. */
export function enumList(values: unknown[]): string {
  return `one of: ${values.map(pyLiteral).join(", ")}`;
}
