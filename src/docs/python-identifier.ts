/** Names that must become Python identifiers: tool names, parameter names, server aliases. */

/** Hard keywords (soft keywords like `match`/`type`/`_` are valid names) plus `__debug__`. */
export const PY_RESERVED: ReadonlySet<string> = new Set([
  "False",
  "None",
  "True",
  "and",
  "as",
  "assert",
  "async",
  "await",
  "break",
  "class",
  "continue",
  "def",
  "del",
  "elif",
  "else",
  "except",
  "finally",
  "for",
  "from",
  "global",
  "if",
  "import",
  "in",
  "is",
  "lambda",
  "nonlocal",
  "not",
  "or",
  "pass",
  "raise",
  "return",
  "try",
  "while",
  "with",
  "yield",
  "__debug__",
]);

/**
 * Any name -> valid (ASCII) Python identifier: every char outside [A-Za-z0-9_] becomes `_`
 * (or, with `collapse`, each run of them becomes one `_` and leading/trailing ones go), a leading
 * digit gets a `_` prefix, and a reserved word gets a trailing `_`. `empty` names an empty result.
 */
export function pythonIdentifier(name: string, opts: { collapse?: boolean; empty?: string } = {}): string {
  let s = opts.collapse
    ? String(name)
        .replace(/[^A-Za-z0-9]+/g, "_")
        .replace(/^_+|_+$/g, "")
    : String(name).replace(/[^A-Za-z0-9_]/g, "_");
  if (s === "") s = opts.empty ?? "_";
  if (/^[0-9]/.test(s)) s = "_" + s;
  if (PY_RESERVED.has(s)) s += "_";
  return s;
}

export function isPythonIdentifier(name: string): boolean {
  return pythonIdentifier(name) === name;
}
