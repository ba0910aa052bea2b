/** gVisor (runsc) as the OCI runtime, on every engine: MCP_BRIDGE_OCI_RUNTIME=runsc. */
import { describe, expect, test } from "bun:test";
import { startBridge } from "../support/bridge.ts";
import { ENGINES } from "../support/env.ts";
import { IMPORT_ALL } from "../support/recipe.ts";

const GVISOR = (process.env.MCP_TEST_GVISOR ?? "1") !== "0";

describe.if(GVISOR).each(ENGINES)("gVisor on %s", (engine) => {
  test("code runs under gVisor's kernel with the same limits", async () => {
    const bridge = await startBridge({ MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_OCI_RUNTIME: "runsc", MCP_BRIDGE_PIDS: "512" });
    try {
      const r = await bridge.run(
        "import os, socket\nkernel = os.uname().release\ntry:\n    socket.create_connection(('1.1.1.1', 53), timeout=2)\n    net = 'connected'\nexcept OSError:\n    net = 'blocked'\ntry:\n    open('/etc/x', 'w')\n    ro = False\nexcept OSError:\n    ro = True\n(kernel, net, ro, os.getuid())",
      );
      // gVisor's own kernel reports itself as Linux 4.4.0, whatever the host runs.
      expect(r.structured.value).toBe("('4.4.0', 'blocked', True, 65534)");
      expect((await import("node:os")).release()).not.toBe("4.4.0");
      const mem = await bridge.run("x = bytearray(1024 * 1024 * 1024)\nlen(x)");
      expect(mem.isError).toBe(true);
      expect((await bridge.run("'alive'")).structured.value).toBe("'alive'");
    } finally {
      await bridge.close();
    }
  });

  test("all 40 packages of the batteries image import under gVisor too", async () => {
    const bridge = await startBridge({ MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_OCI_RUNTIME: "runsc", MCP_BRIDGE_PIDS: "512" });
    try {
      const r = await bridge.run(IMPORT_ALL, { timeout: 120 });
      expect(r.isError).toBe(false);
      expect(JSON.parse(String(r.structured.stdout))).toEqual([]);
    } finally {
      await bridge.close();
    }
  });
});
