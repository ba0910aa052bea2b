/** The one way zod problems are printed, at every boundary: `path: message; path: message`. */
import type * as z from "zod";

export function formatIssues(issues: readonly z.core.$ZodIssue[], opts: { whole?: string; max?: number } = {}): string {
  const shown = issues.slice(0, opts.max ?? issues.length).map((i) => {
    const path = i.path.map(String).join(".");
    return path ? `${path}: ${i.message}` : opts.whole ? `${opts.whole}: ${i.message}` : i.message;
  });
  const more = issues.length - shown.length;
  return `${shown.join("; ")}${more > 0 ? `; and ${more} more` : ""}`;
}
