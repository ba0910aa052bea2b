/**
 * The sandbox image gets onto an engine that lacks it, through a real registry on loopback (Debian's
 * docker-registry): `mcp-code-exec image build --push` publishes it, and the first run_python call of
 * a bridge whose engine lacks it pulls it, telling a real MCP client's call how far the pull is as
 * progress notifications, then runs the code in a sandbox started from the pulled image. A registry
 * that cannot be reached ends the call with what to do instead, and the bridge goes on serving.
 * The image pushed is the slim one (the batteries image's base, ~115 MB): the pull does not depend on
 * what the image holds, and image-features.test.ts checks the batteries image itself.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Progress } from "@modelcontextprotocol/sdk/types.js";
import { BINARY } from "../support/binary.ts";
import { startBridge } from "../support/bridge.ts";
import { bridgeEnv, ENGINES, SLIM_IMAGE } from "../support/env.ts";
import { OCI_REGISTRY_PORTS, startOciRegistry, type OciRegistry } from "../support/oci-registry.ts";
import { run } from "../support/run.ts";

let registry: OciRegistry;
let state: string;
const exists = async (engine: string, image: string) => (await run([engine, "image", "inspect", image], { env: bridgeEnv() })).code === 0;
const rmi = (engine: string, image: string) => run([engine, "rmi", "--force", image], { env: bridgeEnv() });

beforeAll(async () => {
  registry = await startOciRegistry(OCI_REGISTRY_PORTS.pull);
  state = mkdtempSync(join(tmpdir(), "mcp-code-exec-image-pull-"));
});
afterAll(async () => {
  await registry?.stop();
  rmSync(state, { recursive: true, force: true });
});

test("`image build --push` publishes the image to the registry, and another engine pulls and runs it", async () => {
  const [from, to] = ENGINES.includes("docker") ? ["podman", "docker"] : [ENGINES[0]!, ENGINES[0]!];
  const ref = `${registry.host}/mcp-code-exec-sandbox:published`;
  await rmi(to, ref);
  const r = await run([BINARY, "image", "build", "--variant", "slim", "--tag", SLIM_IMAGE, "--engine", from, "--push", ref], {
    env: bridgeEnv(),
  });
  expect(r.code).toBe(0);
  expect(r.stderr).toContain(`pushing ${SLIM_IMAGE} from ${from} to ${ref}`);
  const pulled = await run([to, "pull", ref], { env: bridgeEnv() });
  expect(pulled.code).toBe(0);
  const inside = await run(
    [
      to,
      "run",
      "--rm",
      "--network",
      "none",
      ref,
      "python3",
      "-c",
      'import json; print(json.load(open("/usr/share/mcp-code-exec/packages.json"))["image"]["variant"])',
    ],
    { env: bridgeEnv() },
  );
  expect(inside.stdout.trim()).toBe("slim");
  await rmi(to, ref);
});

describe.each(ENGINES)("on %s", (engine) => {
  const ref = () => `${registry.host}/mcp-code-exec-sandbox:pull-${engine}`;

  beforeAll(async () => {
    // Published from the engine under test (podman push / docker push to the loopback registry), then
    // removed from it, so the bridge's first call finds the image missing.
    const pushed =
      engine === "podman"
        ? await run(["podman", "push", SLIM_IMAGE, ref()], { env: bridgeEnv() })
        : await run(["sh", "-c", `docker tag "$0" "$1" && docker push "$1"`, SLIM_IMAGE, ref()], { env: bridgeEnv() });
    expect(pushed.code).toBe(0);
    await rmi(engine, ref());
    expect(await exists(engine, ref())).toBe(false);
  });
  afterAll(() => rmi(engine, ref()));

  test("the first call pulls the missing image, with progress notifications, and runs the code in it", async () => {
    const bridge = await startBridge({
      MCP_BRIDGE_RUNTIME: engine,
      MCP_BRIDGE_IMAGE: ref(),
      MCP_BRIDGE_PREWARM: "0",
      MCP_BRIDGE_STATE_DIR: state,
    });
    try {
      const notes: string[] = [];
      const r = await bridge.run("import sys; print(sys.version_info[:2])", { onprogress: (p: Progress) => notes.push(p.message ?? "") });
      expect(r.isError).toBe(false);
      expect(r.text).toContain("(3, 13)");
      const pulling = notes.filter((n) => n.includes(`pulling the sandbox image ${ref()} into ${engine}`));
      expect(pulling.length).toBeGreaterThan(0);
      expect(pulling.at(-1)).toContain("done; starting the sandbox");
      expect(await exists(engine, ref())).toBe(true);
      // The next call finds the image: nothing is pulled again.
      const again: string[] = [];
      const r2 = await bridge.run("print(6 * 7)", { reset: true, onprogress: (p: Progress) => again.push(p.message ?? "") });
      expect(r2.text).toContain("42");
      expect(again.filter((n) => n.includes("pulling"))).toEqual([]);
    } finally {
      await bridge.close();
    }
  });

  test("a registry that cannot be reached: the call says what to do instead, and the bridge goes on serving", async () => {
    const nowhere = `127.0.0.1:${OCI_REGISTRY_PORTS.unused}/mcp-code-exec-sandbox:nowhere`;
    const bridge = await startBridge({
      MCP_BRIDGE_RUNTIME: engine,
      MCP_BRIDGE_IMAGE: nowhere,
      MCP_BRIDGE_PREWARM: "0",
      MCP_BRIDGE_STATE_DIR: state,
    });
    try {
      const r = await bridge.run("print(1)");
      expect(r.isError).toBe(true);
      expect(r.text).toContain(`image ${nowhere} is not in ${engine}, and pulling it failed`);
      expect(r.text).toContain("connection refused");
      expect(r.text).toContain("mcp-code-exec image build");
      expect(r.text).toContain("mcp-code-exec image load FILE");
      // Still serving: the tool list, and a second call that gets the same answer.
      expect((await bridge.client.listTools()).tools.map((t) => t.name)).toEqual(["run_python"]);
      const again = await bridge.run("print(1)");
      expect(again.text).toContain("pulling it failed");
    } finally {
      await bridge.close();
    }
  });

  test("MCP_BRIDGE_PULL=never: a missing image is not pulled, and the error says how to get it", async () => {
    const bridge = await startBridge({
      MCP_BRIDGE_RUNTIME: engine,
      MCP_BRIDGE_IMAGE: ref(),
      MCP_BRIDGE_PULL: "never",
      MCP_BRIDGE_PREWARM: "0",
      MCP_BRIDGE_STATE_DIR: state,
    });
    try {
      await rmi(engine, ref());
      const r = await bridge.run("print(1)");
      expect(r.isError).toBe(true);
      expect(r.text).toContain(`image ${ref()} not found`);
      expect(r.text).toContain("mcp-code-exec image pull");
      expect(await exists(engine, ref())).toBe(false);
    } finally {
      await bridge.close();
    }
  });
});
