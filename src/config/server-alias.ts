/** Server name -> unique Python identifier. */
import { pythonIdentifier } from "../docs/python-identifier.ts";

/** Server name -> Python identifier (without collision suffixes). */
export function toPythonAlias(name: string): string {
  return pythonIdentifier(name.toLowerCase(), { collapse: true, empty: "server" });
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
