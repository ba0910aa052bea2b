/**
 * Renders MCP tool definitions (name, description, JSON Schema inputSchema)
 * into compact, Python-flavoured documentation at three detail levels:
 *
 *   summary   -> "name: first sentence of description"
 *   signature -> `async def name(*, a: str, b: int = None):` + docstring
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

import { pythonIdentifier } from "./python-identifier.ts";
import { argDescription, constraintsOf, enumList } from "./signature/constraints.ts";
import { layout, type Param } from "./signature/params.ts";
import { ANY_MARK, isObj, newCtx, normalize } from "./signature/schema.ts";
import { shapeOf } from "./signature/shapes.ts";
import { pyLiteral, pyStr, renderType } from "./signature/types.ts";
import { firstParagraph, firstSentence, leadSentences, oneLine, truncate } from "./text.ts";

export { pythonIdentifier } from "./python-identifier.ts";
export { argNameMap } from "./signature/params.ts";

// Limits (chars). Tuned for compactness, see test/unit/signature.test.ts and bench/signature-tokens.ts.
const SUMMARY_MAX = 160;
const DOC_FIRST_MAX = 400;
/** Sentences after the first are kept while the docstring lead stays this short. */
const DOC_FIRST_SOFT = 200;
const SHAPE_MAX = 200;
const DEFAULT_MAX_CHARS = 120;

// ---------------------------------------------------------------------------
// Docstring escaping

function escapeDoc(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/"""/g, '""\\"');
}

/** escapeDoc for the docstring's last line: a trailing quote would merge with the closing `"""`. */
function escapeDocEnd(text: string): string {
  return text.endsWith('"') ? escapeDoc(text.slice(0, -1)) + '\\"' : escapeDoc(text);
}

// ---------------------------------------------------------------------------
// Public renderers

/**
 * The annotation of an optional parameter whose default is None: `= None` already says the argument
 * may be left out (None means "not given": the proxy does not send it), so a trailing `| None` is
 * dropped (`limit: int = None`, PEP 484's implicit Optional).
 */
function optionalType(type: string): string {
  return type.endsWith(" | None") ? type.slice(0, -" | None".length) : type;
}

/** `phrase` occurs in `text` as a whole (not as part of a longer number or word: "1-10" is not in "1-100"). */
function statedIn(text: string, phrase: string): boolean {
  const escaped = phrase.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(?<![\\w.-])${escaped}(?![\\w-]|\\.\\d)`).test(text);
}

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
  for (const p of params) {
    const hidden: unknown[] = [];
    const { s } = normalize(p.schema, newCtx(ctx.root), new Set());
    let type = renderType(p.schema, newCtx(ctx.root, hidden));
    const notes: string[] = [];

    let decl: string;
    if (p.required) {
      decl = `${p.py}: ${type}`;
    } else if ("default" in s && s.default !== undefined) {
      const lit = pyLiteral(s.default);
      if (s.default === null) type = optionalType(type);
      if (lit.length <= DEFAULT_MAX_CHARS) {
        decl = `${p.py}: ${type} = ${lit}`; // said here only, not again in Args
      } else {
        decl = `${p.py}: ${type} = ...`;
        notes.push(`default ${truncate(lit, DEFAULT_MAX_CHARS)}`);
      }
    } else {
      decl = `${p.py}: ${optionalType(type)} = None`;
    }
    sigParts.push(decl);

    const desc = argDescription(s.description, { name: p.wire, tool: tool.name, optional: !p.required, type });
    // A constraint the description already states ("Number of results (1-20)") is not said twice.
    const constraints = (s === ANY_MARK ? [] : constraintsOf(s)).filter((c) => !statedIn(desc, c));
    if (hidden.length) constraints.push(enumList(hidden));
    constraints.push(...notes);
    const shape = shapeOf(p.schema, newCtx(ctx.root), new Set(), 0);

    const renamed = p.py !== p.wire && !dashOnly(p);

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
  // No return annotation means Any: `-> Any` would say nothing.
  const lines = [`async def ${name}(${argList})${hasOutProps ? " -> dict" : ""}:`];

  const first = leadSentences(firstParagraph(tool.description ?? "") || oneLine(tool.title ?? ""), DOC_FIRST_SOFT, DOC_FIRST_MAX);
  const body: string[] = [];
  // A "-" for "_" rename is said once, in the Args header (or alone when no argument has a line).
  const dashEx = params.find(dashOnly);
  const dashNote = dashEx ? "sent with - for _" : undefined;
  if (argLines.length) {
    body.push(dashNote ? `Args (${dashNote}):` : "Args:");
    for (const a of argLines) body.push(`    ${a}`);
  } else if (dashNote) {
    body.push(`Argument names are ${dashNote}.`);
  }
  if (hasOutProps) {
    const shape = shapeOf(out, newCtx(tool.outputSchema), new Set(), 0);
    if (shape) body.push(`Returns: ${truncate(shape, SHAPE_MAX)}`);
  } else if (opts?.observedReturns) {
    body.push(`Returns (observed, not declared): ${truncate(opts.observedReturns, SHAPE_MAX)}`);
  }

  if (first || body.length) {
    // The closing `"""` ends the last line rather than taking a line of its own.
    const docLines = first && body.length ? [first, "", ...body] : first ? [first] : body;
    const last = docLines.length - 1;
    docLines.forEach((l, i) => {
      const text = i === last ? escapeDocEnd(l) + '"""' : escapeDoc(l);
      lines.push(i === 0 ? `    """${text}` : text ? `    ${text}` : "");
    });
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
