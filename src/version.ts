/** The bridge's version, from package.json (its own module so `--version` and `--help` load nothing else). */
import pkg from "../package.json" with { type: "json" };

export const VERSION: string = pkg.version;
