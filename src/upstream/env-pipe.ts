/**
 * An envFile that is a named pipe, read when its server starts. 1Password mounts .env files this way:
 * each read asks the user to authorize it, then the secrets come through the pipe once. The read runs
 * in a `cat` child, killed at the deadline: a read in this process would leave a thread blocked in
 * open() for good when nothing ever writes (1Password locked, the prompt dismissed).
 */
import { existsSync } from "node:fs";
import { parse as parseDotenv } from "dotenv";
import { runCommand } from "../host/process.ts";

/** How long a person has to answer 1Password's prompt before the server's start fails. */
export const ENV_PIPE_TIMEOUT_MS = 60_000;

export async function readEnvPipe(file: string, timeoutMs = ENV_PIPE_TIMEOUT_MS): Promise<Record<string, string>> {
  // By its full path where it is there: a client started from a desktop launcher may give a PATH without it.
  const cat = ["/bin/cat", "/usr/bin/cat"].find((p) => existsSync(p)) ?? "cat";
  const r = await runCommand(cat, [file], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin" }, timeoutMs });
  if (r.timedOut)
    throw new Error(
      `its envFile ${file} is a named pipe and nothing came through it within ${timeoutMs >= 1000 ? `${Math.round(timeoutMs / 1000)} s` : `${timeoutMs} ms`}: whatever serves it did not answer (1Password mounts .env files this way and asks before each read: authorize the read, or unlock 1Password)`,
    );
  if (r.exitCode !== 0) throw new Error(`its envFile ${file} could not be read: ${r.stderr.trim() || `cat exited with ${r.exitCode}`}`);
  return parseDotenv(r.stdout);
}
