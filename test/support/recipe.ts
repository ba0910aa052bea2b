/** The image recipe's digest, as scripts/build-image.sh computes it (its label and its tarball's name). */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./env.ts";

const FILES = [
  "scripts/build-image.sh",
  "scripts/image-sources.sh",
  "image/recipe.sh",
  "image/debian.lock",
  "image/python-top40.json",
  "image/manifest.py",
  "image/check.py",
];

/** build-image.sh's recipe_of: the files, the wheels' lock for the batteries image, then the variant. */
export function recipeDigest(variant: "batteries" | "slim"): string {
  const hash = createHash("sha256");
  for (const f of [...FILES, ...(variant === "batteries" ? ["image/wheels.lock"] : [])]) hash.update(readFileSync(join(ROOT, f)));
  hash.update(`${variant}\n`);
  return hash.digest("hex").slice(0, 16);
}

export interface ListedPackage {
  rank: number;
  distribution: string;
  import: string;
  share_of_llm_answers_pct: number | null;
}

/** The 40 packages the batteries image promises (image/python-top40.json). */
export const TOP40: ListedPackage[] = JSON.parse(readFileSync(join(ROOT, "image", "python-top40.json"), "utf8")).packages;

/** Python that imports each of TOP40 in turn and prints the JSON list of those that failed, with why. */
export const IMPORT_ALL = `import importlib, json
failed = []
for name in ${JSON.stringify(TOP40.map((p) => p.import))}:
    try:
        importlib.import_module(name)
    except Exception as e:
        failed.append(f"{name}: {type(e).__name__}: {e}")
print(json.dumps(failed))`;
