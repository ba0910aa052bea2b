/**
 * Requests in Spanish, Portuguese, French, German or Italian for tools described in English: a glossary
 * of the words such requests are made of (src/docs/semantic/foreign-words.txt, written by hand for this
 * project: the verbs, nouns and adjectives of software and everyday tasks, each with its English words,
 * and the language's stop words, which map to nothing).
 *
 * A request is read as one of these languages when enough of its words are that language's glossary
 * words and not English ones; then each such word stands for its English words (¿Puedes reembolsar el
 * pago? -> refund payment) and the rest of the request is searched as it is. Words that are English too
 * ("file", French for a queue) are never translated, and an English request is not read as another language.
 */
import { readFile } from "node:fs/promises";
import { JS_HOST } from "../../host/process.ts";
import { STOP_WORDS } from "./tokenize.ts";

/** Fold case and accents: "Dirección" and "direccion" are one key (when no other word folds to it). */
export function foldWord(word: string): string {
  const lower = word.toLowerCase();
  return ASCII.test(lower) ? lower : lower.normalize("NFD").replace(MARKS, "");
}
const ASCII = /^[\x00-\x7f]*$/;
const MARKS = /\p{M}/gu;

const ENGLISH_WORD = /^[a-z]+$/;

/**
 * Pronouns Spanish and Italian write onto a verb ("muéstrame" show me, "envíalo" send it, "mostrami"):
 * a word the glossary lacks is looked up without them (and without the accent they add), longest first.
 */
const ENCLITICS: Record<string, readonly string[]> = {
  es: "selas selos sela selo melas melos mela melo nosla noslo telo tela nos los las les me te se lo la le".split(" "),
  it: "glielo gliela glieli gliele melo mela meli mele gli mi ti ci vi si lo la li le ne".split(" "),
};
const MIN_STEM = 3;

/** At least this many words of a request must be one language's (and not English) for it to be read as that language. */
const MIN_HITS = 2;

export class ForeignWords {
  /** Per language: word as written (lower case) -> English words (empty: a stop word). */
  readonly #langs = new Map<string, Map<string, string[]>>();
  /** Per language: word without its accents -> the same, for requests typed without them ("nivel" for "nível"). */
  readonly #folded = new Map<string, Map<string, string[]>>();

  constructor(text: string) {
    for (const line of text.split("\n")) {
      if (line === "" || line.startsWith("#")) continue;
      const [lang, word, english] = line.split("\t");
      if (!lang || !word || english === undefined) continue;
      let words = this.#langs.get(lang);
      if (!words) this.#langs.set(lang, (words = new Map()));
      const key = word.trim().toLowerCase();
      const senses: string[] = [];
      if (english !== "") for (const w of english.split(",")) if (ENGLISH_WORD.test(w)) senses.push(w);
      const cur = words.get(key);
      if (!cur) words.set(key, senses);
      else for (const s of senses) if (!cur.includes(s)) cur.push(s);
    }
    // Two words that differ only by their accents ("de" of, "dê" give) keep their own senses; without
    // accents, the one written without them wins, else the first.
    for (const [lang, words] of this.#langs) {
      const folded = new Map<string, string[]>();
      for (const [word, senses] of words) {
        const f = foldWord(word);
        if (!folded.has(f) || f === word) folded.set(f, senses);
      }
      this.#folded.set(lang, folded);
    }
  }

  get size(): number {
    let n = 0;
    for (const words of this.#langs.values()) n += words.size;
    return n;
  }

  /**
   * The language of a request's words (lowercase tokens), when at least two of them are that language's
   * glossary words and not English words, and no fewer than its English words that are not that
   * language's ("read a text file" has French words, "a" and "file", but they are English too).
   */
  language(tokens: readonly string[], isEnglish: (word: string) => boolean): string | undefined {
    // Each word is judged and folded once, not once per language.
    const words = tokens.map((t) => ({ t, english: isEnglish(t), folded: foldWord(t) }));
    let best: string | undefined;
    let bestHits = 0;
    for (const lang of this.#langs.keys()) {
      let hits = 0;
      let english = 0;
      for (const w of words) {
        const senses = this.#lookup(lang, w.t, w.folded);
        if (w.english) {
          // An article or preposition English knows only in names ("los", "del", "die") still says the language.
          if (senses === undefined) english++;
          else if (senses.length === 0 && !STOP_WORDS.has(w.t)) hits++;
        } else if (senses !== undefined) hits++;
      }
      if (hits >= MIN_HITS && hits >= english && hits > bestHits) {
        best = lang;
        bestHits = hits;
      }
    }
    return best;
  }

  /** The English words of `word` in `lang` (empty: a stop word), or undefined when the glossary does not have it. */
  english(lang: string, word: string): readonly string[] | undefined {
    const lower = word.toLowerCase();
    return this.#langs.has(lang) ? this.#lookup(lang, lower, foldWord(lower)) : undefined;
  }

  /** A word (lower case, and folded) as written, else without its accents, else without a pronoun on it. */
  #lookup(lang: string, lower: string, folded: string): string[] | undefined {
    const unaccented = this.#folded.get(lang)!;
    return this.#langs.get(lang)!.get(lower) ?? unaccented.get(folded) ?? withoutPronoun(lang, unaccented, folded);
  }
}

/** The senses of a verb with a pronoun attached (`word` folded), when the verb alone is in the glossary and means something. */
function withoutPronoun(lang: string, folded: Map<string, string[]>, word: string): string[] | undefined {
  for (const p of ENCLITICS[lang] ?? []) {
    if (word.length - p.length < MIN_STEM || !word.endsWith(p)) continue;
    const senses = folded.get(word.slice(0, -p.length));
    if (senses !== undefined && senses.length > 0) return senses;
  }
  return undefined;
}

let cached: ForeignWords | undefined;

/** The glossary (read once, on the first search: 300 KB, parsed in ~20-50 ms on a 2-core machine). */
export async function loadForeignWords(): Promise<ForeignWords> {
  if (cached) return cached;
  // As han-lexicon.ts: a file import makes `bun build --compile` embed the file; Deno reads it beside this module.
  const file =
    JS_HOST === "deno"
      ? new URL("../semantic/foreign-words.txt", import.meta.url)
      : (await import("../semantic/foreign-words.txt", { with: { type: "file" } })).default;
  cached ??= new ForeignWords(await readFile(file, "utf8"));
  return cached;
}

/** The glossary if already read. */
export function loadedForeignWords(): ForeignWords | undefined {
  return cached;
}
