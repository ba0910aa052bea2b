/**
 * Text that reaches a person's screen as exactly what it is. Characters that change how text renders
 * rather than what it says are written out as escapes: controls and line breaks (`\n`, U+0085, U+2028,
 * U+2029), bidirectional overrides and isolates (U+202A–U+202E, U+2066–U+2069), zero-width and other
 * format characters (U+200B–U+200F, U+2060, U+FEFF, tag characters), and characters that draw nothing
 * (Hangul fillers, the braille blank). A hostile name or value can then neither forge a line of the
 * question nor reorder or hide part of it.
 */

const NAMED: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/** Everything that renders as something other than itself, or as nothing. Lone surrogates too. */
const INVISIBLE =
  /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\u115F\u1160\u3164\uFFA0\u2800\u180E]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/gu;

/** `text` with every such character written as an escape (`\u{202E}`). */
export function visible(text: string): string {
  return text.replace(INVISIBLE, escapeChar);
}

/** Whether `text` holds a character `visible` would escape. */
export function hasInvisible(text: string): boolean {
  INVISIBLE.lastIndex = 0;
  const hit = INVISIBLE.test(text);
  INVISIBLE.lastIndex = 0;
  return hit;
}

/** A string as a quoted literal: quotes and backslashes escaped, and every invisible character. */
export function quoted(text: string): string {
  return `"${visible(text.replace(/\\/g, "\\\\").replace(/"/g, '\\"'))}"`;
}

function escapeChar(c: string): string {
  return NAMED[c] ?? `\\u{${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}}`;
}
