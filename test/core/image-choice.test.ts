/**
 * Which image a start uses when MCP_BRIDGE_IMAGE is unset (src/session/image-choice.ts), through a real
 * Session on the test-only local-python engine wrapped so that it "has" some images and refuses a
 * start from any other as podman does (`Error: ... image not known`, exit 125). No startup check runs
 * here, so what is shown is the start's own fallback: the first start fails on the default image, the
 * offline image is found and used, and later starts go straight to it.
 */
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RuntimeAdapter } from "../../adapters/types.ts";
import { createApp, type App } from "../../src/app.ts";
import { DEFAULT_IMAGE } from "../../src/config/env.ts";
import type { BridgeError } from "../../src/errors.ts";
import type { ClientChannel } from "../../src/server/client-requests.ts";
import type { Session } from "../../src/session/session.ts";
import { localPythonEngine } from "../support/local-python-adapter.ts";

/** An offline image named apart from the default (MCP_BRIDGE_OFFLINE_IMAGE): the one fallback there is. */
const OFFLINE = "mcp-code-exec-sandbox:offline";
const DEFAULT = DEFAULT_IMAGE;

let open: Array<{ app: App; session: Session }> = [];
afterEach(async () => {
  for (const { app, session } of open) {
    await session.close();
    await app.close();
  }
  open = [];
});

/**
 * A session whose engine has `images`; `started` lists the image of every start it was asked for.
 * `pull`: the engine can pull, and a pull of an image in `registry` adds it to `images`.
 */
function sessionWith(images: string[], env: Record<string, string> = {}, pull?: { registry: string[]; pulls: string[] }) {
  const local = localPythonEngine();
  const started: string[] = [];
  const adapter: RuntimeAdapter = {
    ...local.adapter,
    name: "local-python",
    async imageExists(image) {
      return images.includes(image);
    },
    async runArgv(spec) {
      started.push(spec.image);
      if (images.includes(spec.image)) return local.adapter.runArgv(spec);
      const say = `Error: ${spec.image}: image not known`;
      // After a moment, as an engine takes one to look the image up (and after the entrypoint is written:
      // under bun test a write to a pipe already closed fails the test even when the write is caught).
      return ["/bin/sh", "-c", `sleep 0.1; echo '${say}' >&2; exit 125`];
    },
    imageHint: (image) => `build or load ${image}`,
    ...(pull
      ? {
          async pull(image: string, onLine: (line: string) => void) {
            pull.pulls.push(image);
            onLine(`Trying to pull ${image}...`);
            await Bun.sleep(50);
            if (!pull.registry.includes(image)) throw new Error(`manifest unknown: ${image}`);
            images.push(image);
          },
        }
      : {}),
  };
  const home = mkdtempSync(join(tmpdir(), "mcx-image-"));
  const app = createApp(
    {
      PATH: process.env.PATH,
      HOME: home,
      MCP_BRIDGE_STATE_DIR: join(home, "state"),
      MCP_BRIDGE_LOG_LEVEL: "ERROR",
      MCP_BRIDGE_OFFLINE_IMAGE: OFFLINE,
      ...env,
    },
    home,
  );
  const session = app.newSession({ engine: async () => ({ adapter, info: await local.adapter.probe() }) });
  open.push({ app, session });
  return { session, started };
}

test("unset: a start that finds the default image missing uses the offline image, and the next start goes straight to it", async () => {
  const { session, started } = sessionWith([OFFLINE]);
  const r = await session.run({ code: "6 * 7" });
  expect([r.error, r.value]).toEqual([undefined, "42"]);
  expect(started).toEqual([DEFAULT, OFFLINE]);
  const again = await session.run({ code: "1", reset: true });
  expect(again.value).toBe("1");
  expect(started).toEqual([DEFAULT, OFFLINE, OFFLINE]);
});

test("set to the default (as an MCPB bundle's settings write it): the same fallback as unset", async () => {
  const { session, started } = sessionWith([OFFLINE], { MCP_BRIDGE_IMAGE: DEFAULT });
  expect((await session.run({ code: "1" })).value).toBe("1");
  expect(started).toEqual([DEFAULT, OFFLINE]);
});

test("unset, with the default image present: it is the one used", async () => {
  const { session, started } = sessionWith([DEFAULT, OFFLINE]);
  expect((await session.run({ code: "1" })).value).toBe("1");
  expect(started).toEqual([DEFAULT]);
});

test("the image the user named is used even when missing: no other image is started instead", async () => {
  const { session, started } = sessionWith([OFFLINE], { MCP_BRIDGE_IMAGE: "mine:1" });
  await expect(session.run({ code: "1" })).rejects.toThrow("image mine:1 not found");
  expect(started).toEqual(["mine:1"]);
});

test("neither image present: the default is named missing, once per start, with the engine's hint", async () => {
  const { session, started } = sessionWith([]);
  await expect(session.run({ code: "1" })).rejects.toThrow(`image ${DEFAULT} not found`);
  expect(started).toEqual([DEFAULT]);
});

test("a start on the offline image that fails for another reason, retried after a fresh engine probe, names that reason, not the default image missing", async () => {
  // The engine as the bridge's selector gives it: a fresh probe makes a new adapter object of the same engine.
  const local = localPythonEngine();
  const started: string[] = [];
  const make = (): RuntimeAdapter => ({
    ...local.adapter,
    name: "local-python",
    async imageExists(image) {
      return image === OFFLINE;
    },
    async runArgv(spec) {
      started.push(spec.image);
      const say =
        spec.image === OFFLINE ? "Error: crun: setrlimit RLIMIT_NPROC: no such thing here" : `Error: ${spec.image}: image not known`;
      return ["/bin/sh", "-c", `sleep 0.1; echo '${say}' >&2; exit ${spec.image === OFFLINE ? 1 : 125}`];
    },
    imageHint: (image) => `build or load ${image}`,
  });
  let adapter = make();
  const home = mkdtempSync(join(tmpdir(), "mcx-image-"));
  const app = createApp(
    {
      PATH: process.env.PATH,
      HOME: home,
      MCP_BRIDGE_STATE_DIR: join(home, "state"),
      MCP_BRIDGE_LOG_LEVEL: "ERROR",
      MCP_BRIDGE_OFFLINE_IMAGE: OFFLINE,
    },
    home,
  );
  const session = app.newSession({
    engine: async () => ({ adapter, info: { ...(await local.adapter.probe()), cached: true } }),
    refreshEngine: () => {
      adapter = make();
      return true;
    },
  });
  open.push({ app, session });
  const err = await session.run({ code: "1" }).catch((e: unknown) => e);
  expect(started).toEqual([DEFAULT, OFFLINE, OFFLINE]);
  expect(String(err)).not.toContain(`image ${DEFAULT} not found`);
  expect(String(err)).toContain("setrlimit RLIMIT_NPROC");
});

test("an engine that can pull gets the missing default image, then starts from it; the offline image still comes first", async () => {
  const pull = { registry: [DEFAULT], pulls: [] as string[] };
  const { session, started } = sessionWith([], {}, pull);
  expect((await session.run({ code: "6 * 7" })).value).toBe("42");
  expect(pull.pulls).toEqual([DEFAULT]);
  expect(started).toEqual([DEFAULT, DEFAULT]);
  const withOffline = sessionWith([OFFLINE], {}, { registry: [DEFAULT], pulls: [] });
  expect((await withOffline.session.run({ code: "1" })).value).toBe("1");
  expect(withOffline.started).toEqual([DEFAULT, OFFLINE]);
});

test("a pull that fails: the call is told the engine's reason and every way out; the failure is remembered, not retried at once", async () => {
  const pull = { registry: [], pulls: [] as string[] };
  const { session } = sessionWith([], { MCP_BRIDGE_IMAGE: "mine:2" }, pull);
  const err = (await session.run({ code: "1" }).catch((e: unknown) => e)) as BridgeError;
  expect(err.render()).toBe(
    "[mcp-code-exec] [local-python] image mine:2 is not in local-python, and pulling it failed: manifest unknown: mine:2: build or load mine:2, or set MCP_BRIDGE_IMAGE to an image this engine has",
  );
  const again = (await session.run({ code: "1" }).catch((e: unknown) => e)) as BridgeError;
  expect(again.message).toMatch(/pulling it failed: manifest unknown: mine:2 \(\d+ s ago; pulled again in \d+ s\)$/);
  expect(pull.pulls).toEqual(["mine:2"]);
});

test("MCP_BRIDGE_PULL=never: nothing is pulled; the missing image is named with the engine's hint", async () => {
  const pull = { registry: [DEFAULT], pulls: [] as string[] };
  const { session } = sessionWith([], { MCP_BRIDGE_PULL: "never" }, pull);
  await expect(session.run({ code: "1" })).rejects.toThrow(`image ${DEFAULT} not found`);
  expect(pull.pulls).toEqual([]);
});

test("a call that comes while the prewarm is pulling joins that pull and hears it at once, then as it goes", async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const pulls: string[] = [];
  const images: string[] = [];
  const local = localPythonEngine();
  const adapter: RuntimeAdapter = {
    ...local.adapter,
    name: "local-python",
    async imageExists(image) {
      return images.includes(image);
    },
    async runArgv(spec) {
      if (images.includes(spec.image)) return local.adapter.runArgv(spec);
      return ["/bin/sh", "-c", `sleep 0.1; echo 'Error: ${spec.image}: image not known' >&2; exit 125`];
    },
    imageHint: (image) => `build or load ${image}`,
    async pull(image, onLine) {
      pulls.push(image);
      onLine("Copying blob 1 of 2");
      await gate;
      onLine("Copying blob 2 of 2");
      images.push(image);
    },
  };
  const home = mkdtempSync(join(tmpdir(), "mcx-image-"));
  const app = createApp(
    { PATH: process.env.PATH, HOME: home, MCP_BRIDGE_STATE_DIR: join(home, "state"), MCP_BRIDGE_LOG_LEVEL: "ERROR" },
    home,
  );
  const session = app.newSession({ engine: async () => ({ adapter, info: await local.adapter.probe() }) });
  open.push({ app, session });
  session.warm();
  while (pulls.length === 0) await Bun.sleep(10);
  const heard: string[] = [];
  const client = { progress: (_key: string, message: string) => heard.push(message) } as unknown as ClientChannel;
  const call = session.run({ code: "6 * 7", client });
  while (heard.length === 0) await Bun.sleep(10);
  expect(heard[0]).toContain(`pulling the sandbox image ${DEFAULT} into local-python (first use;`);
  expect(heard[0]).toContain("Copying blob 1 of 2");
  release();
  expect((await call).value).toBe("42");
  expect(pulls).toEqual([DEFAULT]);
  expect(heard.some((m) => m.includes("Copying blob 2 of 2"))).toBe(true);
  expect(heard.at(-1)).toContain("done; starting the sandbox");
});
