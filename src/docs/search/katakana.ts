/**
 * Japanese requests name software things in katakana loanwords taken from English: タスク (task),
 * ブランチ (branch), スクリーンショット (screenshot), サーバー (server), データベース (database). Such a
 * word is found again among the tools' English words by how it sounds: both are reduced to a key of
 * consonant sounds as katakana hears them (no vowels, l = r, v = b, c = k or s, sh = ch = j, an English r
 * after a vowel and before a consonant or the end is silent, doubled sounds once), and words with the
 * katakana word's key are its candidates, the closest spelling first. A katakana run that is two loanwords
 * without a separator (プルリクエスト) is tried as two, split where both parts are spelt closest.
 *
 * No word list: only the tools' own words are candidates, so a key is ambiguous only among them.
 */

import { boundedEditDistance } from "./edit-distance.ts";

const KATAKANA_RUN = /[\p{Script=Katakana}ー]+/gu;

const KANA: Record<string, string> = {};
for (const [kana, romaji] of [
  ["アイウエオ", "a i u e o"],
  ["カキクケコ", "ka ki ku ke ko"],
  ["ガギグゲゴ", "ga gi gu ge go"],
  ["サシスセソ", "sa shi su se so"],
  ["ザジズゼゾ", "za ji zu ze zo"],
  ["タチツテト", "ta chi tsu te to"],
  ["ダヂヅデド", "da ji zu de do"],
  ["ナニヌネノ", "na ni nu ne no"],
  ["ハヒフヘホ", "ha hi fu he ho"],
  ["バビブベボ", "ba bi bu be bo"],
  ["パピプペポ", "pa pi pu pe po"],
  ["マミムメモ", "ma mi mu me mo"],
  ["ヤユヨ", "ya yu yo"],
  ["ラリルレロ", "ra ri ru re ro"],
  ["ワヰヱヲン", "wa i e o n"],
  ["ヴ", "vu"],
] as const) {
  const r = romaji.split(" ");
  [...kana].forEach((k, i) => {
    KANA[k] = r[i]!;
  });
}
const SMALL_VOWEL: Record<string, string> = { ァ: "a", ィ: "i", ゥ: "u", ェ: "e", ォ: "o" };
const SMALL_Y: Record<string, string> = { ャ: "a", ュ: "u", ョ: "o" };

/** Hepburn romanization of a katakana word (ッ doubles the next consonant, ー lengthens). */
export function romanize(kana: string): string {
  let out = "";
  let double = false;
  for (const ch of kana) {
    if (ch === "ッ") {
      double = true;
      continue;
    }
    if (ch === "ー") {
      out += /[aeiou]$/.test(out) ? out[out.length - 1] : "";
      continue;
    }
    const small = SMALL_VOWEL[ch];
    if (small) {
      // ファ fa, ティ ti, ウィ wi, ヴァ va, シェ she, チェ che.
      if (/(?:^|[^a-z])u$/.test(out) || out === "u") out = `${out.slice(0, -1)}w${small}`;
      else out = out.replace(/[aeiou]$/, "") + small;
      continue;
    }
    const sy = SMALL_Y[ch];
    if (sy) {
      // キャ kya, シャ sha, チュ chu, ジョ jo.
      if (/(?:sh|ch|j)i$/.test(out)) out = out.slice(0, -1) + sy;
      else out = `${out.replace(/i$/, "")}y${sy}`;
      continue;
    }
    const r = KANA[ch];
    if (r === undefined) continue;
    if (double && /^[bcdfghjkmprstvz]/.test(r)) out += r[0];
    double = false;
    out += r;
  }
  return out;
}

/**
 * The consonant sounds of a word as katakana hears them. `english`: the spelling rules of English words
 * too (silent r after a vowel, -tion, soft c and final -ge, x = ks, qu = k, ph = f, th = s).
 */
export function soundKey(word: string, english: boolean): string {
  let w = word.toLowerCase().replace(/[^a-z]/g, "");
  if (english) {
    w = w
      .replace(/s?[st]ion/g, "shon")
      .replace(/ge$/, "j")
      .replace(/ph/g, "f")
      .replace(/th/g, "s")
      .replace(/ck/g, "k")
      .replace(/qu/g, "k")
      .replace(/x/g, "ks")
      .replace(/c(?=[eiy])/g, "s")
      .replace(/c(?!h)/g, "k")
      .replace(/(?<=[aeiouy])r(?=[^aeiouyr]|$)/g, "");
  }
  w = w
    .replace(/sh|ch|j/g, "S")
    .replace(/z/g, "s")
    .replace(/v/g, "b")
    .replace(/l/g, "r")
    .replace(/q/g, "k")
    .replace(/m(?=[bp])/g, "n")
    .replace(/[aeiouyw]/g, "");
  return w.replace(/(.)\1+/g, "$1");
}

/** Vowel-kept form for ranking candidates of one key by spelling (katakana side and English side alike). */
function spelling(word: string, english: boolean): string {
  let w = word.toLowerCase();
  // An English vowel and silent r is katakana's long a ("server" サーバー, "computer" コンピューター).
  if (english)
    w = w
      .replace(/[aeiou]r(?=[^aeiouyr]|$)/g, "a")
      .replace(/e$/, "")
      .replace(/c(?!h)/g, "k");
  return w
    .replace(/l/g, "r")
    .replace(/v/g, "b")
    .replace(/(.)\1+/g, "$1");
}

/** A candidate's spelling may differ from the romanized katakana in at most this share of its letters. */
const MAX_SPELLING_DISTANCE = 0.5;
/** Candidates need this many consonant sounds: "ログ" (log) has two; one (ユーザー "user") is too ambiguous. */
const MIN_KEY = 2;

export interface LoanwordIndex {
  /** English words of the tools by sound key. */
  byKey: Map<string, string[]>;
}

export function loanwordIndex(words: Iterable<string>): LoanwordIndex {
  const byKey = new Map<string, string[]>();
  for (const w of words) {
    if (w.length < 3 || !/^[a-z]+$/.test(w)) continue;
    const k = soundKey(w, true);
    if (k.length < MIN_KEY) continue;
    const list = byKey.get(k);
    if (list) list.push(w);
    else byKey.set(k, [w]);
  }
  return { byKey };
}

/**
 * The English words of the tools that a katakana word sounds like, closest spelling first (at most 3),
 * and the closest one's spelling distance.
 */
function matchOne(kana: string, index: LoanwordIndex): { words: string[]; distance: number } {
  const roman = romanize(kana);
  const found = new Set<string>();
  for (const variant of sibilantVariants(roman)) {
    const key = soundKey(variant, false);
    if (key.length >= MIN_KEY) for (const w of index.byKey.get(key) ?? []) found.add(w);
  }
  const r = spelling(roman, false);
  const ranked = [...found]
    .map((w) => {
      const e = spelling(w, true);
      const max = Math.floor(MAX_SPELLING_DISTANCE * Math.max(r.length, e.length));
      return { w, d: boundedEditDistance(r, e, max), max };
    })
    // Same consonants, spelt too differently ("pururikuesuto" is not "perplexity"): not the word.
    .filter((x) => x.d <= x.max)
    .sort((a, b) => a.d - b.d || (a.w < b.w ? -1 : 1))
    .slice(0, 3);
  return { words: ranked.map((x) => x.w), distance: ranked[0]?.d ?? Number.POSITIVE_INFINITY };
}

/**
 * Katakana writes an English s as ジ or シ before i ("repository" リポジトリ, "simulation" シミュレーション):
 * each of the first three such sounds is tried both ways.
 */
function sibilantVariants(roman: string): string[] {
  let out = [""];
  let n = 0;
  for (let i = 0; i < roman.length; ) {
    const sh = roman.startsWith("sh", i) ? 2 : roman[i] === "j" ? 1 : 0;
    if (sh > 0 && n < 3) {
      n++;
      out = out.flatMap((v) => [v + roman.slice(i, i + sh), `${v}s`]);
      i += sh;
    } else {
      out = out.map((v) => v + roman[i]);
      i++;
    }
  }
  return out;
}

/** Each katakana word of the request (runs split at ・) with the tools' words it sounds like, as one or two loanwords. */
export function loanwords(query: string, index: LoanwordIndex): { kana: string; words: string[][] }[] {
  const out: { kana: string; words: string[][] }[] = [];
  for (const m of query.matchAll(KATAKANA_RUN)) {
    const run = m[0];
    const whole = matchOne(run, index);
    if (whole.words.length > 0) {
      out.push({ kana: run, words: [whole.words] });
      continue;
    }
    // Two loanwords written together: of the splits whose parts both match, the closest spelt.
    const chars = [...run];
    let best: { words: string[][]; distance: number } | undefined;
    for (let i = 2; i <= chars.length - 2; i++) {
      const a = matchOne(chars.slice(0, i).join(""), index);
      if (a.words.length === 0) continue;
      const b = matchOne(chars.slice(i).join(""), index);
      if (b.words.length === 0) continue;
      const d = a.distance + b.distance;
      if (!best || d < best.distance) best = { words: [a.words, b.words], distance: d };
    }
    if (best) out.push({ kana: run, words: best.words });
  }
  return out;
}

export function hasKatakana(text: string): boolean {
  return /\p{Script=Katakana}/u.test(text);
}
