/**
 * Waiting for an event instead of for time. "Sleep 200 ms, then act" passes on a quiet machine and
 * fails on a busy one; these settle when the thing happens (a callback fires, n items have arrived, a
 * file says what the test waits for), and the test's own timeout is the only guard. Time that the
 * code under test measures is moved with test/support/manual-clock.ts instead.
 */
import { existsSync, readFileSync, watch } from "node:fs";
import { basename, dirname } from "node:path";

/** Items a callback hands over, and a way to wait until enough have come. */
export class Arrivals<T> {
  readonly items: T[] = [];
  #waiters: Array<() => boolean> = [];

  /** Use as the callback: `push = arrivals.push`. */
  push = (item: T): void => {
    this.items.push(item);
    this.#waiters = this.#waiters.filter((settled) => !settled());
  };

  /** Settles with the items once `check(items)` holds (at once if it does now). */
  until(check: (items: T[]) => boolean): Promise<T[]> {
    return new Promise((resolve) => {
      const settled = () => {
        if (!check(this.items)) return false;
        resolve(this.items);
        return true;
      };
      if (!settled()) this.#waiters.push(settled);
    });
  }

  /** Settles once `n` items have come. */
  count(n: number): Promise<T[]> {
    return this.until((items) => items.length >= n);
  }

  /** Settles with the first item (since the start) that `match` accepts. */
  async find(match: (item: T) => boolean): Promise<T> {
    const items = await this.until((all) => all.some(match));
    return items.find(match)!;
  }
}

/**
 * Settles with the text of `path` once `check` accepts it, woken by the file system's change events
 * (the file may not exist yet; its folder must). A watch is set up asynchronously, and a write in that
 * moment would go unseen: the file is also looked at every 100 ms until then.
 */
export function fileSays(path: string, check: (text: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (settle: () => void) => {
      done = true;
      clearInterval(fallback);
      watcher.close();
      settle();
    };
    const look = () => {
      if (done) return;
      const text = existsSync(path) ? readFileSync(path, "utf8") : undefined;
      if (text !== undefined && check(text)) finish(() => resolve(text));
    };
    const watcher = watch(dirname(path), (_event, name) => {
      if (name === null || name === basename(path)) look();
    });
    watcher.on("error", (err) => {
      if (!done) finish(() => reject(err));
    });
    const fallback = setInterval(look, 100);
    look();
  });
}
