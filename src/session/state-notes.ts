/**
 * What a result says about the interpreter's state when the model could not have known it: a run the
 * client cancelled (its own result never reached the model: opencode's model got only "Request timed
 * out"), and a NameError in an interpreter that started with this very call (a client that started the
 * bridge anew, e.g. `opencode run --continue`, while its model remembers variables from before).
 */
import type { ErrorInfo } from "../sandbox/frames.ts";
import { formatSeconds } from "./outcome.ts";

/** The note the next run of the session carries after a run the client cancelled. */
export function afterCancelNote(c: { ranMs: number; interrupted: boolean; traceback?: string }): string {
  if (!c.interrupted)
    return "Note: the client cancelled the previous call before its code started; none of it ran, and the session's variables are as they were.";
  const where = lineOfInterrupt(c.traceback);
  return `Note: the client cancelled the previous call after ${formatSeconds(Math.round(c.ranMs / 100) / 10)}; its code was interrupted${where ? ` at ${where}` : ""} and the session kept its variables: what that code assigned before the interrupt is set, the rest did not run.`;
}

/**
 * A NameError in the first call an interpreter ran: nothing defined before this call can be in it.
 * `firstOfSession`: the session itself began with this call (a new bridge, a new session), which a model
 * that remembers earlier calls cannot tell; else an earlier result said why the interpreter was replaced.
 */
export function freshNameErrorNote(error: ErrorInfo | undefined, c: { ageMs: number; firstOfSession: boolean }): string | undefined {
  if (error?.type !== "NameError") return undefined;
  const age = formatSeconds(Math.round(c.ageMs / 1000));
  if (!c.firstOfSession)
    return `Note: this call was the first in a new interpreter (started ${age} ago: the one before it ended, as an earlier result said), so nothing defined before it is here. Define what you need again.`;
  return `Note: this call was the first in a new interpreter (started ${age} ago), so nothing defined by calls before it is here: a client that started this MCP server again (a new process, a resumed conversation) or another session starts empty. Define what you need again.`;
}

/** `line N` of the run's own code where the interrupt landed (the innermost frame of a `<cell-…>`). */
function lineOfInterrupt(traceback: string | undefined): string | undefined {
  const lines = [...(traceback ?? "").matchAll(/File "<cell-\d+>", line (\d+)/g)];
  const last = lines.at(-1)?.[1];
  return last ? `line ${last}` : undefined;
}
