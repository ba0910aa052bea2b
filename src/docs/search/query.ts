/**
 * A query as groups of weighted alternative stems, one group per query word: the word itself,
 * its long or short forms (lexicon.ts), prefix completions ("perms" -> "permissions"), typo
 * corrections ("chanel" -> "channel") and compounds ("key vault" -> "keyvault"). All alternatives
 * of a word share one idf (that of the most common one, as Lucene's SynonymQuery does), so a rare
 * form does not outweigh a common one.
 */
import type { Bm25fIndex } from "./bm25f.ts";
import type { ForeignWords } from "./foreign.ts";
import type { HanLexicon } from "./han-lexicon.ts";
import { queryAction } from "./intent.ts";
import { hasKatakana, loanwords } from "./katakana.ts";
import { askedQuantities, phrasalVerbs } from "./phrasal.ts";
import { thesaurus } from "./thesaurus.ts";
import { STOP_WORDS, stem, tokenize } from "./tokenize.ts";
import { type ValueShape, valueSpans } from "./values.ts";

const W_SYNONYM = 0.5;
const W_PREFIX = 0.45;
/** Two adjacent query words matching a compound in the corpus ("key vault" -> "keyvault"). */
const W_COMPOUND = 0.9;
const W_FUZZY = [1, 0.7, 0.45]; // by edit distance
/**
 * Words of a value in the request (values.ts: a file name, a URL, code, a channel...) are what to
 * pass, not what the tool does: they add score at this weight and are not required. The request
 * gains a word for the kind of value ("file", "url", "code", "channel", ...), at this weight too, which
 * is required like the request's own words (optional, it could not lift a tool nothing else matched).
 */
const W_VALUE = 0.5;
/** A Chinese word's English senses (han-lexicon.ts): the first sense, and the others. */
const W_HAN_FIRST = 0.8;
const W_HAN_OTHER = 0.5;
/** A katakana loanword's closest English word of the tools (katakana.ts); the others at half that. */
const W_LOANWORD = 0.8;
/** What a phrasal verb means ("bring back": restore), beside the verb itself. */
const W_PHRASAL = 0.9;
/** The other phrases of a thesaurus group (thesaurus.ts: "popup" -> dialog, modal, alert); 0.5-0.9 alike on the development files. */
const W_THESAURUS = 0.7;
/** The quantity a "how much" / "how far" question asks for. */
const W_QUANTITY = 0.7;
/** Minimum stem length for prefix expansion. */
const MIN_PREFIX = 4;
/** Query words beyond this many are ignored (bounds the cost of pathological queries). */
const MAX_QUERY_WORDS = 32;

export interface Alt {
  term: string; // stem
  w: number;
  /** Fallbacks (prefix expansions) do not set the word's shared idf, and score with min(own idf, shared idf). */
  fallback: boolean;
  idf: number;
}

export interface Group {
  alts: Alt[];
  /** Optional groups (tail words of phrase alternatives) add score but do not count for coordination. */
  optional: boolean;
}

export interface ParsedQuery {
  groups: Group[];
  /** The query's words as the corpus knows them (typos corrected), with a weight each. */
  words: { word: string; w: number }[];
  /** Fraction of query words the corpus has no match for at all (not even a typo correction). */
  unmatched: number;
  /** What the request asks to do (intent.ts). */
  intent: number;
  /** For each kind of value the request passes (values.ts), the stems of parameter names that take it. */
  valueParams: string[][];
}

/**
 * `isWord` (optional) tells a common word of the language from a typo: a query word the corpus does
 * not have but the language knows well ("tall", "remember", "dinner") is not corrected into a
 * corpus word it resembles ("all", "member", "inner"); it is left to the meaning ranking.
 */
export function parseQuery(
  query: string,
  index: Bm25fIndex,
  isWord?: (word: string) => boolean,
  han?: HanLexicon,
  foreign?: ForeignWords,
): ParsedQuery {
  const vocab = index.vocabulary;
  const groups: Group[] = [];
  const words: { word: string; w: number }[] = [];
  const tokens: {
    tok: string;
    fuzzy?: { word: string; dist: number }[];
    particle?: string;
    spans?: string[];
    also?: readonly string[];
    /** What the word means with its particle ("bring ... back": restore). */
    phrasal?: readonly string[];
    /** A particle whose meaning its verb carries: not required ("power-off" still matches "turn off"). */
    optional?: boolean;
    /** The other phrases of the thesaurus groups of the phrase this word begins (thesaurus.ts). */
    related?: string[][];
  }[] = [];
  const raw = tokenize(query);
  const values = valueSpans(query);
  const isValue = valueWordCounter(values);
  /** For each query word, the index of its entry in `tokens` (-1: a stop word, -2: beyond the cap). */
  const at: number[] = [];
  // A request in Spanish, Portuguese, French, German or Italian: its glossary words stand for their English words.
  const isEnglish = (t: string) => STOP_WORDS.has(t) || (isWord ? isWord(t) : index.isKnown(t));
  const lang = foreign?.language(raw, isEnglish);
  // Each word's English, looked up once (for the words below and for the request's questions further down).
  // A word English has too keeps its meaning, unless it is the language's article or preposition ("los", "del").
  const sensesOf = lang
    ? raw.map((t) => {
        const senses = foreign!.english(lang, t);
        return !isEnglish(t) || (senses?.length === 0 && !STOP_WORDS.has(t)) ? senses : undefined;
      })
    : [];
  for (const [i, tok] of raw.entries()) {
    const senses = sensesOf[i];
    // English stop words among the senses ("cuánto": how, much) are read as the English request's would be.
    const english = senses?.filter((w) => !STOP_WORDS.has(w));
    if (english?.length === 0) {
      at.push(-1);
      continue;
    }
    at.push(STOP_WORDS.has(tok) ? -1 : tokens.length < MAX_QUERY_WORDS ? tokens.length : -2);
    if (STOP_WORDS.has(tok)) {
      // A stop word after a word may make a compound the tools use ("back up" -> "backup", "log in" -> "login").
      const last = tokens[tokens.length - 1];
      if (last && last.particle === undefined) last.particle = tok;
      continue;
    }
    if (tokens.length >= MAX_QUERY_WORDS) break;
    if (english) {
      // The English word is not corrected into a tool's word it resembles: the meaning ranking weighs it.
      tokens.push({ tok: english[0]!, fuzzy: index.isKnown(english[0]!) ? undefined : [], also: english.slice(1) });
      continue;
    }
    if (index.isKnown(tok)) {
      tokens.push({ tok });
      continue;
    }
    if (isWord?.(tok)) {
      tokens.push({ tok, fuzzy: [] });
      continue;
    }
    const fuzzy = vocab.fuzzyMatches(tok);
    const parts = tok.length >= 6 && !fuzzy.some((f) => f.dist === 1) ? vocab.splitCompound(tok) : undefined;
    if (parts) tokens.push({ tok: parts[0] }, { tok: parts[1] });
    else tokens.push({ tok, fuzzy });
  }
  // A verb and its particle ("bring it back", "turn off"): the verb means what tools call it, and the
  // particle is not required on its own.
  if (!lang)
    for (const { verb, particle, means } of phrasalVerbs(raw)) {
      const v = at[verb];
      if (v === undefined || v < 0) continue;
      tokens[v]!.phrasal = means;
      const p = at[particle];
      if (p !== undefined && p >= 0) tokens[p]!.optional = true;
    }
  // A phrase of the thesaurus with a word the tools do not use ("popup", "xhr", "get rid of"): its first word
  // stands also for the other phrases of its groups. A phrase of words the tools all use is searched as
  // written ("last modified" would bring in "updated", and the tools that update); "how tall", "how many"
  // are asked quantities (below).
  for (const { start, end, others } of thesaurus().matches(raw)) {
    const words = at.slice(start, end).filter((x) => x >= 0);
    if (words.length === 0 || raw[start] === "how" || words.every((w) => tokens[w]!.fuzzy === undefined)) continue;
    (tokens[words[0]!]!.related ??= []).push(...others);
  }
  // Adjacent words that form a known compound ("key vault" -> "keyvault").
  const compound = (c: string): string | undefined => {
    const cs = stem(c);
    return index.postings.has(cs) ? cs : index.postings.has(c) ? c : undefined;
  };
  const joined: (string | undefined)[] = [];
  for (let i = 0; i + 1 < tokens.length; i++) joined.push(compound(tokens[i]!.tok + tokens[i + 1]!.tok));
  // Three or two words with stop words among them that the tools write as one ("who am i" -> "whoami",
  // "sign me in"... when a tool is named so): the compound joins the window's first other word, or,
  // where the window is all stop words, is a word of its own.
  const ownCompounds: string[] = [];
  for (let i = 0; i < raw.length; i++)
    for (const n of [3, 2]) {
      if (i + n > raw.length) continue;
      const kinds = at.slice(i, i + n);
      if (!kinds.includes(-1)) continue;
      const c = raw.slice(i, i + n).join("");
      const found = c.length >= 5 ? compound(c) : undefined;
      if (!found) continue;
      const host = kinds.find((x) => x >= 0);
      if (host === undefined) ownCompounds.push(found);
      else (tokens[host]!.spans ??= []).push(found);
      break;
    }

  for (const [i, { tok, fuzzy, particle, spans, also, phrasal, optional, related }] of tokens.entries()) {
    const value = isValue(tok);
    const vw = value ? W_VALUE : 1;
    const alts = new Map<string, Alt>();
    const put = (term: string, w: number, fallback = false) => {
      const cur = alts.get(term);
      if (!cur) alts.set(term, { term, w, fallback, idf: 0 });
      else if (w > cur.w) {
        cur.w = w;
        cur.fallback = fallback;
      }
    };
    // Base forms: the word itself if known, otherwise its typo corrections; an unknown word may
    // also be an abbreviation, so its own prefix matches are kept too.
    const bases: { word: string; w: number }[] = [];
    if (!fuzzy || fuzzy.length === 0) bases.push({ word: tok, w: 1 });
    else for (const c of fuzzy) bases.push({ word: c.word, w: W_FUZZY[c.dist] ?? 0.3 });
    if (fuzzy) {
      const ts = stem(tok);
      if (ts.length >= MIN_PREFIX) for (const p of vocab.prefixMatches(ts)) put(p, W_PREFIX, true);
    }
    for (const b of bases) if (b.word !== tok) words.push({ word: b.word, w: b.w * vw });
    // The raw word too: general word knowledge may know it when the corpus does not ("elevation").
    words.push({ word: tok, w: (fuzzy?.some((f) => f.dist === 1) ? 0.5 : 1) * vw });

    const extraGroups: Alt[][] = [];
    for (const base of bases) {
      const bs = stem(base.word);
      put(bs, base.w);
      if (base.word !== bs && index.postings.has(base.word)) put(base.word, base.w);
      if (bs.length >= MIN_PREFIX) for (const p of vocab.prefixMatches(bs)) put(p, base.w * W_PREFIX, true);
      for (const syn of value ? [] : (index.synonyms.get(bs) ?? [])) {
        put(syn[0]!, base.w * W_SYNONYM);
        // Phrase alternative ("pr" -> "pull request"): the remaining words become optional groups.
        for (const extra of syn.slice(1)) extraGroups.push([{ term: extra, w: base.w * W_SYNONYM, fallback: false, idf: 0 }]);
      }
    }
    const withParticle = particle ? compound(tok + particle) : undefined;
    if (withParticle) put(withParticle, W_COMPOUND);
    const before = i > 0 ? joined[i - 1] : undefined;
    const after = joined[i];
    if (before) put(before, W_COMPOUND);
    if (after) put(after, W_COMPOUND);
    for (const c of spans ?? []) put(c, W_COMPOUND);
    /** Other words for this one, at weight `w`: the meaning ranking weighs them, and those the tools use are alternatives. */
    const putOthers = (others: readonly string[] | undefined, w: number) => {
      for (const other of others ?? []) {
        words.push({ word: other, w: w * vw });
        const os = stem(other);
        if (index.postings.has(os)) put(os, w);
      }
    };
    // What the word means with its particle ("bring back": restore); the other English words of a foreign
    // word ("pago": payment, pay).
    putOthers(phrasal, W_PHRASAL);
    putOthers(also, W_SYNONYM);
    // The thesaurus's other phrases, each by its head word (its last: "network request" -> request) as an
    // alternative of this word, its other words as optional words. They never set the word's shared idf (a
    // common word of a group does not make the request's own word weigh less).
    for (const phrase of value ? [] : (related ?? [])) {
      for (const word of phrase) words.push({ word, w: (W_THESAURUS / phrase.length) * vw });
      addPhrase(index, phrase, W_THESAURUS, (head) => put(head, W_THESAURUS, true), extraGroups);
    }
    // A number in a request is mostly a value to pass ("port 443", "issue #12", "add 3 and 4"), not
    // what the tool is about: it adds score where it matches but is not required.
    if (value) for (const a of alts.values()) a.w *= W_VALUE;
    groups.push(makeGroup(index, [...alts.values()], value || optional === true || /^\p{N}+$/u.test(tok)));
    for (const extra of extraGroups) groups.push(makeGroup(index, extra, true));
  }
  // A Chinese word is one query word whose alternatives are its English senses; a sense of several words
  // ("pie chart") puts its last word among them and the others in optional groups.
  /** The English senses of each Chinese word: what a Chinese (or kanji) request asks to do is in them ("删除": delete). */
  const hanEnglish: string[] = [];
  for (const { senses } of han?.words(query) ?? []) {
    for (const sense of senses) hanEnglish.push(...sense);
    const alts = new Map<string, Alt>();
    const extras: Alt[][] = [];
    for (const [k, sense] of senses.entries()) {
      const w = k === 0 ? W_HAN_FIRST : W_HAN_OTHER;
      for (const word of sense) words.push({ word, w });
      addPhrase(
        index,
        sense,
        w,
        (head) => {
          const cur = alts.get(head);
          if (!cur || cur.w < w) alts.set(head, { term: head, w, fallback: false, idf: 0 });
        },
        extras,
      );
    }
    if (alts.size > 0) groups.push(makeGroup(index, [...alts.values()], false));
    for (const extra of extras) groups.push(makeGroup(index, extra, true));
  }
  // A katakana loanword (タスク, ブランチ) is one query word whose alternatives are the tools' words it
  // sounds like; two written together (プルリクエスト) are two.
  if (hasKatakana(query))
    for (const { words: parts } of loanwords(query, index.loanwords))
      for (const candidates of parts) {
        const alts = new Map<string, Alt>();
        for (const [k, word] of candidates.entries()) {
          const st = stem(word);
          const w = k === 0 ? W_LOANWORD : W_LOANWORD * W_SYNONYM;
          if (!alts.has(st) && index.postings.has(st)) alts.set(st, { term: st, w, fallback: false, idf: 0 });
          words.push({ word, w });
        }
        if (alts.size > 0) groups.push(makeGroup(index, [...alts.values()], false));
      }
  /** One required query word whose alternatives are `words` (those the tools use), each weighing `w`. */
  const pushAlternatives = (words: readonly string[], w: number) => {
    const alts = words.map(stem).filter((t) => index.postings.has(t));
    if (alts.length > 0)
      groups.push(
        makeGroup(
          index,
          alts.map((term) => ({ term, w, fallback: false, idf: 0 })),
          false,
        ),
      );
  };
  // Each kind of value once: its hints as a query word, and the parameter names that take it (bm25f.ts).
  const hinted = new Set<string>();
  const valueParams: string[][] = [];
  for (const { hints, params } of values) {
    const key = hints.join(" ");
    if (hinted.has(key)) continue;
    hinted.add(key);
    pushAlternatives(hints, W_VALUE);
    if (params.length > 0) valueParams.push(params.map(stem));
  }
  // "how much", "how far": the quantity asked for is a word of the request (alternatives; none of them
  // may be a tool's word). A foreign request asks in its words' English ("cuánto" -> "how much").
  const inEnglish = lang ? raw.flatMap((t, i) => (sensesOf[i]?.length ? sensesOf[i]! : [t])) : raw;
  for (const q of askedQuantities(inEnglish)) {
    for (const w of q) words.push({ word: w, w: W_QUANTITY });
    pushAlternatives(q, W_QUANTITY);
  }
  for (const c of ownCompounds) groups.push(makeGroup(index, [{ term: c, w: W_COMPOUND, fallback: false, idf: 0 }], false));
  const unmatched = tokens.length ? tokens.filter((t) => t.fuzzy !== undefined && t.fuzzy.length === 0).length / tokens.length : 0;
  // What the request asks to do is in its own words, not in the values it passes ("accept the 'Delete item?' popup").
  const passed = valueWordCounter(values);
  const own = inEnglish.filter((t) => !passed(t));
  return { groups, words, unmatched, intent: queryAction([...own, ...hanEnglish]), valueParams };
}

/**
 * A phrase standing for one query word ("pie chart", "network request"): its head, the last word, is an
 * alternative of the word (`addHead`, with its stem, when the tools use it), and each of its other words the
 * tools use is an optional word of its own, at half the weight.
 */
function addPhrase(index: Bm25fIndex, phrase: readonly string[], w: number, addHead: (term: string) => void, extras: Alt[][]): void {
  const head = stem(phrase[phrase.length - 1]!);
  if (index.postings.has(head)) addHead(head);
  for (const other of phrase.slice(0, -1)) {
    const st = stem(other);
    if (index.postings.has(st)) extras.push([{ term: st, w: w * W_SYNONYM, fallback: false, idf: 0 }]);
  }
}

/** Whether an occurrence of a word is one of the values' words (each value word counts once, in request order). */
function valueWordCounter(values: readonly ValueShape[]): (tok: string) => boolean {
  const left = new Map<string, number>();
  for (const v of values) for (const t of tokenize(v.span)) left.set(t, (left.get(t) ?? 0) + 1);
  return (tok) => {
    const n = left.get(tok) ?? 0;
    if (n > 0) left.set(tok, n - 1);
    return n > 0;
  };
}

function makeGroup(index: Bm25fIndex, alts: Alt[], optional: boolean): Group {
  // Alternatives share one idf: the idf of the most frequent exact/synonym alternative.
  // Fallbacks score at most min(own idf, shared idf).
  let maxDf = 0;
  let maxFallbackDf = 0;
  const df = index.vocabulary.df;
  for (const a of alts) {
    const d = df.get(a.term) ?? 0;
    if (a.fallback) maxFallbackDf = Math.max(maxFallbackDf, d);
    else maxDf = Math.max(maxDf, d);
  }
  const idfOf = (d: number) => (d > 0 ? Math.log(1 + (index.size - d + 0.5) / (d + 0.5)) : 0);
  const shared = idfOf(maxDf > 0 ? maxDf : maxFallbackDf);
  for (const a of alts) a.idf = a.fallback ? Math.min(shared, idfOf(df.get(a.term) ?? 0)) : shared;
  return { alts, optional };
}
