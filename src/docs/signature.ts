/**
 * Renders MCP tool definitions (name, description, JSON Schema inputSchema)
 * into compact, Python-flavoured documentation at three detail levels:
 *
 *   summary   -> "name: first sentence of description"
 *   signature -> `async def name(*, a: str, b: int | None = None) -> Any:` + docstring
 *   full      -> the raw definition as an object
 *
 * Pure TypeScript: no runtime-specific APIs.
 */

export interface ToolDef {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: unknown;
  outputSchema?: unknown;
}

export type Detail = "summary" | "signature" | "full";

export interface RenderOptions {
  /** Python-callable name to show instead of pythonIdentifier(tool.name). */
  alias?: string;
  /** Shape of results seen from this tool, shown when it declares no outputSchema. */
  observedReturns?: string;
}

// ---------------------------------------------------------------------------
// Limits (chars). Tuned for compactness, see test/unit/signature.test.ts.

const SUMMARY_MAX = 160;
const DOC_FIRST_MAX = 400;
/** Sentences after the first are kept while the docstring lead stays this short. */
const DOC_FIRST_SOFT = 200;
const ARG_DESC_MAX = 200;
/** Sentences after the first are kept only while an arg description stays this short. */
const ARG_DESC_SOFT = 80;
const ENUM_LIST_MAX = 200;
const SHAPE_MAX = 200;
const LITERAL_MAX_VALUES = 8;
const LITERAL_MAX_CHARS = 120;
const DEFAULT_MAX_CHARS = 120;
const PATTERN_MAX = 60;
const SHAPE_DEPTH = 2;
const SHAPE_MAX_PROPS = 12;
const TYPE_DEPTH = 8;
/** Max schema nodes visited to render one type. */
const TYPE_BUDGET = 2000;
/** Numeric bounds at or beyond this magnitude (int32 max, MAX_SAFE_INTEGER, ...) are not shown. */
const BOUND_SENTINEL = 2147483647;

// ---------------------------------------------------------------------------
// Identifiers

/** Hard keywords (soft keywords like `match`/`type`/`_` are valid names) plus `__debug__`. */
const PY_RESERVED = new Set([
  "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class",
  "continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global",
  "if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise",
  "return", "try", "while", "with", "yield", "__debug__",
]);

/**
 * Tool/parameter name -> valid (ASCII) Python identifier:
 * every char outside [A-Za-z0-9_] becomes `_`, a leading digit gets a `_`
 * prefix, and a reserved word gets a trailing `_`.
 */
export function pythonIdentifier(name: string): string {
  let s = String(name).replace(/[^A-Za-z0-9_]/g, "_");
  if (s === "") s = "_";
  if (/^[0-9]/.test(s)) s = "_" + s;
  if (PY_RESERVED.has(s)) s += "_";
  return s;
}

function isIdentifier(name: string): boolean {
  return pythonIdentifier(name) === name;
}

// ---------------------------------------------------------------------------
// Text helpers

type Obj = Record<string, unknown>;

function isObj(x: unknown): x is Obj {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/** Collapse all whitespace (and strip control characters) to single spaces. */
function oneLine(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, " ").replace(/\s+/g, " ").trim();
}

function firstParagraph(text: string): string {
  const trimmed = text.replace(/^\s+/, "");
  const para = trimmed.split(/\r?\n[ \t]*\r?\n/)[0] ?? "";
  return oneLine(para);
}

/** Cut at a word boundary and add an ellipsis if longer than `max`. */
function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  let cut = text.slice(0, Math.max(1, max - 1));
  const space = cut.lastIndexOf(" ");
  if (space > max * 0.6) cut = cut.slice(0, space);
  else if (/[\ud800-\udbff]$/.test(cut)) cut = cut.slice(0, -1); // never split a surrogate pair
  return cut.replace(/[\s,;:.\-]+$/, "") + "…";
}

const ABBREVIATIONS = new Set([
  "e.g", "i.e", "etc", "vs", "approx", "incl", "esp", "cf", "ex", "eg", "ie",
  "mr", "mrs", "ms", "dr", "st", "no", "fig", "resp", "min", "max", "avg",
]);

/** Split one-line text into sentences (abbreviation-aware, conservative). */
function sentences(para: string): string[] {
  const out: string[] = [];
  const re = /[.!?](?=\s|$)/g;
  let start = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(para)) !== null) {
    const end = m.index;
    const word = (para.slice(start, end).split(" ").pop() ?? "").replace(/^[("'`\[]+/, "").toLowerCase();
    if (ABBREVIATIONS.has(word)) continue;
    if (/^[a-z]$/i.test(word)) continue; // single-letter initial like "J."
    const rest = para.slice(end + 1).trimStart();
    if (rest !== "" && /^[a-z0-9]/.test(rest)) continue; // "... e.g. foo", "v. 2"
    out.push(para.slice(start, end + 1).trim());
    start = end + 1;
  }
  const tail = para.slice(start).trim();
  if (tail) out.push(tail);
  return out;
}

/** First sentence of the first paragraph. */
function firstSentence(text: string): string {
  return sentences(firstParagraph(text))[0] ?? "";
}

/**
 * Leading sentences of one-line `text`: always the first (truncated to `max`),
 * then following ones while the total stays within `soft`.
 */
function leadSentences(text: string, soft: number, max: number): string {
  const parts = sentences(text);
  if (parts.length === 0) return "";
  let out = parts[0] ?? "";
  for (const p of parts.slice(1)) {
    if (out.length + 1 + p.length > soft) break;
    out += " " + p;
  }
  return truncate(out, max);
}

/** Filler that carries no information in an Args line. */
const FILLER_PREFIX = /^(?:\(optional\)|optional[.:]|\(required\)|required[.:])\s*/i;

/** A leading "The" ("The organization's slug" -> "Organization's slug"). */
const LEADING_ARTICLE = /^the\s+(?=[A-Za-z])/i;

/** Arg description for the Args section: leading sentence(s), filler stripped, no final period. */
function argDescription(raw: unknown): string {
  if (typeof raw !== "string") return "";
  let text = oneLine(raw).replace(FILLER_PREFIX, "").replace(LEADING_ARTICLE, "");
  text = leadSentences(text, ARG_DESC_SOFT, ARG_DESC_MAX);
  if (/[^.]\.$/.test(text)) text = text.slice(0, -1); // drop a final period, keep "..."
  if (text) text = text[0]!.toUpperCase() + text.slice(1);
  return text;
}

// ---------------------------------------------------------------------------
// Python literals

function pyStr(s: string): string {
  // A JSON string literal is a valid Python string literal with the same value.
  return JSON.stringify(s);
}

function pyLiteral(v: unknown): string {
  if (v === null || v === undefined) return "None";
  if (v === true) return "True";
  if (v === false) return "False";
  if (typeof v === "number") return Number.isFinite(v) ? String(v) : "None";
  if (typeof v === "string") return pyStr(v);
  if (Array.isArray(v)) return "[" + v.map(pyLiteral).join(", ") + "]";
  if (isObj(v)) {
    return "{" + Object.entries(v).map(([k, x]) => `${pyStr(k)}: ${pyLiteral(x)}`).join(", ") + "}";
  }
  return "None";
}

// ---------------------------------------------------------------------------
// Schema normalisation: $ref resolution and shallow allOf merge

interface Ctx {
  root: unknown;
  /** Remaining schema nodes to visit; guards against exponential $ref/anyOf/allOf fan-out. */
  budget: { n: number };
  /** Enum values hidden from the signature (too many / too long), for the Args line. */
  hidden?: unknown[];
}

function newCtx(root: unknown, hidden?: unknown[]): Ctx {
  return { root, budget: { n: TYPE_BUDGET }, hidden };
}

const ANY_MARK: Obj = Object.freeze({ __any: true }) as Obj;

function decodePointerToken(t: string): string {
  let s = t;
  try {
    s = decodeURIComponent(t);
  } catch {
    /* keep raw */
  }
  return s.replace(/~1/g, "/").replace(/~0/g, "~");
}

function lookupRef(root: unknown, ref: string): unknown {
  const hash = ref.indexOf("#");
  if (hash < 0) return undefined; // external refs are not resolvable here
  const pointer = ref.slice(hash + 1);
  if (pointer === "" || pointer === "/") return root;
  let cur: unknown = root;
  for (const tok of pointer.replace(/^\//, "").split("/")) {
    const key = decodePointerToken(tok);
    if (Array.isArray(cur)) cur = cur[Number(key)];
    else if (isObj(cur)) cur = cur[key];
    else return undefined;
    if (cur === undefined) return undefined;
  }
  return cur;
}

/**
 * Resolve `$ref` (merging sibling keywords over the target) and merge `allOf`
 * shallowly. `seen` holds the refs on the current resolution path; a ref seen
 * again means a cycle and yields ANY_MARK.
 */
function normalize(schema: unknown, ctx: Ctx, seen: ReadonlySet<string>): { s: Obj; seen: ReadonlySet<string> } {
  if (!isObj(schema)) return { s: schema === false ? ANY_MARK : {}, seen };
  let s: Obj = schema;
  let path = seen;
  for (let hops = 0; typeof s.$ref === "string"; hops++) {
    const ref = s.$ref as string;
    if (path.has(ref) || hops > 32) return { s: ANY_MARK, seen: path };
    const target = lookupRef(ctx.root, ref);
    const next = new Set(path);
    next.add(ref);
    path = next;
    const { $ref: _drop, ...siblings } = s;
    if (!isObj(target)) {
      s = siblings; // unresolvable: keep whatever siblings say (likely Any)
      break;
    }
    s = { ...target, ...siblings };
  }
  if (Array.isArray(s.allOf)) {
    const { allOf, ...base } = s;
    let merged: Obj = { ...base };
    for (const part of allOf as unknown[]) {
      if (--ctx.budget.n < 0) break;
      const { s: p } = normalize(part, ctx, path);
      if (p === ANY_MARK) continue;
      merged = mergeShallow(merged, p);
    }
    s = merged;
  }
  return { s, seen: path };
}

function mergeShallow(a: Obj, b: Obj): Obj {
  const out: Obj = { ...a };
  for (const [k, v] of Object.entries(b)) {
    if (k === "properties" && isObj(v)) {
      out.properties = { ...(isObj(a.properties) ? a.properties : {}), ...v };
    } else if (k === "required" && Array.isArray(v)) {
      const prev = Array.isArray(a.required) ? (a.required as unknown[]) : [];
      out.required = [...new Set([...prev, ...v])];
    } else if (!(k in out)) {
      out[k] = v;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// Types

type Atom = string | { lit: unknown };

function typeAtoms(schema: unknown, ctx: Ctx, seen: ReadonlySet<string>, depth: number): Atom[] {
  if (depth > TYPE_DEPTH) return ["Any"];
  if (--ctx.budget.n < 0) return ["Any"];
  const { s, seen: path } = normalize(schema, ctx, seen);
  if (s === ANY_MARK) return ["Any"];
  const atoms: Atom[] = [];
  const nullable = s.nullable === true;

  if ("const" in s) {
    atoms.push({ lit: s.const });
  } else if (Array.isArray(s.enum) && s.enum.length > 0) {
    for (const v of s.enum) atoms.push({ lit: v });
  } else if (Array.isArray(s.anyOf) || Array.isArray(s.oneOf)) {
    const variants = [
      ...(Array.isArray(s.anyOf) ? (s.anyOf as unknown[]) : []),
      ...(Array.isArray(s.oneOf) ? (s.oneOf as unknown[]) : []),
    ];
    const { anyOf: _a, oneOf: _o, description: _d, title: _t, default: _df, ...rest } = s;
    for (const v of variants) {
      // Variants that only add constraints (e.g. {required: [...]}) inherit the parent's type.
      const variant = isObj(v) && !hasTypeInfo(v) ? { ...rest, ...v } : v;
      atoms.push(...typeAtoms(variant, ctx, path, depth + 1));
    }
  } else if (typeof s.type === "string" || Array.isArray(s.type)) {
    const types = (Array.isArray(s.type) ? s.type : [s.type]).filter((t): t is string => typeof t === "string");
    for (const t of types) atoms.push(typeName(t, s, ctx, path, depth));
    if (types.length === 0) atoms.push("Any");
  } else if (isObj(s.properties) || "additionalProperties" in s || isObj(s.patternProperties)) {
    atoms.push(typeName("object", s, ctx, path, depth));
  } else if ("items" in s || Array.isArray(s.prefixItems)) {
    atoms.push(typeName("array", s, ctx, path, depth));
  } else {
    atoms.push("Any");
  }
  if (nullable) atoms.push("None");
  return atoms;
}

function hasTypeInfo(s: Obj): boolean {
  return (
    "type" in s || "$ref" in s || "const" in s || "enum" in s || "anyOf" in s || "oneOf" in s ||
    "allOf" in s || "properties" in s || "items" in s || "additionalProperties" in s
  );
}

function typeName(t: string, s: Obj, ctx: Ctx, seen: ReadonlySet<string>, depth: number): string {
  switch (t) {
    case "string":
      return "str";
    case "integer":
      return "int";
    case "number":
      return "float";
    case "boolean":
      return "bool";
    case "null":
      return "None";
    case "array": {
      if (!isObj(s.items) && s.items !== true) return "list";
      const inner = renderAtoms(typeAtoms(s.items, ctx, seen, depth + 1), ctx);
      return inner === "Any" ? "list" : `list[${inner}]`;
    }
    case "object": {
      if (isObj(s.properties) && Object.keys(s.properties).length > 0) return "dict";
      let valueSchemas: unknown[] = [];
      if (isObj(s.additionalProperties)) valueSchemas = [s.additionalProperties];
      else if (isObj(s.patternProperties) && s.additionalProperties !== true) {
        valueSchemas = Object.values(s.patternProperties);
      }
      if (valueSchemas.length === 0) return "dict";
      const inner = renderAtoms(valueSchemas.flatMap((v) => typeAtoms(v, ctx, seen, depth + 1)), ctx);
      return inner === "Any" ? "dict" : `dict[str, ${inner}]`;
    }
    default:
      return "Any";
  }
}

function litBase(v: unknown): string {
  if (v === null) return "None";
  if (typeof v === "string") return "str";
  if (typeof v === "boolean") return "bool";
  if (typeof v === "number") return Number.isInteger(v) ? "int" : "float";
  if (Array.isArray(v)) return "list";
  if (isObj(v)) return "dict";
  return "Any";
}

/** Render a union of atoms: literals merged into one Literal[...], deduped, None last. */
function renderAtoms(atoms: Atom[], ctx: Ctx): string {
  const names: string[] = [];
  const lits: unknown[] = [];
  const litKeys = new Set<string>();
  for (const a of atoms) {
    if (typeof a === "string") {
      if (!names.includes(a)) names.push(a);
      continue;
    }
    const v = a.lit;
    const base = litBase(v);
    if (base === "str" || base === "bool" || base === "int") {
      const key = JSON.stringify(v);
      if (!litKeys.has(key)) {
        litKeys.add(key);
        lits.push(v);
      }
    } else if (!names.includes(base)) {
      names.push(base); // null -> None, floats/objects/arrays -> base type
    }
  }
  if (names.includes("Any")) return "Any";
  const parts: string[] = [];
  if (lits.length > 0) {
    const text = `Literal[${lits.map(pyLiteral).join(", ")}]`;
    if (lits.length <= LITERAL_MAX_VALUES && text.length <= LITERAL_MAX_CHARS) {
      parts.push(text);
    } else {
      ctx.hidden?.push(...lits);
      for (const v of lits) {
        const b = litBase(v);
        if (!parts.includes(b) && !names.includes(b)) parts.push(b);
      }
    }
  }
  for (const n of names) if (n !== "None" && !parts.includes(n)) parts.push(n);
  if (names.includes("None")) parts.push("None");
  return parts.length === 0 ? "Any" : parts.join(" | ");
}

function renderType(schema: unknown, ctx: Ctx, seen: ReadonlySet<string> = new Set()): string {
  return renderAtoms(typeAtoms(schema, ctx, seen, 0), ctx);
}

// ---------------------------------------------------------------------------
// Shapes: brief listing of nested object properties, e.g. `{path: str, line?: int}`

function shapeOf(schema: unknown, ctx: Ctx, seen: ReadonlySet<string>, depth: number): string | undefined {
  if (depth > SHAPE_DEPTH) return undefined;
  if (--ctx.budget.n < 0) return undefined;
  const { s, seen: path } = normalize(schema, ctx, seen);
  if (s === ANY_MARK) return undefined;
  if (isObj(s.properties) && Object.keys(s.properties).length > 0) {
    const req = new Set(Array.isArray(s.required) ? (s.required as unknown[]) : []);
    const entries = Object.entries(s.properties);
    const parts = entries.slice(0, SHAPE_MAX_PROPS).map(([k, v]) => {
      const inner = depth < SHAPE_DEPTH ? shapeOf(v, ctx, path, depth + 1) : undefined;
      const t = inner ?? renderType(v, { root: ctx.root, budget: ctx.budget }, path); // no `hidden`
      return `${k}${req.has(k) ? "" : "?"}: ${t}`;
    });
    if (entries.length > SHAPE_MAX_PROPS) parts.push("…");
    return `{${parts.join(", ")}}`;
  }
  if ("items" in s && isObj(s.items)) {
    const inner = shapeOf(s.items, ctx, path, depth);
    return inner === undefined ? undefined : `[${inner}]`;
  }
  const variants = [
    ...(Array.isArray(s.anyOf) ? (s.anyOf as unknown[]) : []),
    ...(Array.isArray(s.oneOf) ? (s.oneOf as unknown[]) : []),
  ];
  if (variants.length > 0) {
    const shapes = variants.map((v) => shapeOf(v, ctx, path, depth)).filter((x): x is string => x !== undefined);
    const unique = [...new Set(shapes)];
    return unique.length > 0 ? unique.join(" | ") : undefined;
  }
  return undefined;
}

// ---------------------------------------------------------------------------
// Parameters

interface Param {
  wire: string;
  py: string;
  required: boolean;
  schema: unknown;
}

interface Layout {
  ctx: Ctx;
  params: Param[];
  /** Present when the tool accepts extra keyword arguments. */
  kwargs?: { name: string; type: string };
}

function layout(tool: ToolDef): Layout {
  const ctx = newCtx(tool.inputSchema);
  const raw = tool.inputSchema;
  if (raw === undefined || raw === null) return { ctx, params: [] };
  const { s: root } = normalize(raw, ctx, new Set());
  if (root === ANY_MARK) return { ctx, params: [], kwargs: { name: "kwargs", type: "Any" } };

  const props = new Map<string, unknown>();
  if (isObj(root.properties)) for (const [k, v] of Object.entries(root.properties)) props.set(k, v);
  // Root-level anyOf/oneOf variants may contribute more (optional) properties.
  for (const key of ["anyOf", "oneOf"] as const) {
    const variants = root[key];
    if (!Array.isArray(variants)) continue;
    for (const v of variants) {
      const { s: vs } = normalize(v, ctx, new Set());
      if (isObj(vs.properties)) for (const [k, p] of Object.entries(vs.properties)) if (!props.has(k)) props.set(k, p);
    }
  }
  const requiredList = Array.isArray(root.required)
    ? (root.required as unknown[]).filter((x): x is string => typeof x === "string")
    : [];
  const required = new Set(requiredList);
  for (const r of requiredList) if (!props.has(r)) props.set(r, {});

  const order = [...props.keys()];
  const sorted = [...order.filter((k) => required.has(k)), ...order.filter((k) => !required.has(k))];

  // Names that are already valid identifiers keep them; renamed ones avoid collisions.
  const taken = new Set(sorted.filter(isIdentifier));
  const params: Param[] = sorted.map((wire) => {
    let py = wire;
    if (!isIdentifier(wire)) {
      py = pythonIdentifier(wire);
      while (taken.has(py)) py += "_";
      taken.add(py);
    }
    return { wire, py, required: required.has(wire), schema: props.get(wire) };
  });

  let kwargs: Layout["kwargs"];
  const ap = root.additionalProperties;
  const degenerate =
    !("type" in root) && props.size === 0 && !hasTypeInfo(root) && ap === undefined && !isObj(root.patternProperties);
  if (ap === true || isObj(ap) || isObj(root.patternProperties) || degenerate) {
    let name = "kwargs";
    while (taken.has(name)) name += "_";
    const t = isObj(ap) && Object.keys(ap).length > 0 ? renderType(ap, newCtx(ctx.root)) : "Any";
    kwargs = { name, type: t };
  }
  return { ctx, params, kwargs };
}

/** Python parameter name -> wire (JSON) name, for parameters whose names differ. */
export function argNameMap(tool: ToolDef): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of layout(tool).params) {
    if (p.py !== p.wire) Object.defineProperty(out, p.py, { value: p.wire, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

// ---------------------------------------------------------------------------
// Constraints for the Args section

function numRange(s: Obj): string | undefined {
  // Sentinel bounds like 2**31-1 or Number.MAX_SAFE_INTEGER say nothing useful.
  const num = (x: unknown) =>
    typeof x === "number" && Number.isFinite(x) && Math.abs(x) < BOUND_SENTINEL ? x : undefined;
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

function constraintsOf(s: Obj): string[] {
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

function enumList(values: unknown[]): string {
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

// ---------------------------------------------------------------------------
// Docstring escaping

function escapeDoc(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/"""/g, '""\\"');
}

// ---------------------------------------------------------------------------
// Public renderers

function displayName(tool: ToolDef, opts?: RenderOptions): string {
  return opts?.alias ?? pythonIdentifier(tool.name);
}

/**
 * "name: first sentence of description" (<= 160 chars, whitespace collapsed).
 * `name` is the Python-callable name (pythonIdentifier(tool.name)) unless an alias is given.
 */
export function renderSummary(tool: ToolDef, opts?: RenderOptions): string {
  const name = displayName(tool, opts);
  const text = firstSentence(tool.description ?? "") || oneLine(tool.title ?? "");
  if (!text) return truncate(name, SUMMARY_MAX);
  const head = `${name}: `;
  return head + truncate(text, Math.max(20, SUMMARY_MAX - head.length));
}

/** A Python signature with types, defaults and a docstring. */
export function renderSignature(tool: ToolDef, opts?: RenderOptions): string {
  const name = pythonIdentifier(displayName(tool, opts));
  const { ctx, params, kwargs } = layout(tool);

  const sigParts: string[] = [];
  const argLines: string[] = [];
  // Names renamed only by "-" -> "_" (resource-group -> resource_group) are said once, not per argument.
  const dashOnly = (p: Param) => p.py !== p.wire && p.wire.replace(/-/g, "_") === p.py;
  const dashRenames = params.filter(dashOnly).length;
  for (const p of params) {
    const hidden: unknown[] = [];
    const { s } = normalize(p.schema, newCtx(ctx.root), new Set());
    let type = renderType(p.schema, newCtx(ctx.root, hidden));
    const notes: string[] = [];
    let defaultNote: string | undefined;

    let decl: string;
    if (p.required) {
      decl = `${p.py}: ${type}`;
    } else if ("default" in s && s.default !== undefined) {
      const lit = pyLiteral(s.default);
      if (s.default === null && !/\bNone$/.test(type) && type !== "Any") type += " | None";
      if (lit.length <= DEFAULT_MAX_CHARS) {
        decl = `${p.py}: ${type} = ${lit}`;
        if (s.default !== null) defaultNote = `default ${lit}`;
      } else {
        decl = `${p.py}: ${type} = ...`;
        notes.push(`default ${truncate(lit, DEFAULT_MAX_CHARS)}`);
      }
    } else {
      const opt = type === "Any" || /\bNone$/.test(type) ? type : `${type} | None`;
      decl = `${p.py}: ${opt} = None`;
    }
    sigParts.push(decl);

    const desc = argDescription(s.description);
    const constraints = s === ANY_MARK ? [] : constraintsOf(s);
    if (hidden.length) constraints.push(enumList(hidden));
    constraints.push(...notes);
    const shape = shapeOf(p.schema, newCtx(ctx.root), new Set(), 0);

    const renamed = p.py !== p.wire && !(dashRenames > 0 && dashOnly(p));
    // A short default is repeated next to other notes (`state: Issue state (default "open")`),
    // but never earns an Args line on its own: the signature already shows it.
    if (defaultNote && (desc || constraints.length || shape || renamed)) constraints.push(defaultNote);

    const pieces: string[] = [];
    if (renamed) pieces.push(`(sent as ${pyStr(p.wire)})`);
    if (desc) pieces.push(desc);
    if (constraints.length) pieces.push(`(${constraints.join(", ")})`);
    if (shape) pieces.push(truncate(shape, SHAPE_MAX));
    if (pieces.length) argLines.push(`${p.py}: ${pieces.join(" ")}`);
  }

  const all = [...sigParts];
  if (kwargs) all.push(`**${kwargs.name}: ${kwargs.type}`);
  const argList = sigParts.length ? `*, ${all.join(", ")}` : all.join(", ");

  const out = isObj(tool.outputSchema) ? normalize(tool.outputSchema, newCtx(tool.outputSchema), new Set()).s : {};
  const hasOutProps = isObj(out.properties) && Object.keys(out.properties).length > 0;
  const ret = hasOutProps ? "dict" : "Any";

  const lines = [`async def ${name}(${argList}) -> ${ret}:`];

  const first = leadSentences(firstParagraph(tool.description ?? "") || oneLine(tool.title ?? ""), DOC_FIRST_SOFT, DOC_FIRST_MAX);
  const body: string[] = [];
  if (dashRenames > 0) {
    const ex = params.find(dashOnly)!;
    body.push(`Argument names are sent with - for _ (${ex.py} as ${pyStr(ex.wire)}).`);
  }
  if (argLines.length) {
    body.push("Args:");
    for (const a of argLines) body.push(`    ${a}`);
  }
  if (hasOutProps) {
    const shape = shapeOf(out, newCtx(tool.outputSchema), new Set(), 0);
    if (shape) body.push(`Returns: ${truncate(shape, SHAPE_MAX)}`);
  } else if (opts?.observedReturns) {
    body.push(`Returns (observed, not declared): ${truncate(opts.observedReturns, SHAPE_MAX)}`);
  }

  if (first || body.length) {
    if (body.length === 0) {
      // A trailing quote would merge with the closing `"""`: escape it.
      const doc = first.endsWith('"') ? escapeDoc(first.slice(0, -1)) + '\\"' : escapeDoc(first);
      lines.push(`    """${doc}"""`);
    } else {
      const docLines = first ? [first, "", ...body] : body;
      lines.push(`    """${escapeDoc(docLines[0] ?? "")}`);
      for (const l of docLines.slice(1)) lines.push(l ? `    ${escapeDoc(l)}` : "");
      lines.push(`    """`);
    }
  }
  return lines.join("\n");
}

/** Render one tool at the requested detail level. `full` returns the definition as an object. */
export function renderToolDoc(tool: ToolDef, detail: Detail, opts?: RenderOptions): string | object {
  switch (detail) {
    case "summary":
      return renderSummary(tool, opts);
    case "signature":
      return renderSignature(tool, opts);
    case "full":
      return {
        name: tool.name,
        ...(tool.title !== undefined ? { title: tool.title } : {}),
        description: tool.description ?? "",
        inputSchema: tool.inputSchema ?? { type: "object", properties: {} },
        ...(tool.outputSchema !== undefined ? { outputSchema: tool.outputSchema } : {}),
      };
    default:
      throw new Error(`unknown detail level: ${String(detail)}`);
  }
}
