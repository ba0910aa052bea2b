/**
 * What a request asks to do with a thing, and what a tool does to one: read it, create it, change
 * it or delete it (CRUD, the verbs of nearly every API). A request phrased as a question or with a
 * reading verb ("which droplets do I have", "show all my tasks") and no verb that changes anything
 * wants a tool that reads: tools that create, change or delete rank a little lower for it.
 */
import { stem } from "./tokenize.ts";

export const ACTION_OTHER = 0;
export const ACTION_READ = 1;
export const ACTION_WRITE = 2;

const READ_VERBS =
  "get list read show view fetch retrieve search find query describe lookup look display browse check count inspect see".split(" ");
const WRITE_VERBS = (
  "create add insert generate make post put upload push send publish append import register " +
  "update edit modify change patch set rename move replace enable disable assign " +
  "delete remove destroy drop erase purge clear wipe unassign cancel"
).split(" ");
/** Question words: a request that asks something wants to read. */
const QUESTION_WORDS = new Set("what which who whose how where when is are does do have has exist exists".split(" "));

/** Verbs that read when said to the speaker ("give me the value", "tell us which"). */
const ASKING_VERBS = new Set(["give", "tell"]);

const ACTION_OF = new Map<string, number>();
for (const v of READ_VERBS) ACTION_OF.set(stem(v), ACTION_READ);
for (const v of WRITE_VERBS) ACTION_OF.set(stem(v), ACTION_WRITE);

/** The action of a tool: that of the first verb of its name (tokens, lower case), else OTHER. */
export function toolAction(nameTokens: readonly string[]): number {
  for (const t of nameTokens) {
    const a = ACTION_OF.get(stem(t));
    if (a !== undefined) return a;
  }
  return ACTION_OTHER;
}

/**
 * READ when the request (tokens, stop words included) asks or reads and changes nothing; WRITE when it
 * says to change something and neither asks nor reads ("add a comment saying ..."); else OTHER.
 */
export function queryAction(queryTokens: readonly string[]): number {
  let read = false;
  let write = false;
  for (const [i, t] of queryTokens.entries()) {
    // "give me", "tell us": a request to be told something.
    if (ASKING_VERBS.has(t) && (queryTokens[i + 1] === "me" || queryTokens[i + 1] === "us")) {
      read = true;
      continue;
    }
    const a = ACTION_OF.get(stem(t));
    if (a === ACTION_WRITE) write = true;
    else if (a === ACTION_READ || QUESTION_WORDS.has(t)) read = true;
  }
  return read === write ? ACTION_OTHER : read ? ACTION_READ : ACTION_WRITE;
}
