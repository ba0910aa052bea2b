/** The engine probe cache: what keys an entry, what the file may hold, and what is never trusted. */
import { describe, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CachedProbe } from "../../adapters/types.ts";
import { fileProbeCache, PROBE_CACHE_FILE, PROBE_CACHE_MAX_AGE_MS, probeKey } from "../../src/engines/probe-cache.ts";

const dir = () => mkdtempSync(join(tmpdir(), "probe-cache-"));
const probe = (extra: Partial<CachedProbe> = {}): CachedProbe => ({
  info: { engine: "docker", binary: "/usr/bin/docker", version: "20.10", details: { api: "1.41" } },
  ...extra,
});

function fakeBinary(d: string, body = "#!/bin/sh\necho 1\n"): string {
  const p = join(d, "engine");
  writeFileSync(p, body);
  chmodSync(p, 0o755);
  return p;
}

describe("probeKey", () => {
  test("the same binary and environment give the same key", () => {
    const bin = fakeBinary(dir());
    expect(probeKey("podman", bin, { PATH: "/usr/bin" })).toBe(probeKey("podman", bin, { PATH: "/usr/bin" })!);
  });

  test("a replaced binary (new content, or only a new mtime) gives a new key", () => {
    const d = dir();
    const bin = fakeBinary(d);
    const before = probeKey("podman", bin, {});
    fakeBinary(d, "#!/bin/sh\necho 2 # upgraded\n");
    const upgraded = probeKey("podman", bin, {});
    expect(upgraded).not.toBe(before);
    utimesSync(bin, new Date(2001, 1, 1), new Date(2001, 1, 1));
    expect(probeKey("podman", bin, {})).not.toBe(upgraded);
  });

  test("another endpoint in the environment, another engine name, or a missing binary", () => {
    const bin = fakeBinary(dir());
    const key = probeKey("docker", bin, { DOCKER_HOST: "unix:///a.sock" });
    expect(probeKey("docker", bin, { DOCKER_HOST: "unix:///b.sock" })).not.toBe(key);
    expect(probeKey("nerdctl", bin, { DOCKER_HOST: "unix:///a.sock" })).not.toBe(key);
    expect(probeKey("docker", join(dir(), "absent"), {})).toBeUndefined();
  });
});

describe("fileProbeCache", () => {
  test("an entry written by one bridge is read by the next; delete forgets it", () => {
    const d = dir();
    fileProbeCache(d, "1.0.0").set("docker:k", probe({ connectFlags: ["--host", "unix:///run/user/1000/docker.sock"] }));
    const next = fileProbeCache(d, "1.0.0");
    expect(next.get("docker:k")).toEqual(probe({ connectFlags: ["--host", "unix:///run/user/1000/docker.sock"] }));
    next.delete("docker:k");
    expect(fileProbeCache(d, "1.0.0").get("docker:k")).toBeUndefined();
  });

  test("two bridges writing keep each other's entries", () => {
    const d = dir();
    const a = fileProbeCache(d, "1.0.0");
    const b = fileProbeCache(d, "1.0.0");
    a.get("x");
    b.set("podman:k", probe());
    a.set("docker:k", probe());
    const read = fileProbeCache(d, "1.0.0");
    expect(read.get("podman:k")).toBeDefined();
    expect(read.get("docker:k")).toBeDefined();
  });

  test("another bridge version's file, a corrupt file and an old entry are misses, never errors", () => {
    const d = dir();
    fileProbeCache(d, "1.0.0").set("docker:k", probe());
    expect(fileProbeCache(d, "1.0.1").get("docker:k")).toBeUndefined();
    writeFileSync(join(d, PROBE_CACHE_FILE), "{not json");
    expect(fileProbeCache(d, "1.0.0").get("docker:k")).toBeUndefined();
    let now = 1_000_000;
    const c = fileProbeCache(dir(), "1.0.0", () => now);
    c.set("docker:k", probe());
    now += PROBE_CACHE_MAX_AGE_MS + 1;
    expect(c.get("docker:k")).toBeUndefined();
  });

  test("a file that would put other flags on the engine's command line is ignored whole", () => {
    const d = dir();
    fileProbeCache(d, "1.0.0").set("docker:k", probe());
    const file = JSON.parse(readFileSync(join(d, PROBE_CACHE_FILE), "utf8"));
    file.entries["docker:k"].connectFlags = ["--config", "/tmp/evil"];
    writeFileSync(join(d, PROBE_CACHE_FILE), JSON.stringify(file));
    expect(fileProbeCache(d, "1.0.0").get("docker:k")).toBeUndefined();
  });

  test("an unwritable state dir costs a probe, not an error", () => {
    const c = fileProbeCache("/proc/no-such-dir", "1.0.0");
    expect(() => c.set("docker:k", probe())).not.toThrow();
  });
});
