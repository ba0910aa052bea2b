/**
 * What a request asks to do with a thing, and what a tool does to one: read it, create it, change
 * it or delete it (CRUD, the verbs of nearly every API). A request phrased as a question or with a
 * reading verb ("which droplets do I have", "show all my tasks") and no verb that changes anything
 * wants a tool that reads: tools that create, change or delete rank a little lower for it. One that
 * changes something one way wants a tool that does that: for "set key maintenance to on" a tool that
 * deletes ranks lower, and one that creates half as much lower (put, set and upsert do either).
 */
import { stem } from "./tokenize.ts";

export const ACTION_OTHER = 0;
export const ACTION_READ = 1;
export const ACTION_CREATE = 2;
export const ACTION_UPDATE = 3;
export const ACTION_DELETE = 4;
/** A request that changes things in more than one way ("move it and delete the old one"): only reading tools rank lower. */
export const ACTION_WRITE = 5;

const READ_VERBS =
  "get list read show view fetch retrieve search find query describe lookup look display browse check count inspect see".split(" ");
const CREATE_VERBS =
  "create add insert generate make post upload push send publish import register write save fork clone copy duplicate deploy leave remember memorize".split(
    " ",
  );
const UPDATE_VERBS =
  "update append edit modify change patch set put rename move replace enable disable assign toggle scale resize promote upgrade bump increase raise restore revert".split(
    " ",
  );
const DELETE_VERBS =
  "delete remove destroy drop erase purge clear wipe unassign cancel forget kill terminate uninstall revoke trash discard".split(" ");
/** Question words: a request that asks something wants to read. */
const QUESTION_WORDS = new Set("what whats which who whose how where when".split(" "));
/** Verbs that ask only where a request begins with them ("is there a way to ...", "does it have ..."), not in a statement ("remember that Alice is an engineer"). */
const ASKING_FIRST = new Set("is are does do have has exist exists".split(" "));

/** Verbs that read when said to the speaker ("give me the value", "tell us which"). */
const ASKING_VERBS = new Set(["give", "tell"]);

const ACTION_OF = new Map<string, number>();
for (const v of READ_VERBS) ACTION_OF.set(stem(v), ACTION_READ);
for (const v of CREATE_VERBS) ACTION_OF.set(stem(v), ACTION_CREATE);
for (const v of UPDATE_VERBS) ACTION_OF.set(stem(v), ACTION_UPDATE);
for (const v of DELETE_VERBS) ACTION_OF.set(stem(v), ACTION_DELETE);

/** The action of a tool: that of the first verb of its name (tokens, lower case), else OTHER. */
export function toolAction(nameTokens: readonly string[]): number {
  for (const t of nameTokens) {
    const a = ACTION_OF.get(stem(t));
    if (a !== undefined) return a;
  }
  return ACTION_OTHER;
}

/**
 * READ when the request (tokens, stop words included) asks or reads and changes nothing; CREATE, UPDATE or
 * DELETE when it says to change something one way and neither asks nor reads ("add a comment saying ...");
 * WRITE when it changes things in several ways; else OTHER.
 */
export function queryAction(queryTokens: readonly string[]): number {
  let read = false;
  const writes = new Set<number>();
  for (const [i, t] of queryTokens.entries()) {
    // "give me", "tell us": a request to be told something.
    if (ASKING_VERBS.has(t) && (queryTokens[i + 1] === "me" || queryTokens[i + 1] === "us")) {
      read = true;
      continue;
    }
    const a = ACTION_OF.get(stem(t));
    if (a !== undefined && a !== ACTION_READ) writes.add(a);
    else if (a === ACTION_READ || QUESTION_WORDS.has(t) || (i === 0 && ASKING_FIRST.has(t))) read = true;
  }
  if (read === writes.size > 0) return ACTION_OTHER;
  if (read) return ACTION_READ;
  return writes.size === 1 ? [...writes][0]! : ACTION_WRITE;
}

/**
 * How much lower a tool whose name does `tool` ranks for a request that asks `request`: 1 for the
 * opposite (reading for a change, a change for a reading, deleting for creating or updating), 0.5 between
 * creating and updating (put, set, upsert do either), 0 where either says nothing.
 */
export function actionMismatch(request: number, tool: number): number {
  if (request === ACTION_OTHER || tool === ACTION_OTHER || request === tool) return 0;
  if (request === ACTION_WRITE) return tool === ACTION_READ ? 1 : 0;
  if ((request === ACTION_CREATE && tool === ACTION_UPDATE) || (request === ACTION_UPDATE && tool === ACTION_CREATE)) return 0.5;
  return 1;
}
