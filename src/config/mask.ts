/**
 * The command or URL of a server as it may be shown (to a person, a log, or sandbox code): values that
 * look like secrets are replaced by ***. Env values and header values are never shown at all.
 */
import type { ServerTransport } from "./server-entry.ts";

export const SECRET_NAME = /token|secret|passw|pwd|api[-_]?key|apikey|auth|credential|private[-_]?key|access[-_]?key|session/i;
export const TOKEN_SHAPE =
  /^(?:gh[pousr]_|github_pat_|sk-|xox[abpr]-|glpat-|AKIA|AIza|eyJ)[\w.-]{6,}$|^(?=[\w+/=.-]*\d)(?=[\w+/=.-]*[A-Za-z])[\w+=-]{32,}$/;

/** `--token X` / `--api-key=X` / `TOKEN=X` / bare token-shaped values, masked. */
export function maskArgs(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const prev = i > 0 ? args[i - 1]! : "";
    if (/^-{1,2}[\w.-]+$/.test(prev) && SECRET_NAME.test(prev) && !a.startsWith("-")) out.push("***");
    else out.push(maskValue(a));
  }
  return out;
}

function maskValue(a: string): string {
  const eq = /^(-{0,2}[\w.-]+)=(.+)$/.exec(a);
  if (eq && SECRET_NAME.test(eq[1]!)) return `${eq[1]}=***`;
  if (TOKEN_SHAPE.test(a)) return "***";
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(a)) return maskUrl(a);
  return a;
}

/**
 * Path segments that look like a key (some services put one in the URL's path: `/mcp/<key>/sse`):
 * token-shaped, a UUID, or a long run of letters mixed with digits.
 */
export function secretPathSegments(pathname: string): string[] {
  return pathname.split("/").filter((s) => {
    const d = safeDecode(s);
    return (
      TOKEN_SHAPE.test(d) ||
      /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(d) ||
      (d.length >= 16 && /\d/.test(d) && /[A-Za-z]/.test(d) && /^[\w+/=.~-]+$/.test(d) && !/^v?\d+(\.\d+)*$/.test(d))
    );
  });
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** A URL without its password, secret-looking query values and key-shaped path segments. */
export function maskUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    for (const k of [...u.searchParams.keys()])
      if (SECRET_NAME.test(k) || /^(key|sig|signature|code)$/i.test(k) || TOKEN_SHAPE.test(u.searchParams.get(k) ?? ""))
        u.searchParams.set(k, "***");
    const secrets = new Set(secretPathSegments(u.pathname));
    if (secrets.size)
      u.pathname = u.pathname
        .split("/")
        .map((s) => (secrets.has(s) ? "***" : s))
        .join("/");
    return u.toString();
  } catch {
    return url.replace(/\/\/[^/@\s]*@/, "//***@");
  }
}

/**
 * One line: the command and arguments (shell-quoted where needed), or the URL. A headersHelper is
 * named but not quoted: this line reaches sandbox code, and the command may hold a secret.
 */
export function displayTransport(t: ServerTransport): string {
  if (t.type !== "stdio") return `${maskUrl(t.url)}${t.headersHelper ? ", and its headersHelper command on this computer" : ""}`;
  return [t.command, ...maskArgs(t.args)].map(shellWord).join(" ");
}

/** A shell command line for a person to read, secret-looking words masked (quotes kept). */
export function maskCommandLine(cmd: string): string {
  const parts = cmd.split(/(\s+)/);
  const words = parts.filter((_, i) => i % 2 === 0);
  const bare = words.map((w) => /^(['"]?)(.*?)\1$/s.exec(w)![2]!);
  const masked = maskArgs(bare);
  return parts
    .map((p, i) => (i % 2 ? p : bare[i / 2] === masked[i / 2] ? p : words[i / 2]!.replace(bare[i / 2]!, masked[i / 2]!)))
    .join("");
}

/** Quote for sh only when needed. */
export function shellWord(s: string): string {
  return /^[\w@%+=:,./*-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
