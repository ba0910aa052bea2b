/**
 * BM25F over the fields of each tool (see fields.ts), each with its own weight and length
 * normalisation. Per (term, doc) scores are precomputed at build time, so a query is a few
 * postings-list walks. Words used by most tools of one server ("It takes two arguments", shared
 * auth parameters) are down-weighted within that server. Query words come in as groups of
 * weighted alternatives (query.ts) scored with dis-max: the best alternative counts, so a tool is
 * never rewarded twice for two forms of one word.
 *
 * Re-ranking factors: a coordination factor (fraction of query words matched), a bonus for the
 * fraction of the tool's name the query covers, a boost for tools of a server the query names, a
 * small penalty for tools that do something else to a thing than the request asks (read, create,
 * update, delete: intent.ts), and a small bonus for tools whose parameters take the kind of value the
 * request passes (values.ts).
 */
import { type DocFields, F_NAME, F_PARAM_NAMES, F_SERVER, F_TITLE, NUM_FIELDS } from "./fields.ts";
import { ABBREVIATION_GROUPS, SYNONYM_GROUPS } from "./lexicon.ts";
import { ACTION_OTHER, actionMismatch, toolAction } from "./intent.ts";
import { type LoanwordIndex, loanwordIndex } from "./katakana.ts";
import type { Group } from "./query.ts";
import { STOP_WORDS, stem, tokenize, tokens } from "./tokenize.ts";
import { Vocabulary, type VocabularySnapshot } from "./vocabulary.ts";

/** Field weights: server, name, title, first sentence, rest, parameter names, parameter descriptions. */
const FIELD_WEIGHT = [1.5, 3.0, 2.0, 1.5, 0.6, 0.5, 0.1];
/** Per-field length normalisation (BM25 `b`). */
const FIELD_B = [0.0, 0.75, 0.5, 0.6, 0.5, 0.5, 0.75];
const K1 = 1.2;
/** BM25 saturation of a single occurrence in the server field. */
const SERVER_FIELD_SAT = (FIELD_WEIGHT[0]! * (K1 + 1)) / (FIELD_WEIGHT[0]! + K1);
/** Coordination exponent: score *= (query words matched / query words)^COORD. */
const COORD = 1.0;
/** Multiplicative boost for tools of a server named in the query. */
const SERVER_BOOST = 0.6;
/** A server-name word is "distinctive" if at most this fraction of other tools use it. */
const SERVER_TERM_MAX_OUTSIDE = 0.03;
/** Multiplicative bonus for the fraction of the tool name covered by the query. */
const NAME_COVERAGE = 0.5;
/**
 * Score a tool that creates, changes or deletes loses for a request that only asks or reads
 * ("which droplets do I have": droplet-list before droplet-create). 0.1-0.5 alike on the development files.
 */
const INTENT_PENALTY = 0.25;
/**
 * Score bonus for a tool whose parameters take the kind of value the request passes ("what address is at
 * 40.71, -74.00": the tool taking latitude and longitude, not the one taking an address), times the
 * share of the request's kinds of value it takes. Tools without parameters named are left as they are.
 */
const VALUE_PARAM_BONUS = 0.2;
/** Server boilerplate: a word in >= this fraction of a server's tool descriptions ... */
const BOILERPLATE_FRACTION = 0.5;
/** ... (for servers with at least this many tools) has its description weight scaled by: */
const BOILERPLATE_MIN_TOOLS = 5;
const BOILERPLATE_WEIGHT = 0.5;

interface Posting {
  docs: Int32Array;
  scores: Float64Array;
}

/** What a built index holds, as JSON (see search.ts: cached on disk by the pool). */
export interface Bm25fSnapshot {
  size: number;
  vocabulary: VocabularySnapshot;
  postings: [string, number[], number[]][];
  serverTerms: [string, number[]][];
  docServer: number[];
  nameStems: string[][];
  docAction: number[];
  paramStems: string[][];
}

export class Bm25fIndex {
  readonly size: number;
  readonly vocabulary: Vocabulary;
  readonly postings = new Map<string, Posting>();
  /** Stem -> alternatives (each a phrase of stems) from the synonym and abbreviation tables. */
  readonly synonyms = new Map<string, string[][]>();
  /** stem -> ids of servers whose name it designates. */
  readonly #serverTerms = new Map<string, number[]>();
  readonly #docServer: Int32Array;
  /** Per-doc meaningful stems of the tool name. */
  readonly #nameStems: string[][];
  readonly #serverDocs: number[][];
  /** Per-doc action of the tool's name (intent.ts). */
  readonly #docAction: Uint8Array;
  /** Per-doc stems of the words of its parameters' names. */
  readonly #paramStems: string[][];

  constructor(fields: DocFields[], snapshot?: Bm25fSnapshot) {
    this.#addLexicon();
    if (snapshot) {
      this.size = snapshot.size;
      this.vocabulary = Vocabulary.restore(snapshot.vocabulary);
      for (const [t, docs, scores] of snapshot.postings)
        this.postings.set(t, { docs: Int32Array.from(docs), scores: Float64Array.from(scores) });
      for (const [t, sids] of snapshot.serverTerms) this.#serverTerms.set(t, sids);
      this.#docServer = Int32Array.from(snapshot.docServer);
      this.#nameStems = snapshot.nameStems;
      this.#docAction = Uint8Array.from(snapshot.docAction);
      this.#paramStems = snapshot.paramStems;
      this.#serverDocs = [];
      for (let d = 0; d < this.size; d++) (this.#serverDocs[this.#docServer[d]!] ??= []).push(d);
      return;
    }
    const n = fields.length;
    this.size = n;
    this.#docServer = new Int32Array(n);
    const vocab = (this.vocabulary = new Vocabulary());
    const tfs: Map<string, number>[][] = [];
    const lens: number[][] = [];
    const avgLen = new Array<number>(NUM_FIELDS).fill(0);
    const serverIds = new Map<string, number>();
    const serverNames: string[] = [];
    // Tokenise + stem each distinct text once (parameter descriptions repeat a lot).
    const analyzed = new Map<string, string[]>();
    const analyze = (text: string): string[] => {
      let stems = analyzed.get(text);
      if (!stems) {
        stems = [];
        for (const tok of tokens(text)) {
          if (STOP_WORDS.has(tok)) continue;
          vocab.addSurface(tok);
          stems.push(stem(tok));
        }
        analyzed.set(text, stems);
      }
      return stems;
    };

    for (let d = 0; d < n; d++) {
      const f = fields[d]!;
      let sid = serverIds.get(f.server);
      if (sid === undefined) {
        sid = serverNames.length;
        serverIds.set(f.server, sid);
        serverNames.push(f.server);
      }
      this.#docServer[d] = sid;
      const fieldTfs: Map<string, number>[] = [];
      const fieldLens: number[] = [];
      for (let fi = 0; fi < NUM_FIELDS; fi++) {
        const m = new Map<string, number>();
        let len = 0;
        for (const text of f.texts[fi]!) {
          for (const s of analyze(text)) {
            m.set(s, (m.get(s) ?? 0) + 1);
            len++;
          }
        }
        // Whole server / tool name as one token as well ("google-maps" -> "googlemaps").
        if (fi === F_SERVER || fi === F_NAME) {
          const joined = tokenize(f.texts[fi]![0]!).join("");
          if (joined && !m.has(joined)) {
            vocab.addSurface(joined);
            m.set(joined, 1);
          }
        }
        fieldTfs.push(m);
        fieldLens.push(len);
        avgLen[fi]! += len;
      }
      tfs.push(fieldTfs);
      lens.push(fieldLens);
    }
    for (let fi = 0; fi < NUM_FIELDS; fi++) avgLen[fi] = n > 0 ? Math.max(avgLen[fi]! / n, 1e-9) : 1;

    const df = vocab.df;
    for (const fieldTfs of tfs) {
      const seen = new Set<string>();
      for (const m of fieldTfs) for (const t of m.keys()) seen.add(t);
      for (const t of seen) df.set(t, (df.get(t) ?? 0) + 1);
    }
    // Server boilerplate: words in the descriptions/parameters of most tools of one server say
    // nothing about what a particular tool does; they are down-weighted in that server.
    const serverSize = new Array<number>(serverNames.length).fill(0);
    const serverTermDocs = serverNames.map(() => new Map<string, number>());
    for (let d = 0; d < n; d++) {
      const sid = this.#docServer[d]!;
      serverSize[sid]!++;
      const counts = serverTermDocs[sid]!;
      const seen = new Set<string>();
      for (let fi = F_TITLE; fi < NUM_FIELDS; fi++) for (const t of tfs[d]![fi]!.keys()) seen.add(t);
      for (const t of seen) counts.set(t, (counts.get(t) ?? 0) + 1);
    }
    const acc = new Map<string, { docs: number[]; scores: number[] }>();
    for (let d = 0; d < n; d++) {
      const sid = this.#docServer[d]!;
      const size = serverSize[sid]!;
      const counts = serverTermDocs[sid]!;
      const pseudo = new Map<string, number>();
      for (let fi = 0; fi < NUM_FIELDS; fi++) {
        const norm = 1 - FIELD_B[fi]! + (FIELD_B[fi]! * lens[d]![fi]!) / avgLen[fi]!;
        const weight = FIELD_WEIGHT[fi]! / norm;
        for (const [t, tf] of tfs[d]![fi]!) {
          let w = tf * weight;
          if (fi >= F_TITLE && size >= BOILERPLATE_MIN_TOOLS && counts.get(t)! / size >= BOILERPLATE_FRACTION) w *= BOILERPLATE_WEIGHT;
          pseudo.set(t, (pseudo.get(t) ?? 0) + w);
        }
      }
      for (const [t, tf] of pseudo) {
        // idf is applied at query time (per query word, shared by its alternatives).
        let p = acc.get(t);
        if (!p) acc.set(t, (p = { docs: [], scores: [] }));
        p.docs.push(d);
        p.scores.push((tf * (K1 + 1)) / (tf + K1));
      }
    }
    for (const [t, p] of acc) this.postings.set(t, { docs: Int32Array.from(p.docs), scores: Float64Array.from(p.scores) });
    // Prefix expansion targets real words only, not whole joined tool names.
    const words: string[] = [];
    for (const stems of analyzed.values()) words.push(...stems);
    vocab.seal(words);

    // Server-designating terms: the whole server name ("github", "googlemaps") and its first word
    // ("google", "azure"), kept only when rarely used by tools of other servers.
    const candServers = new Map<string, Set<number>>();
    for (let sid = 0; sid < serverNames.length; sid++) {
      const toks = tokenize(serverNames[sid]!).filter((t) => !STOP_WORDS.has(t));
      if (toks.length === 0) continue;
      for (const t of [toks.join(""), stem(toks[0]!)]) {
        if (t.length < 3) continue;
        let set = candServers.get(t);
        if (!set) candServers.set(t, (set = new Set()));
        set.add(sid);
      }
    }
    for (const [t, sids] of candServers) {
      const p = this.postings.get(t);
      let outside = 0;
      if (p) for (const d of p.docs) if (!sids.has(this.#docServer[d]!)) outside++;
      let outsideDocs = 0;
      for (const sid of serverIds.values()) if (!sids.has(sid)) outsideDocs += serverSize[sid]!;
      if (outsideDocs > 0 && outside / outsideDocs > SERVER_TERM_MAX_OUTSIDE) continue;
      this.#serverTerms.set(
        t,
        [...sids].sort((a, b) => a - b),
      );
    }

    // Name tokens for the name-coverage bonus, minus tokens shared by most tools of the same
    // server ("slack_", "browser_", "API-"), which carry no meaning of their own.
    const nameTokCount = new Map<string, number>();
    const rawNameStems: string[][] = [];
    for (let d = 0; d < n; d++) {
      const stems = [
        ...new Set(
          tokenize(fields[d]!.name)
            .filter((t) => !STOP_WORDS.has(t))
            .map(stem),
        ),
      ];
      rawNameStems.push(stems);
      const sid = this.#docServer[d]!;
      for (const st of stems) nameTokCount.set(`${sid} ${st}`, (nameTokCount.get(`${sid} ${st}`) ?? 0) + 1);
    }
    this.#nameStems = rawNameStems.map((stems, d) => {
      const sid = this.#docServer[d]!;
      const size = serverSize[sid]!;
      const serverToks = new Set(tokenize(serverNames[sid]!).map(stem));
      const kept = stems.filter((st) => !serverToks.has(st) && !(size >= 4 && nameTokCount.get(`${sid} ${st}`)! / size >= 0.5));
      return kept.length > 0 ? kept : stems;
    });
    this.#docAction = Uint8Array.from(fields, (f) => toolAction(tokenize(f.name)));
    this.#paramStems = fields.map((f) => [...new Set(f.texts[F_PARAM_NAMES]!.flatMap((p) => tokenize(p).map(stem)))]);
    this.#serverDocs = serverNames.map(() => [] as number[]);
    for (let d = 0; d < n; d++) this.#serverDocs[this.#docServer[d]!]!.push(d);
  }

  snapshot(): Bm25fSnapshot {
    return {
      size: this.size,
      vocabulary: this.vocabulary.snapshot(),
      postings: [...this.postings].map(([t, p]) => [t, [...p.docs], [...p.scores]]),
      serverTerms: [...this.#serverTerms],
      docServer: [...this.#docServer],
      nameStems: this.#nameStems,
      docAction: [...this.#docAction],
      paramStems: this.#paramStems,
    };
  }

  #addLexicon(): void {
    for (const group of [...SYNONYM_GROUPS, ...ABBREVIATION_GROUPS]) {
      const stemmed = group.map((phrase) => tokenize(phrase).map(stem));
      for (const [i, key] of stemmed.entries()) {
        if (key.length !== 1) continue;
        let list = this.synonyms.get(key[0]!);
        if (!list) this.synonyms.set(key[0]!, (list = []));
        for (const [j, other] of stemmed.entries()) if (j !== i) list.push(other);
      }
    }
  }

  #loanwords: LoanwordIndex | undefined;

  /** The tools' words by how katakana would write them (katakana.ts), built on the first Japanese request. */
  get loanwords(): LoanwordIndex {
    this.#loanwords ??= loanwordIndex(this.vocabulary.surfaces());
    return this.#loanwords;
  }

  idf(term: string): number {
    const df = this.vocabulary.df.get(term) ?? 0;
    return df > 0 ? Math.log(1 + (this.size - df + 0.5) / (df + 0.5)) : 0;
  }

  isKnown(word: string): boolean {
    const s = stem(word);
    return this.postings.has(s) || this.vocabulary.hasSurface(word) || this.synonyms.has(s);
  }

  /** BM25F scores of every doc for the query groups (0 where nothing matched); `intent`: what the request asks (intent.ts). */
  score(groups: Group[], intent: number = ACTION_OTHER, valueParams: readonly string[][] = []): Float64Array {
    const n = this.size;
    const total = new Float64Array(n);
    const matched = new Float64Array(n);
    const groupBest = new Float64Array(n);
    const inGroup = new Uint8Array(n);
    const touched: number[] = [];
    const serverBoost = new Map<number, number>();
    /** Best weight of each stem anywhere in the query (for name coverage). */
    const queryTerms = new Map<string, number>();
    let required = 0;

    for (const group of groups) {
      if (!group.optional) required++;
      touched.length = 0;
      let named: { sids: number[]; w: number; idf: number } | undefined;
      for (const alt of group.alts) {
        const w = alt.w * alt.idf;
        if (alt.w > (queryTerms.get(alt.term) ?? 0)) queryTerms.set(alt.term, alt.w);
        const p = this.postings.get(alt.term);
        if (p) {
          const { docs, scores } = p;
          for (let i = 0; i < docs.length; i++) {
            const d = docs[i]!;
            const sc = scores[i]! * w;
            if (inGroup[d] === 0) {
              inGroup[d] = 1;
              touched.push(d);
            }
            if (sc > groupBest[d]!) groupBest[d] = sc;
          }
        }
        const sids = alt.fallback ? undefined : this.#serverTerms.get(alt.term);
        if (sids) {
          for (const sid of sids) serverBoost.set(sid, Math.max(serverBoost.get(sid) ?? 0, alt.w));
          if (!named || alt.w > named.w) named = { sids, w: alt.w, idf: alt.idf };
        }
      }
      if (named) {
        // A word naming a server scores the same for all of that server's tools: a tool repeating
        // "Slack" in its description is not more relevant than its siblings.
        const c = named.w * named.idf * SERVER_FIELD_SAT;
        for (const sid of named.sids) {
          for (const d of this.#serverDocs[sid]!) {
            if (inGroup[d] === 0) {
              inGroup[d] = 1;
              touched.push(d);
            }
            groupBest[d] = c;
          }
        }
      }
      for (const d of touched) {
        total[d]! += groupBest[d]!;
        if (!group.optional) matched[d]! += 1;
        groupBest[d] = 0;
        inGroup[d] = 0;
      }
    }

    for (let d = 0; d < n; d++) {
      let score = total[d]!;
      if (!(score > 0)) continue;
      if (required > 0) score *= Math.pow(matched[d]! / required, COORD);
      const b = serverBoost.get(this.#docServer[d]!);
      if (b !== undefined) score *= 1 + SERVER_BOOST * b;
      const stems = this.#nameStems[d]!;
      if (stems.length > 0) {
        let cov = 0;
        for (const st of stems) cov += queryTerms.get(st) ?? 0;
        score *= 1 + (NAME_COVERAGE * cov) / stems.length;
      }
      const action = this.#docAction[d];
      score *= 1 - INTENT_PENALTY * actionMismatch(intent, action!);
      const params = this.#paramStems[d]!;
      if (valueParams.length > 0 && params.length > 0) {
        let takes = 0;
        for (const kind of valueParams) if (kind.some((p) => params.includes(p))) takes++;
        score *= 1 + (VALUE_PARAM_BONUS * takes) / valueParams.length;
      }
      total[d] = score > 0 ? score : 0;
    }
    return total;
  }
}
