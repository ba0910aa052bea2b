/**
 * What sandbox code may ask to install: a strict subset of PEP 508, a distribution name with optional
 * extras and version specifiers, nothing else. No URL (`name @ https://…`), no path, no environment
 * marker, no option (`--index-url`), no whitespace tricks: the requirement reaches the resolver's argv
 * rebuilt from the parts checked here, never as the string the sandbox sent.
 */
import { distributionForImport } from "./import-names.ts";
import { POPULAR } from "./popular.ts";

/** PEP 508 names: letters and digits at both ends, `.`, `_`, `-` between. */
const NAME = /^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,98}[A-Za-z0-9])?$/;
/** One PEP 440 clause: an operator and a version (`*` only after == and !=, as PEP 440 allows). */
const CLAUSE = /^(~=|===|==|!=|<=|>=|<|>)\s*([0-9][0-9A-Za-z.!+_-]{0,63})(\.\*)?$/;
export const MAX_REQUIREMENTS = 20;

export interface Requirement {
  /** The name as asked for (or as the import table gives it). */
  name: string;
  /** PEP 503 normalized: lower case, runs of `-_.` as one `-`. */
  key: string;
  extras: string[];
  /** Clauses joined with commas (no spaces), or "" for any version. */
  specifier: string;
  /** Set when the name asked for is an import name the table maps to another distribution. */
  importName?: string;
}

export class RequirementError extends Error {
  readonly kind = "bad_request";
}

/** PEP 503 normalized form of a distribution name. */
export function normalize(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, "-");
}

/** The canonical string handed to the resolver: `name[extra,extra]>=1,<2`. */
export function requirementString(r: Requirement): string {
  return `${r.name}${r.extras.length ? `[${r.extras.join(",")}]` : ""}${r.specifier}`;
}

/** Parse one requirement from the sandbox; throws RequirementError saying what is allowed. */
export function parseRequirement(raw: unknown): Requirement {
  if (typeof raw !== "string") throw new RequirementError(`a requirement is a string such as "rich" or "rich==13.7.1", not ${typeof raw}`);
  const text = raw.trim();
  const shown = JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
  if (!text || text.length > 200) throw new RequirementError(`requirement ${shown}: expected 1 to 200 characters`);
  if (text.startsWith("-"))
    throw new RequirementError(`requirement ${shown}: options are not accepted (the index and the sources are the user's settings)`);
  // Spaces only around operators, commas and brackets; anything else (a URL, a path, a marker) is refused.
  const compact = text.replace(/\s*(~=|===|==|!=|<=|>=|<|>|,|\[|\])\s*/g, "$1");
  if (/[@:/\\;\s]/.test(compact))
    throw new RequirementError(
      `requirement ${shown}: only a name, optional [extras] and version specifiers are accepted, such as "rich", "rich[jupyter]" or "rich>=13,<14" (no URL, path, marker or option)`,
    );
  const m = /^([^[<>=!~]+)(?:\[([^\]]*)\])?(.*)$/.exec(compact);
  if (!m) throw new RequirementError(`requirement ${shown}: not a requirement`);
  const [, name, extrasRaw, specRaw] = m;
  if (!NAME.test(name!)) throw new RequirementError(`requirement ${shown}: ${JSON.stringify(name)} is not a valid distribution name`);
  const extras = (extrasRaw ?? "")
    .split(",")
    .map((e) => e.trim())
    .filter(Boolean);
  for (const e of extras)
    if (!NAME.test(e)) throw new RequirementError(`requirement ${shown}: extra ${JSON.stringify(e)} is not a valid name`);
  const clauses = specRaw!.trim()
    ? specRaw!
        .split(",")
        .map((c) => c.trim())
        .map((c) => {
          const cm = CLAUSE.exec(c);
          if (!cm || (cm[3] && cm[1] !== "==" && cm[1] !== "!="))
            throw new RequirementError(
              `requirement ${shown}: ${JSON.stringify(c)} is not a version specifier such as ==1.2, >=1.2 or ~=1.2`,
            );
          return `${cm[1]}${cm[2]}${cm[3] ?? ""}`;
        })
    : [];
  const mapped = distributionForImport(name!);
  const importName = mapped && normalize(mapped) !== normalize(name!) ? name! : undefined;
  const dist = importName ? mapped! : name!;
  return { name: dist, key: normalize(dist), extras, specifier: clauses.join(","), ...(importName ? { importName } : {}) };
}

/** Parse a list, at most MAX_REQUIREMENTS, dropping exact repeats. */
export function parseRequirements(raw: unknown[]): Requirement[] {
  if (raw.length === 0) throw new RequirementError('name at least one package, e.g. runtime.install("rich")');
  if (raw.length > MAX_REQUIREMENTS) throw new RequirementError(`at most ${MAX_REQUIREMENTS} packages per install`);
  const seen = new Map<string, Requirement>();
  for (const r of raw.map(parseRequirement)) seen.set(requirementString(r), r);
  return [...seen.values()];
}

/** Optimal string alignment distance (Levenshtein plus adjacent swaps), stopping early past `max`. */
export function editDistance(a: string, b: string, max = 3): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  const rows: number[][] = [Array.from({ length: b.length + 1 }, (_, j) => j)];
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(rows[i - 1]![j]! + 1, row[j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, rows[i - 2]![j - 2]! + 1);
      row.push(v);
      best = Math.min(best, v);
    }
    if (best > max) return max + 1;
    rows.push(row);
  }
  return rows[a.length]![b.length]!;
}

/** The popular distribution one edit away from `key` (a typosquat's favourite spot), if any. */
export function oneEditFromPopular(key: string): string | undefined {
  if (POPULAR.has(key)) return undefined;
  for (const p of POPULAR) if (editDistance(key, p, 1) === 1) return p;
  return undefined;
}

/** The nearest of `names` to `key` within a distance that still reads as a typo, or undefined. */
export function nearestName(key: string, names: Iterable<string>): string | undefined {
  const limit = key.length <= 4 ? 1 : key.length <= 8 ? 2 : 3;
  let best: { name: string; d: number } | undefined;
  for (const n of names) {
    const d = editDistance(key, normalize(n), limit);
    if (d <= limit && (!best || d < best.d || (d === best.d && n.length < best.name.length))) best = { name: n, d };
  }
  return best?.name;
}
