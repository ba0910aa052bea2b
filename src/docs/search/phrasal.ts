/**
 * English phrasal verbs: a verb and a particle that together mean what tools name with one verb
 * ("bring it back" restores, "turn off" disables, "tear down" deletes). Word matching sees "bring" and
 * "back", which no tool uses, and the word vectors average them into neither; this table says it.
 * General English, not phrasings of particular requests: each entry is the verb's everyday sense.
 * Likewise a question that asks for a quantity names it without saying it: "how much" is a cost or a
 * balance, "how far" a distance, "how high" an elevation.
 */
import { STOP_WORDS, stem } from "./tokenize.ts";

const TABLE: [verb: string, particle: string, means: string[]][] = [
  ["bring", "back", ["restore", "recover"]],
  ["put", "back", ["restore"]],
  ["go", "back", ["revert", "rollback", "undo", "previous"]],
  ["roll", "back", ["rollback", "revert"]],
  ["give", "back", ["refund", "return"]],
  ["pay", "back", ["refund"]],
  ["back", "out", ["revert"]],
  ["turn", "off", ["stop", "shutdown", "power", "disable"]],
  ["switch", "off", ["stop", "shutdown", "power", "disable"]],
  ["turn", "on", ["enable", "start"]],
  ["switch", "on", ["enable", "start"]],
  ["shut", "down", ["stop", "shutdown"]],
  ["power", "off", ["stop", "shutdown"]],
  ["power", "down", ["stop", "shutdown"]],
  ["spin", "up", ["create", "start", "launch"]],
  ["fire", "up", ["start", "launch"]],
  ["boot", "up", ["start", "boot"]],
  ["wake", "up", ["start", "resume"]],
  ["kick", "off", ["start", "trigger", "run"]],
  ["tear", "down", ["delete", "destroy"]],
  ["take", "down", ["stop", "delete", "disable"]],
  ["throw", "away", ["delete", "discard"]],
  ["get", "rid", ["delete", "remove"]],
  ["clean", "up", ["delete", "cleanup", "remove"]],
  ["set", "up", ["create", "configure", "setup"]],
  ["sign", "up", ["register", "signup"]],
  ["log", "out", ["logout"]],
  ["sign", "out", ["logout"]],
  ["look", "up", ["search", "lookup", "find"]],
  ["find", "out", ["get", "check"]],
  ["catch", "up", ["summary", "recent", "history"]],
  ["call", "off", ["cancel"]],
  ["hold", "off", ["pause", "postpone"]],
  ["put", "off", ["postpone", "reschedule"]],
  ["write", "down", ["save", "note", "record"]],
  ["note", "down", ["save", "note"]],
  ["jot", "down", ["save", "note"]],
  ["hand", "over", ["transfer"]],
  ["cross", "off", ["complete", "done"]],
  ["tick", "off", ["complete", "done"]],
  ["check", "off", ["complete", "done"]],
];

/** Past forms that do not stem to the verb. */
const IRREGULAR: Record<string, string> = {
  brought: "bring",
  went: "go",
  gone: "go",
  gave: "give",
  given: "give",
  paid: "pay",
  spun: "spin",
  woke: "wake",
  woken: "wake",
  tore: "tear",
  torn: "tear",
  took: "take",
  taken: "take",
  threw: "throw",
  thrown: "throw",
  got: "get",
  gotten: "get",
  wrote: "write",
  written: "write",
  held: "hold",
};

const BY_VERB = new Map<string, [particle: string, means: string[]][]>();
for (const [verb, particle, means] of TABLE) {
  const key = stem(verb);
  let list = BY_VERB.get(key);
  if (!list) BY_VERB.set(key, (list = []));
  list.push([particle, means]);
}

/** Words that may stand between a verb and its particle ("bring it back", "turn everything off"). */
const BETWEEN = new Set(["everything", "everyone", "all", "stuff", "things"]);
const MAX_BETWEEN = 2;

export interface PhrasalVerb {
  /** Indexes in the request's tokens of the verb and of its particle. */
  verb: number;
  particle: number;
  means: readonly string[];
}

/** The phrasal verbs of a request's tokens (lowercase, stop words included). */
export function phrasalVerbs(tokens: readonly string[]): PhrasalVerb[] {
  const out: PhrasalVerb[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    const entries = BY_VERB.get(stem(IRREGULAR[t] ?? t));
    if (!entries) continue;
    for (let j = i + 1; j <= i + 1 + MAX_BETWEEN && j < tokens.length; j++) {
      const hit = entries.find(([p]) => p === tokens[j]);
      if (hit) {
        out.push({ verb: i, particle: j, means: hit[1] });
        break;
      }
      if (!STOP_WORDS.has(tokens[j]!) && !BETWEEN.has(tokens[j]!)) break;
    }
  }
  return out;
}

/** "how much", "how far"...: the quantity the question asks for, in the words tools use for it. */
const QUANTITIES: Record<string, string[]> = {
  much: ["cost", "price", "balance", "amount", "total"],
  many: ["count", "number", "total"],
  far: ["distance"],
  long: ["duration", "time", "distance"],
  high: ["height", "elevation", "altitude"],
  tall: ["height", "elevation", "altitude"],
  big: ["size"],
  large: ["size"],
  old: ["age"],
  fast: ["speed"],
  often: ["frequency", "schedule"],
};

/** The quantities a request's tokens (lowercase, stop words included) ask for with "how ...". */
export function askedQuantities(tokens: readonly string[]): string[][] {
  const out: string[][] = [];
  for (let i = 0; i + 1 < tokens.length; i++) {
    if (tokens[i] !== "how") continue;
    const q = QUANTITIES[tokens[i + 1]!];
    if (q) out.push(q);
  }
  return out;
}
