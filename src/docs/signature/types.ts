/** Python types and literals for JSON Schema: `str | None`, `Literal["a", "b"]`, `list[dict[str, int]]`. */
import { ANY_MARK, type Ctx, hasTypeInfo, isObj, normalize, type Obj } from "./schema.ts";

const LITERAL_MAX_VALUES = 8;
const LITERAL_MAX_CHARS = 120;
const TYPE_DEPTH = 8;

export function pyStr(s: string): string {
  // A JSON string literal is a valid Python string literal with the same value.
  return JSON.stringify(s);
}

export function pyLiteral(v: unknown): string {
  if (v === null || v === undefined) return "None";
  if (v === true) return "True";
  if (v === false) return "False";
  if (typeof v === "number") return Number.isFinite(v) ? String(v) : "None";
  if (typeof v === "string") return pyStr(v);
  if (Array.isArray(v)) return "[" + v.map(pyLiteral).join(", ") + "]";
  if (isObj(v)) {
    return (
      "{" +
      Object.entries(v)
        .map(([k, x]) => `${pyStr(k)}: ${pyLiteral(x)}`)
        .join(", ") +
      "}"
    );
  }
  return "None";
}

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
    const variants = [...(Array.isArray(s.anyOf) ? (s.anyOf as unknown[]) : []), ...(Array.isArray(s.oneOf) ? (s.oneOf as unknown[]) : [])];
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
      const inner = renderAtoms(
        valueSchemas.flatMap((v) => typeAtoms(v, ctx, seen, depth + 1)),
        ctx,
      );
      return inner === "Any" ? "dict" : `dict[str, ${inner}]`;
    }
    default:
      return "Any";
  }
}

export function litBase(v: unknown): string {
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

export function renderType(schema: unknown, ctx: Ctx, seen: ReadonlySet<string> = new Set()): string {
  return renderAtoms(typeAtoms(schema, ctx, seen, 0), ctx);
}
