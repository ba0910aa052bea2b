/** Ask an engine directly (not through the bridge) which of our containers exist. */
export interface OurContainer {
  name: string;
  owner: string;
  running: boolean;
}

export async function listOurContainers(engine: string): Promise<OurContainer[]> {
  if (engine === "kubernetes") {
    // Pods, from the API server (test/support/kube.ts): the engine has no CLI of its own.
    const { kubeAdapter } = await import("./kube.ts");
    const pods = await kubeAdapter().list("io.mcp-code-exec=1");
    return pods.map((p) => ({ name: p.name, owner: p.labels["io.mcp-code-exec.owner"] ?? "", running: p.running }));
  }
  const format = engine === "podman" ? "json" : "{{json .}}";
  const proc = Bun.spawn([engine, "ps", "--all", "--no-trunc", "--filter", "label=io.mcp-code-exec=1", "--format", format], {
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`${engine} ps failed: ${err}`);
  const text = out.trim();
  if (!text) return [];
  const rows = (text.startsWith("[") ? JSON.parse(text) : text.split("\n").map((l) => JSON.parse(l))) as Array<Record<string, unknown>>;
  return rows.map((r) => {
    const labels = r.Labels;
    let owner = "";
    if (labels && typeof labels === "object") owner = String((labels as Record<string, string>)["io.mcp-code-exec.owner"] ?? "");
    else owner = /io\.mcp-code-exec\.owner=([^,]*)/.exec(String(labels ?? ""))?.[1] ?? "";
    const name = Array.isArray(r.Names) ? String(r.Names[0]) : String(r.Names ?? "");
    const state = String(r.State ?? "").toLowerCase();
    return { name, owner, running: state === "running" };
  });
}

/** Poll until check() is true or the deadline passes; returns the last value of check(). */
export async function waitFor(check: () => Promise<boolean>, timeoutMs: number, intervalMs = 250): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await Bun.sleep(intervalMs);
  }
  return check();
}

/** Polls `probe` until it gives a value (anything but undefined); after `ms` fails, naming `what`. */
export async function pollFor<T>(what: string, probe: () => T | undefined, ms: number, intervalMs = 25): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(intervalMs);
  }
}

/**
 * The flags a plain `ENGINE run` needs on this kind of host besides what a test means to run: no network,
 * and explicit ulimits (podman copies hard limits it may not set without CAP_SYS_RESOURCE).
 */
export function plainRunFlags(engine: string): string[] {
  return ["--network", "none", ...(engine === "podman" ? ["--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024"] : [])];
}
