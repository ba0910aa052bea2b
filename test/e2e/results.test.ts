/**
 * Results a model can use, through a real MCP client and the offline image (numpy, pandas,
 * matplotlib, Pillow): images, tables, files, the workspace, progress and cancellation, every mode.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decode as toonDecode } from "@toon-format/toon";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { codeStarted, SAY_STARTED, startBridge, type BridgeHandle } from "../support/bridge.ts";
import { ENGINES, ROOT } from "../support/env.ts";

const engine = ENGINES[0]!;
const PNG_MAGIC = "iVBORw0KGgo"; // base64 of \x89PNG\r\n\x1a\n
let bridge: BridgeHandle;

beforeAll(async () => {
  bridge = await startBridge({ MCP_BRIDGE_RUNTIME: engine });
});
afterAll(async () => {
  await bridge?.close();
});

const images = (r: CallToolResult) => r.content.filter((c) => c.type === "image") as Array<{ data: string; mimeType: string }>;
const resources = (r: CallToolResult) =>
  r.content
    .filter((c) => c.type === "resource")
    .map((c) => (c as { resource: { uri: string; mimeType: string; text?: string; blob?: string } }).resource);

describe("images", () => {
  test("a matplotlib figure left open comes back as a PNG ImageContent, once", async () => {
    const r = await bridge.run("import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [2, 1, 3])\nplt.title('left open')\nNone");
    const imgs = images(r.raw);
    expect(imgs.length).toBe(1);
    expect(imgs[0]!.mimeType).toBe("image/png");
    expect(imgs[0]!.data.startsWith(PNG_MAGIC)).toBe(true);
    expect(r.structured.images).toEqual([{ mime_type: "image/png", bytes: expect.any(Number) }]);
    expect(r.text).toContain("[1 image attached]");
    const again = await bridge.run("1");
    expect(images(again.raw)).toEqual([]);
  });

  test("a PIL image as the last expression, and runtime.show(), return images", async () => {
    const r = await bridge.run(
      "from PIL import Image\nfrom mcp import runtime\nruntime.show(Image.new('RGB', (8, 8), 'red'))\nImage.new('L', (4, 4), 128)",
    );
    expect(images(r.raw).length).toBe(2);
    expect(String(r.structured.value)).toContain("shown as an image");
  });

  test("runtime.show() explains what it accepts", async () => {
    const r = await bridge.run("from mcp import runtime\nruntime.show('not an image')");
    expect((r.structured.error as { message: string }).message).toContain("show() takes a matplotlib figure, a PIL image, an McpImage");
  });

  test("an image over the cap is left out with a note saying why", async () => {
    const small = await startBridge({ MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_IMAGE_CAP: "2k" });
    try {
      const r = await small.run(
        "import numpy as np\nfrom PIL import Image\nImage.fromarray((np.random.rand(200, 200, 3) * 255).astype('uint8'))",
      );
      expect(images(r.raw)).toEqual([]);
      expect(r.text).toContain("over the 2 KiB image cap");
    } finally {
      await small.close();
    }
  });
});

describe("tables", () => {
  test("a 1000-row DataFrame renders as a compact, truncated table with a note", async () => {
    const r = await bridge.run("import pandas as pd\ndf = pd.DataFrame({'n': range(1000), 'sq': [i * i for i in range(1000)]})\ndf");
    const value = String(r.structured.value);
    expect(value.split("\n").length).toBeLessThan(30);
    expect(value).toContain("[1000 rows x 2 columns; showing 20 rows and 2 columns");
    expect(value).toContain("998001");
  });
});

describe("files in /tmp/outputs/", () => {
  test("text comes back as an embedded resource, binary as a blob; unchanged files are not sent twice", async () => {
    const r = await bridge.run(
      "import os\nos.makedirs('/tmp/outputs', exist_ok=True)\nopen('/tmp/outputs/summary.md', 'w').write('# Totals\\n42\\n')\nopen('/tmp/outputs/raw.bin', 'wb').write(bytes(range(256)))\nNone",
    );
    const res = resources(r.raw);
    const md = res.find((x) => x.uri.endsWith("summary.md"));
    const bin = res.find((x) => x.uri.endsWith("raw.bin"));
    expect(md).toMatchObject({ uri: "file:///tmp/outputs/summary.md", mimeType: "text/markdown", text: "# Totals\n42\n" });
    expect(Buffer.from(bin!.blob!, "base64")).toEqual(Buffer.from(Array.from({ length: 256 }, (_, i) => i)));
    const again = await bridge.run("open('/tmp/outputs/summary.md', 'a').write('more\\n')\nNone");
    expect(resources(again.raw).map((x) => x.uri)).toEqual(["file:///tmp/outputs/summary.md"]);
  });

  test("symlinks are never followed and oversized files are refused with a note", async () => {
    const small = await startBridge({ MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_FILE_CAP: "1k" });
    try {
      const r = await small.run(
        "import os\nos.makedirs('/tmp/outputs', exist_ok=True)\nos.symlink('/etc/passwd', '/tmp/outputs/passwd')\nopen('/tmp/outputs/big.txt', 'w').write('x' * 5000)\nNone",
      );
      expect(resources(r.raw)).toEqual([]);
      expect(r.text).toContain("passwd is a symlink: not followed, not returned");
      expect(r.text).toContain("big.txt not returned");
      expect(r.text).not.toContain("root:x:0:0");
    } finally {
      await small.close();
    }
  });
});

describe("workspace", () => {
  test("without a workspace there is no /workspace and /tmp is scratch", async () => {
    const r = await bridge.run("import os\nos.path.exists('/workspace')");
    expect(r.structured.value).toBe("False");
  });

  test("MCP_BRIDGE_WORKSPACE is mounted read-only by default, read-write on request", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mcx-ws-"));
    writeFileSync(join(dir, "data.csv"), "a,b\n1,2\n3,4\n");
    const { chmodSync } = await import("node:fs");
    chmodSync(dir, 0o777);
    const ro = await startBridge({ MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_WORKSPACE: dir });
    try {
      const r = await ro.run(
        "import pandas as pd\ntotal = int(pd.read_csv('/workspace/data.csv')['b'].sum())\ntry:\n    open('/workspace/new.txt', 'w')\n    w = 'wrote'\nexcept OSError as e:\n    w = e.errno\n(total, w)",
      );
      expect(r.structured.value).toBe("(6, 30)");
    } finally {
      await ro.close();
    }
    const rw = await startBridge({ MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_WORKSPACE: dir, MCP_BRIDGE_WORKSPACE_MODE: "rw" });
    try {
      await rw.run("open('/workspace/result.txt', 'w').write('from the sandbox')");
      expect(readFileSync(join(dir, "result.txt"), "utf8")).toBe("from the sandbox");
    } finally {
      await rw.close();
    }
  });

  test("a workspace that does not exist is a clear configuration error", async () => {
    const proc = Bun.spawn([join(ROOT, "dist", "mcp-code-exec"), "exec", "-c", "1"], {
      env: { PATH: process.env.PATH!, MCP_BRIDGE_WORKSPACE: "/no/such/dir" },
      stderr: "pipe",
      stdout: "pipe",
    });
    expect(await proc.exited).toBe(1);
    expect(await new Response(proc.stderr).text()).toContain('MCP_BRIDGE_WORKSPACE="/no/such/dir": is not an existing directory');
  });
});

describe("long runs", () => {
  test("with a progress token, stdout lines stream as progress notifications while the code runs", async () => {
    const seen: Array<{ progress: number; message?: string; at: number }> = [];
    const t0 = Date.now();
    const result = (await bridge.client.callTool(
      {
        name: "run_python",
        arguments: { code: "import time\nfor i in range(4):\n    print('step', i, flush=True)\n    time.sleep(0.4)\n'done'" },
      },
      undefined,
      { onprogress: (p) => seen.push({ progress: p.progress, message: p.message, at: Date.now() - t0 }) },
    )) as CallToolResult;
    expect(result.structuredContent).toMatchObject({ value: "'done'" });
    const text = seen.map((s) => s.message).join("\n");
    for (let i = 0; i < 4; i++) expect(text).toContain(`step ${i}`);
    expect(seen.length).toBeGreaterThanOrEqual(3);
    // The first line arrived well before the run ended (~1.6 s).
    expect(seen[0]!.at).toBeLessThan(1200);
    expect(seen.map((s) => s.progress)).toEqual([...seen.map((s) => s.progress)].sort((a, b) => a - b));
  });

  test("notifications/cancelled interrupts the run; the session and its variables survive", async () => {
    await bridge.run("ticks = 0");
    const controller = new AbortController();
    const run = codeStarted();
    const call = bridge.client.callTool(
      {
        name: "run_python",
        arguments: {
          code: `import time\nwhile True:\n    ticks += 1\n    if ticks == 6: ${SAY_STARTED}\n    time.sleep(0.05)`,
          timeout: 60,
        },
      },
      undefined,
      { signal: controller.signal, onprogress: run.onprogress },
    );
    await run.started;
    controller.abort("user pressed stop");
    await expect(call).rejects.toThrow();
    // Queued behind the cancelled run: it runs once that has stopped.
    const a = await bridge.run("ticks");
    // Nothing is left ticking: the count stays put (this wait is what "nothing happens" needs).
    await Bun.sleep(500);
    const b = await bridge.run("ticks");
    expect(Number(a.structured.value)).toBeGreaterThan(5);
    expect(b.structured.value).toBe(a.structured.value);
  });
});

describe("cancellation while queued", () => {
  test("a run cancelled before it starts never runs, and the session survives", async () => {
    await bridge.run("kept_through_cancel = 'yes'\nstarted = []");
    const first = bridge.run("import time\ntime.sleep(1)\n'first done'");
    const controller = new AbortController();
    const second = bridge.client.callTool(
      { name: "run_python", arguments: { code: "started.append(1)\nimport time\ntime.sleep(5)" } },
      undefined,
      { signal: controller.signal },
    );
    await Bun.sleep(100);
    controller.abort("changed my mind");
    await expect(second).rejects.toThrow();
    expect((await first).structured.value).toBe("'first done'");
    const after = await bridge.run("kept_through_cancel, started");
    expect(after.structured.value).toBe("('yes', [])");
    expect(after.structured.session_reset).toBeUndefined();
  });
});

describe.each(["compact", "toon", "json"])("output mode %s", (mode) => {
  test("results mirror the payload in structuredContent and drop empty fields", async () => {
    const b = await startBridge({ MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_OUTPUT_MODE: mode });
    try {
      const r = await b.run("import pandas as pd\nprint('hi')\npd.DataFrame({'a': range(50), 'b': range(50)})");
      expect(r.structured.stdout).toBe("hi\n");
      expect(r.structured).not.toHaveProperty("stderr");
      expect(r.structured).not.toHaveProperty("error");
      if (mode === "json") expect(JSON.parse(r.text)).toEqual(r.structured);
      if (mode === "toon") expect(toonDecode(r.text) as unknown).toEqual(r.structured);
      if (mode === "compact") expect(r.text).toContain("[50 rows x 2 columns");
      if (mode !== "compact") expect((r.structured.table as { rows: unknown[] }).rows.length).toBe(20);
      const err = await b.run("1/0");
      expect(err.isError).toBe(true);
      expect((err.structured.error as { type: string }).type).toBe("ZeroDivisionError");
    } finally {
      await b.close();
    }
  });
});

describe("upstream images", () => {
  test("an image returned by an upstream tool is passed on when the code returns it", async () => {
    const home = mkdtempSync(join(tmpdir(), "mcx-img-"));
    mkdirSync(join(home, ".config", "mcp", "servers"), { recursive: true });
    writeFileSync(
      join(home, ".config", "mcp", "servers", "f.json"),
      JSON.stringify({ mcpServers: { flaky: { command: "bun", args: [join(ROOT, "test", "fixtures", "flaky-server.ts")] } } }),
    );
    const b = await startBridge({ HOME: home, MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_STATE_DIR: join(home, "state") }, { cwd: home });
    try {
      const r = await b.run("await mcp_flaky.pixel()", { servers: ["flaky"] });
      expect(images(r.raw).length).toBe(1);
      expect(images(r.raw)[0]!.data.startsWith(PNG_MAGIC)).toBe(true);
    } finally {
      await b.close();
    }
  });
});
