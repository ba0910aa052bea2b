/**
 * A real npm registry on loopback for tests: verdaccio (a devDependency) with its own storage, no uplink
 * (nothing is fetched from or published to the internet), one user, and an npmrc that publishes to it.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./env.ts";

export interface LocalRegistry {
  /** http://127.0.0.1:<port>/ */
  url: string;
  /** An npmrc whose registry is this one, with a token that may publish. */
  npmrc: string;
  stop(): Promise<void>;
}

function freePort(): number {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

export async function startRegistry(): Promise<LocalRegistry> {
  const dir = mkdtempSync(join(tmpdir(), "mcp-code-exec-verdaccio-"));
  const port = freePort();
  const url = `http://127.0.0.1:${port}/`;
  writeFileSync(
    join(dir, "config.yaml"),
    [
      `storage: ${join(dir, "storage")}`,
      "auth:",
      "  htpasswd:",
      `    file: ${join(dir, "htpasswd")}`,
      "uplinks: {}",
      "packages:",
      "  '**':",
      "    access: $all",
      "    publish: $authenticated",
      // The binaries are ~100 MiB; a publish carries the tarball base64-encoded.
      "max_body_size: 600mb",
      "web:",
      "  enable: false",
      "middlewares:",
      "  audit:",
      "    enabled: false",
      "log: { type: stdout, format: pretty, level: warn }",
      "",
    ].join("\n"),
  );
  const proc = Bun.spawn(
    ["bun", join(ROOT, "node_modules/verdaccio/bin/verdaccio"), "--config", join(dir, "config.yaml"), "--listen", `127.0.0.1:${port}`],
    {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir },
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  let log = "";
  const collect = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream) log += new TextDecoder().decode(chunk);
  };
  void collect(proc.stdout);
  void collect(proc.stderr);
  // Ready when the ping answers; give up if verdaccio exits first.
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`verdaccio exited (${proc.exitCode}):\n${log}`);
    if (Date.now() > deadline) throw new Error(`verdaccio did not answer on ${url} within 60 s:\n${log}`);
    const ok = await fetch(`${url}-/ping`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    await Bun.sleep(100);
  }
  const res = await fetch(`${url}-/user/org.couchdb.user:tester`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: "tester", password: "tester-password" }),
  });
  const { token } = (await res.json()) as { token?: string };
  if (!token) throw new Error(`verdaccio refused to create a user (${res.status}):\n${log}`);
  const npmrc = join(dir, "publish.npmrc");
  writeFileSync(npmrc, `registry=${url}\n//127.0.0.1:${port}/:_authToken=${token}\n`);
  return {
    url,
    npmrc,
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
