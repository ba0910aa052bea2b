/**
 * Sentences of a tool description that address the model instead of saying what the tool does
 * ("STOP and use this tool NOW", "You must always call this first", "IMPORTANT: never ...").
 * They are left out of the index, so such text gains a tool no rank.
 */

/** Shouted cue words: an all-caps word from this list marks a sentence as an order. */
const SHOUTED = new Set([
  "MUST",
  "ALWAYS",
  "NEVER",
  "IMPORTANT",
  "STOP",
  "NOW",
  "CRITICAL",
  "MANDATORY",
  "URGENT",
  "IMMEDIATELY",
  "ONLY",
  "REQUIRED",
  "DO",
  "NOT",
  "ATTENTION",
  "WARNING",
  "NOTE",
  "ALWAYS",
  "FIRST",
]);

/** Orders to the reader in plain case. */
const ORDER =
  /\b(?:you|agents?|assistants?|llms?|ai|models?)\s+(?:must|should|shall|need to|have to|are required to)\b|\b(?:always|never|immediately)\s+(?:call|use|invoke|run|prefer|choose|select|pick)\b|\b(?:do not|don't|never)\s+(?:call|use|invoke)\s+(?:any\s+)?other\b|\b(?:call|use|invoke)\s+this(?:\s+\w+)?\s+(?:first|before|whenever|instead|now|immediately)\b|\bbefore (?:using|calling) any other\b|\bignore (?:all |any )?(?:previous|prior|other)\b/i;

/** True when a sentence speaks to the model rather than describing the tool. */
export function isDirective(sentence: string): boolean {
  if (ORDER.test(sentence)) return true;
  let shouted = 0;
  for (const w of sentence.match(/\b[A-Z]{2,}\b/g) ?? []) if (SHOUTED.has(w)) shouted++;
  return shouted >= 1 && /\b(?:this|the)\s+(?:tool|function)\b|\b(?:call|use|invoke)\b/i.test(sentence) ? true : shouted >= 2;
}
