/** Server name -> unique Python identifier. */

const PY_KEYWORDS = new Set(
  ("False None True and as assert async await break class continue def del elif else except " +
    "finally for from global if import in is lambda nonlocal not or pass raise return try while with yield").split(" "),
);

/** Server name -> Python identifier (without collision suffixes). */
export function toPythonAlias(name: string): string {
  let a = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "");
  if (a === "") a = "server";
  if (/^[0-9]/.test(a)) a = `_${a}`;
  if (PY_KEYWORDS.has(a)) a = `${a}_`;
  return a;
}

/** Base aliases stay with their first owner; later collisions get _2, _3, ... */
export function assignAliases<T extends { name: string }>(servers: T[]): (T & { alias: string })[] {
  const bases = servers.map((s) => toPythonAlias(s.name));
  const taken = new Set<string>();
  const firstOwner = new Map<string, number>();
  bases.forEach((b, i) => {
    if (!firstOwner.has(b)) firstOwner.set(b, i);
  });
  for (const b of firstOwner.keys()) taken.add(b);
  return servers.map((s, i) => {
    const base = bases[i]!;
    let alias = base;
    if (firstOwner.get(base) !== i) {
      let n = 2;
      while (taken.has(`${base}_${n}`)) n++;
      alias = `${base}_${n}`;
      taken.add(alias);
    }
    return { ...s, alias };
  });
}
