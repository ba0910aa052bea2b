/** A tool's parameters in signature order, with Python names for wire names that are not identifiers. */
import { isPythonIdentifier as isIdentifier, pythonIdentifier } from "../python-identifier.ts";
import type { ToolDef } from "../signature.ts";
import { ANY_MARK, type Ctx, hasTypeInfo, isObj, newCtx, normalize } from "./schema.ts";
import { renderType } from "./types.ts";

export interface Param {
  wire: string;
  py: string;
  required: boolean;
  schema: unknown;
}

export interface Layout {
  ctx: Ctx;
  params: Param[];
  /** Present when the tool accepts extra keyword arguments. */
  kwargs?: { name: string; type: string };
}

export function layout(tool: ToolDef): Layout {
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
  const requiredList = Array.isArray(root.required) ? (root.required as unknown[]).filter((x): x is string => typeof x === "string") : [];
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
  const degenerate = !("type" in root) && props.size === 0 && !hasTypeInfo(root) && ap === undefined && !isObj(root.patternProperties);
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
