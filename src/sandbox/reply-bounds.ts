/**
 * What the host may send back into the sandbox for one request. An upstream server's result is
 * relayed as JSON; one nested deeper or larger than the sandbox can decode fails that call with a clear
 * error instead of reaching (and stopping) the sandbox's reader.
 */

/** Deepest nesting relayed (real tool results rarely pass 20; Python's json gives up near 1000). */
export const MAX_REPLY_DEPTH = 128;
/** Largest reply relayed, as JSON. */
export const MAX_REPLY_BYTES = 16 * 1024 * 1024;

/** The reply's JSON text, or why it may not be sent; `what` names the request ("github.get_issue"). */
export function boundedReply(value: unknown, what: string): { json: string } | { refused: string } {
  const depth = depthOver(value, MAX_REPLY_DEPTH);
  if (depth)
    return {
      refused: `${what} returned a result nested more than ${MAX_REPLY_DEPTH} levels deep; the sandbox accepts at most ${MAX_REPLY_DEPTH}`,
    };
  let json: string;
  try {
    json = JSON.stringify(value) ?? "null";
  } catch (err) {
    return { refused: `${what} returned a result that cannot be sent as JSON: ${(err as Error).message}` };
  }
  if (json.length > MAX_REPLY_BYTES) {
    return {
      refused: `${what} returned ${(json.length / 1048576).toFixed(1)} MiB, over the ${MAX_REPLY_BYTES / 1048576} MiB a result may be in the sandbox; ask the tool for less (a page, a filter, a limit)`,
    };
  }
  return { json };
}

/** True when `value` nests deeper than `max` (iterative: a hostile depth cannot exhaust the stack). */
function depthOver(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (d >= max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v))
      if (child !== null && typeof child === "object") stack.push([child, d + 1]);
  }
  return false;
}
