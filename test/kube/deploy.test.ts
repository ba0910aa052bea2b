/**
 * deploy/sandbox.yaml is generated from the engine's own pod spec (scripts/kube/manifests.ts): the
 * SandboxTemplate a team applies must be exactly the pod the engine makes for a cold start. No
 * cluster needed.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { sandboxManifests } from "../../scripts/kube/manifests.ts";

test("deploy/sandbox.yaml is what `bun scripts/kube/manifests.ts` generates from the engine's pod spec", () => {
  const committed = readFileSync(join(import.meta.dir, "..", "..", "deploy", "sandbox.yaml"), "utf8");
  expect(committed).toBe(sandboxManifests());
});
