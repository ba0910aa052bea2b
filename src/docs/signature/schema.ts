/** JSON Schema as the renderer reads it: $ref resolution, shallow allOf merge, a visit budget. */

/** Max schema nodes visited to render one type. */
const TYPE_BUDGET = 2000;

export type Obj = Record<string, unknown>;

export function isObj(x: unknown): x is Obj {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

// Schema normalisation: $ref resolution and shallow allOf merge

export interface Ctx {
  root: unknown;
  /** Remaining schema nodes to visit; guards against exponential $ref/anyOf/allOf fan-out. */
  budget: { n: number };
  /** Enum values hidden from the signature (too many / too long), for the Args line. */
  hidden?: unknown[];
}

export function newCtx(root: unknown, hidden?: unknown[]): Ctx {
  return { root, budget: { n: TYPE_BUDGET }, hidden };
}

export const ANY_MARK: Obj = Object.freeze({ __any: true }) as Obj;

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
export function normalize(schema: unknown, ctx: Ctx, seen: ReadonlySet<string>): { s: Obj; seen: ReadonlySet<string> } {
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

export function hasTypeInfo(s: Obj): boolean {
  return (
    "type" in s ||
    "$ref" in s ||
    "const" in s ||
    "enum" in s ||
    "anyOf" in s ||
    "oneOf" in s ||
    "allOf" in s ||
    "properties" in s ||
    "items" in s ||
    "additionalProperties" in s
  );
}
