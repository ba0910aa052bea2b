/**
 * What one session installed, kept on the host: every later run (and a fresh interpreter after a crash
 * or an idle stop) is told the folders to put on sys.path, so installs outlive the interpreter for the
 * session's life. MCP_BRIDGE_PACKAGES is asked for once per session, with its first run.
 */
import type { InstalledPackage } from "./install.ts";

export class SessionPackages {
  #installed = new Map<string, InstalledPackage>();
  #alwaysDone = false;
  /** Why the current sandbox cannot receive installs (its engine does not see this host's folders), if so. */
  unavailable: string | undefined = "the sandbox has not started";

  add(list: InstalledPackage[]): void {
    for (const p of list) this.#installed.set(p.path, p);
  }

  get installed(): InstalledPackage[] {
    return [...this.#installed.values()];
  }

  /** The user's list was installed (or tried) in this session. */
  alwaysDone(): void {
    this.#alwaysDone = true;
  }

  /** Forget everything (run_python with reset=true). */
  clear(): void {
    this.#installed.clear();
    this.#alwaysDone = false;
  }

  /** What the exec frame carries for entrypoint/packages.py. */
  execSpec(always: string[]): { paths: string[]; always?: string[] } | undefined {
    if (this.unavailable) return undefined;
    const wantsAlways = always.length > 0 && !this.#alwaysDone;
    if (!this.#installed.size && !wantsAlways) return undefined;
    return { paths: [...this.#installed.keys()], ...(wantsAlways ? { always } : {}) };
  }
}
