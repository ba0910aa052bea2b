/**
 * Recorded-argument fakes for engines that cannot run on this machine (nerdctl, podman machine): tiny
 * shell scripts named like the engine, first on PATH, that append their argv to a log and answer the
 * probe questions from canned JSON. Everything else, `run` included, is handed to the real podman
 * with the same arguments, so the sandbox really starts with every hardening flag the adapter built.
 */
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { which } from "../../src/host/process.ts";

const FIELD = "\x1f";
const RECORD = "\x1e";

export interface Fake {
  /** Folder holding the fake (and its state files). */
  dir: string;
  /** Absolute path of the fake CLI. */
  binary: string;
  /** PATH with the fake first, then the real one (python, podman, timeout...). */
  PATH: string;
  /** Every invocation so far, as argv without the binary. */
  calls(): string[][];
}

/** The real podman the fakes delegate to. */
export function realPodman(): string {
  const p = which("podman", process.env.PATH);
  if (!p) throw new Error("the fakes delegate to the real podman, which is not on PATH");
  return p;
}

/** A fake CLI named `name`; `body` is sh run after the argv is recorded ($REAL is the real podman, $DIR the fake's folder). */
export function fakeCli(name: string, body: string): Fake {
  const dir = mkdtempSync(join(tmpdir(), `fake-${name}-`));
  const binary = join(dir, name);
  const log = join(dir, "calls.log");
  writeFileSync(log, "");
  writeFileSync(
    binary,
    [
      "#!/bin/sh",
      `REAL='${realPodman()}'`,
      `DIR='${dir}'`,
      `printf '%s\\037' "$@" >> "$DIR/calls.log"; printf '\\036' >> "$DIR/calls.log"`,
      body,
      "",
    ].join("\n"),
  );
  chmodSync(binary, 0o755);
  return {
    dir,
    binary,
    PATH: `${dir}:${process.env.PATH ?? "/usr/bin:/bin"}`,
    calls: () =>
      readFileSync(log, "utf8")
        .split(RECORD)
        .filter((r) => r !== "")
        .map((r) => r.split(FIELD).slice(0, -1)),
  };
}

/** nerdctl 2.x on containerd 1.7: answers version/info, hands everything else to podman. */
export function fakeNerdctl(opts: { logDrivers?: string[] } = {}): Fake {
  const drivers = JSON.stringify(opts.logDrivers ?? ["fluentd", "journald", "json-file", "none", "syslog"]);
  return fakeCli(
    "nerdctl",
    `case "$1" in
  version) echo '{"Client":{"Version":"v2.0.3","GitCommit":"fake","GoVersion":"go1.23","Os":"linux","Arch":"amd64"},"Server":{"Components":[{"Name":"containerd","Version":"v1.7.24"},{"Name":"runc","Version":"1.2.2"}]}}' ;;
  info) echo '{"ID":"fake","ServerVersion":"v1.7.24","CgroupVersion":"1","CgroupDriver":"cgroupfs","Plugins":{"Log":${drivers},"Storage":["native","overlayfs"]}}' ;;
  *) exec "$REAL" "$@" ;;
esac`,
  );
}

/**
 * podman on a Mac: one stopped machine (podman-machine-default, rootful, so its default connection is
 * podman-machine-default-root). `machine start` marks it running; `info` and commands through a
 * connection fail like a real remote client until then, and afterwards go to the real podman. Only
 * shell builtins are used, so a PATH holding nothing but the fake works.
 */
export function fakePodmanMachine(opts: { machines?: string } = {}): Fake {
  const machines =
    opts.machines ?? `[{"Name":"podman-machine-default","Default":true,"Running":$running,"Starting":false,"VMType":"applehv","CPUs":4}]`;
  return fakeCli(
    "podman",
    `running=false; [ -f "$DIR/running" ] && running=true
case "$1 $2" in
  "machine list") echo "${machines.replace(/"/g, '\\"')}" ;;
  "machine start") : > "$DIR/running"; echo "Machine \\"$3\\" started successfully" ;;
  "system connection") echo '[{"Name":"podman-machine-default","URI":"ssh://core@127.0.0.1:50123/run/user/501/podman/podman.sock","Default":false},{"Name":"podman-machine-default-root","URI":"ssh://root@127.0.0.1:50123/run/podman/podman.sock","Default":true}]' ;;
  --version*) echo "podman version 5.2.1" ;;
  --connection*|info*)
    [ "$running" = true ] || { echo "Cannot connect to Podman. Please verify your connection to the Linux system using \\\`podman system connection list\\\`, or try \\\`podman machine init\\\` and \\\`podman machine start\\\` to manage a new Linux VM" >&2; exit 125; }
    [ "$1" = --connection ] && shift 2
    exec "$REAL" "$@" ;;
  *) echo "fake podman: unexpected arguments: $*" >&2; exit 64 ;;
esac`,
  );
}
