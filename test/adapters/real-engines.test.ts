/** The adapter contract against the real engines installed on this machine. */
import podman from "../../adapters/podman.ts";
import docker from "../../adapters/docker.ts";
import { engineEnv } from "../../src/engines/registry.ts";
import { ENGINES, IMAGE } from "../support/env.ts";
import { adapterContract } from "./contract.ts";

const FACTORIES = { podman, docker } as const;
const env = engineEnv(process.env);

for (const name of ENGINES) {
  const factory = FACTORIES[name as keyof typeof FACTORIES];
  if (!factory) throw new Error(`no real adapter named ${name}`);
  adapterContract(`${name} (real engine)`, {
    make: () => factory({ env }),
    makeMissing: () => factory({ env, binary: `${name}-does-not-exist` }),
    image: IMAGE,
    engineEnv: env,
    real: true,
  });
}
