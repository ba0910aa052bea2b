/** Brief listing of nested object properties, e.g. `{path: str, line?: int}`. */
import { ANY_MARK, type Ctx, isObj, normalize } from "./schema.ts";
import { renderType } from "./types.ts";

const SHAPE_DEPTH = 2;
const SHAPE_MAX_PROPS = 12;

export function shapeOf(schema: unknown, ctx: Ctx, seen: ReadonlySet<string>, depth: number): string | undefined {
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
  const variants = [...(Array.isArray(s.anyOf) ? (s.anyOf as unknown[]) : []), ...(Array.isArray(s.oneOf) ? (s.oneOf as unknown[]) : [])];
  if (variants.length > 0) {
    const shapes = variants.map((v) => shapeOf(v, ctx, path, depth)).filter((x): x is string => x !== undefined);
    const unique = [...new Set(shapes)];
    return unique.length > 0 ? unique.join(" | ") : undefined;
  }
  return undefined;
}
