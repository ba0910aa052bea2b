/**
 * run_python end to end: the compiled binary, a real MCP client, real containers on every engine.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { listOurContainers } from "../support/engines.ts";
import { startBridge, type BridgeHandle } from "../support/bridge.ts";
import { ENGINES } from "../support/env.ts";

const CANARY = `canary-${Math.random().toString(36).slice(2)}`;

describe.each(ENGINES)("run_python on %s", (engine) => {
  let bridge: BridgeHandle;

  beforeAll(async () => {
    bridge = await startBridge({ MCP_BRIDGE_RUNTIME: engine, MCP_TEST_CANARY_SECRET: CANARY, OPENAI_API_KEY: CANARY });
  });
  afterAll(async () => {
    await bridge?.close();
  });

  test("tools/list offers exactly run_python with code, timeout, reset, servers and session", async () => {
    const { tools } = await bridge.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["run_python"]);
    const schema = tools[0]!.inputSchema as { properties: Record<string, { type: string }>; required: string[] };
    expect(Object.keys(schema.properties).sort()).toEqual(["code", "reset", "servers", "session", "timeout"]);
    expect(schema.properties.session!.type).toBe("string");
    expect(schema.properties.servers!.type).toBe("array");
    expect(schema.properties.code!.type).toBe("string");
    expect(schema.properties.timeout!.type).toBe("number");
    expect(schema.properties.reset!.type).toBe("boolean");
    expect(schema.required).toEqual(["code"]);
  });

  test("state persists across calls and the trailing expression is returned", async () => {
    const a = await bridge.run("import math\ndef area(r):\n    return math.pi * r * r\ncounter = 41");
    expect(a.isError).toBe(false);
    const b = await bridge.run("counter += 1\nround(area(2), 3), counter");
    expect(b.isError).toBe(false);
    expect(b.structured.value).toBe("(12.566, 42)");
    expect(b.text).toContain("[value] (12.566, 42)");
  });

  test("stdout and stderr come back separately; empty parts are left out", async () => {
    const r = await bridge.run("import sys\nprint('to out')\nprint('to err', file=sys.stderr)");
    expect(r.structured.stdout).toBe("to out\n");
    expect(r.structured.stderr).toBe("to err\n");
    expect(r.structured).not.toHaveProperty("value");
    expect(r.structured).not.toHaveProperty("error");
    const quiet = await bridge.run("x_quiet = 1");
    expect(quiet.text).toBe("(no output)");
  });

  test("output of subprocesses and C-level writes is captured too", async () => {
    const r = await bridge.run("import os, subprocess\nos.write(1, b'raw fd write\\n')\nsubprocess.run(['echo', 'from child'])\nNone");
    expect(r.structured.stdout).toBe("raw fd write\nfrom child\n");
  });

  test("top-level await works, and a forgotten await on the last line is awaited", async () => {
    const r = await bridge.run(
      "import asyncio\nasync def twice(x):\n    await asyncio.sleep(0.01)\n    return 2 * x\nres = await asyncio.gather(twice(1), twice(2))\nres",
    );
    expect(r.structured.value).toBe("[2, 4]");
    const forgot = await bridge.run("twice(21)");
    expect(forgot.structured.value).toBe("42");
  });

  test("an exception returns a traceback with isError, and the session survives", async () => {
    const r = await bridge.run("survivor = 'still here'\ndef boom():\n    return 1 / 0\nboom()");
    expect(r.isError).toBe(true);
    const error = r.structured.error as { type: string; traceback: string };
    expect(error.type).toBe("ZeroDivisionError");
    expect(error.traceback).toContain("line 3, in boom");
    expect(error.traceback).toContain("return 1 / 0");
    expect(error.traceback).not.toContain("mcp-entrypoint");
    const after = await bridge.run("survivor");
    expect(after.structured.value).toBe("'still here'");
  });

  test("syntax errors and SystemExit are errors, not crashes", async () => {
    const syntax = await bridge.run("def broken(:\n  pass");
    expect(syntax.isError).toBe(true);
    expect((syntax.structured.error as { type: string }).type).toBe("SyntaxError");
    const exit = await bridge.run("import sys\nsys.exit(3)");
    expect((exit.structured.error as { type: string }).type).toBe("SystemExit");
    expect((await bridge.run("survivor")).structured.value).toBe("'still here'");
  });

  test("printing a fake protocol frame is just output", async () => {
    const fake = '{"t":"result","id":1,"value":"forged"}';
    const r = await bridge.run(`print(${JSON.stringify(fake)})\nimport sys\nsys.__stdout__.write(${JSON.stringify(fake + "\n")})\n'real'`);
    expect(r.structured.value).toBe("'real'");
    expect(r.structured.stdout).toBe(`${fake}\n${fake}\n`);
  });

  test("reset: true starts a fresh interpreter", async () => {
    await bridge.run("before_reset = 1");
    const r = await bridge.run("'before_reset' in globals()", { reset: true });
    expect(r.structured.value).toBe("False");
    expect(r.text).toContain("Session reset");
  });

  test("the sandbox has no network", async () => {
    const r = await bridge.run(
      "import socket, os\nres = {}\ntry:\n    socket.create_connection(('1.1.1.1', 53), timeout=3)\n    res['tcp'] = 'connected'\nexcept OSError as e:\n    res['tcp'] = 'blocked'\ntry:\n    socket.getaddrinfo('example.com', 80)\n    res['dns'] = 'resolved'\nexcept OSError:\n    res['dns'] = 'blocked'\nres['ifaces'] = sorted(os.listdir('/sys/class/net'))\nres",
    );
    expect(r.structured.value).toBe("{'tcp': 'blocked', 'dns': 'blocked', 'ifaces': ['lo']}");
  });

  test("the root filesystem is read-only and /tmp is a writable, sized tmpfs", async () => {
    const r = await bridge.run(
      "import os\nres = []\nfor p in ['/etc/evil', '/usr/evil', '/evil']:\n    try:\n        open(p, 'w')\n        res.append('wrote ' + p)\n    except OSError as e:\n        res.append(e.errno)\nopen('/tmp/ok', 'w').write('x')\nst = os.statvfs('/tmp')\nres, st.f_blocks * st.f_frsize // 2**20",
    );
    // EROFS (30) or EACCES (13): nothing outside /tmp is writable.
    expect(r.structured.value).toMatch(/^\(\[(30|13), (30|13), (30|13)\], 64\)$/);
  });

  test("code runs as an unprivileged user with no capabilities", async () => {
    const r = await bridge.run(
      "import os\nstatus = dict(l.split(':\\t', 1) for l in open('/proc/self/status').read().splitlines() if ':\\t' in l)\n(os.getuid(), os.getgid(), status['CapEff'].strip(), status['NoNewPrivs'].strip())",
    );
    expect(r.structured.value).toBe("(65534, 65534, '0000000000000000', '1')");
  });

  test("nothing from the bridge's environment leaks into the sandbox", async () => {
    const r = await bridge.run(
      `import os, glob\nfound = [k for k, v in os.environ.items() if ${JSON.stringify(CANARY)} in v]\nfor p in glob.glob('/proc/*/environ'):\n    try:\n        if ${JSON.stringify(CANARY)}.encode() in open(p, 'rb').read():\n            found.append(p)\n    except OSError:\n        pass\nfound, sorted(os.environ)`,
    );
    expect(r.isError).toBe(false);
    const value = String(r.structured.value);
    expect(value.startsWith("([], [")).toBe(true);
    expect(value).not.toContain("MCP_TEST_CANARY_SECRET");
    expect(value).not.toContain("OPENAI_API_KEY");
  });

  test("the memory limit holds: a 1 GiB allocation does not succeed", async () => {
    const r = await bridge.run("x = bytearray(1024 * 1024 * 1024)\nlen(x)");
    expect(r.isError).toBe(true);
    // Either Python sees MemoryError, or the kernel OOM-kills the sandbox and the session is reset.
    const err = r.structured.error as { type: string; message: string };
    if (err.type === "MemoryError") expect(r.structured.session_reset).toBeUndefined();
    else {
      expect(err.type).toBe("SandboxExited");
      expect(String(r.structured.session_reset)).toContain("out of memory");
    }
    const next = await bridge.run("'alive'");
    expect(next.structured.value).toBe("'alive'");
  });

  test("the pids limit holds: a fork loop is stopped and the session keeps working", async () => {
    const r = await bridge.run(
      "import os, time\nkids = []\nerr = None\ntry:\n    for _ in range(400):\n        pid = os.fork()\n        if pid == 0:\n            time.sleep(30)\n            os._exit(0)\n        kids.append(pid)\nexcept OSError as e:\n    err = e.errno\nfor k in kids:\n    os.kill(k, 9)\n    os.waitpid(k, 0)\n(len(kids) < 128, err)",
    );
    expect(r.structured.value).toBe("(True, 11)");
    expect((await bridge.run("'alive'")).structured.value).toBe("'alive'");
  });

  test("invalid arguments get a clear error and the bridge keeps serving", async () => {
    const tooLong = await bridge.run("1", { timeout: 100000 });
    expect(tooLong.isError).toBe(true);
    expect(tooLong.text).toContain("MCP_BRIDGE_MAX_TIMEOUT");
    const bad = (await bridge.client.callTool({ name: "run_python", arguments: { code: 42 } })) as {
      isError?: boolean;
      content: Array<{ text?: string }>;
    };
    expect(bad.isError).toBe(true);
    expect(bad.content[0]!.text).toMatch(/code/);
    expect((await bridge.run("1 + 1")).structured.value).toBe("2");
  });

  test("the container carries our label and name", async () => {
    const ours = await listOurContainers(engine);
    const mine = ours.filter((c) => c.owner.endsWith(`:${bridge.pid}`));
    expect(mine.length).toBe(1);
    expect(mine[0]!.name).toStartWith(`mcp-code-exec-${bridge.pid}-`);
  });
});

describe.each(ENGINES)("limits and recovery on %s", (engine) => {
  test("output beyond the cap is cut with a marker saying how much was dropped", async () => {
    const bridge = await startBridge({ MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_OUTPUT_CAP: "1k" });
    try {
      const r = await bridge.run("print('x' * 5000)\nimport sys\nsys.stderr.write('e' * 3000)\n'done'");
      expect((r.structured.stdout as string).length).toBe(1024);
      expect(r.structured.stdout_dropped_bytes).toBe(5001 - 1024);
      expect(r.structured.stderr_dropped_bytes).toBe(3000 - 1024);
      expect(r.structured.value).toBe("'done'");
      expect(r.text).toContain(`${5001 - 1024} more bytes of stdout dropped`);
      // A 50 MB flood is capped the same way and does not wedge the session.
      const flood = await bridge.run("import sys\nfor _ in range(50):\n    sys.stdout.write('y' * (1 << 20))\n'survived'");
      expect(flood.structured.value).toBe("'survived'");
      expect(flood.structured.stdout_dropped_bytes).toBe(50 * (1 << 20) - 1024);
    } finally {
      await bridge.close();
    }
  });

  test("a timeout interrupts the code and keeps the session", async () => {
    const bridge = await startBridge({ MCP_BRIDGE_RUNTIME: engine });
    try {
      await bridge.run("kept = 'yes'");
      const r = await bridge.run("import time\ntime.sleep(60)", { timeout: 1 });
      expect(r.isError).toBe(true);
      expect(r.structured.timed_out).toBe(true);
      expect(r.structured.session_reset).toBeUndefined();
      expect(r.text).toContain("timed out after 1s and was interrupted; the session and its variables were kept");
      expect(r.text).toContain("time.sleep(60)");
      expect((await bridge.run("kept")).structured.value).toBe("'yes'");
    } finally {
      await bridge.close();
    }
  });

  test("code that ignores SIGINT is killed after a grace period; the next call gets a fresh session", async () => {
    const bridge = await startBridge({ MCP_BRIDGE_RUNTIME: engine });
    try {
      await bridge.run("lost = 'soon'");
      const before = (await listOurContainers(engine)).filter((c) => c.owner.endsWith(`:${bridge.pid}`));
      expect(before.length).toBe(1);
      const r = await bridge.run("import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    time.sleep(0.1)", {
        timeout: 1,
      });
      expect(r.isError).toBe(true);
      expect(r.structured.timed_out).toBe(true);
      expect(String(r.structured.session_reset)).toContain("sandbox was killed");
      const gone = (await listOurContainers(engine)).filter((c) => c.name === before[0]!.name);
      expect(gone).toEqual([]);
      const next = await bridge.run("'lost' in globals()");
      expect(next.structured.value).toBe("False");
    } finally {
      await bridge.close();
    }
  });

  test("a busy loop that swallows KeyboardInterrupt is also killed", async () => {
    const bridge = await startBridge({ MCP_BRIDGE_RUNTIME: engine });
    try {
      const r = await bridge.run(
        "def spin():\n    while True:\n        try:\n            while True:\n                sum(range(10**5))\n        except KeyboardInterrupt:\n            pass\nspin()",
        { timeout: 1 },
      );
      expect(r.structured.timed_out).toBe(true);
      expect(r.structured.session_reset).toBeDefined();
      expect((await bridge.run("6 * 7")).structured.value).toBe("42");
    } finally {
      await bridge.close();
    }
  });
});
