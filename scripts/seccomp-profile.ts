#!/usr/bin/env bun
/**
 * Generate adapters/seccomp.json, the seccomp profile every sandbox runs under, on every engine.
 * Starts from podman's default (containers-common /usr/share/containers/seccomp.json), which allows
 * unshare, setns, mount, ptrace and namespace-creating clone for rootless nesting. We need none of that:
 * those syscalls get EPERM, clone may not create namespaces, clone3 answers ENOSYS so libc falls back
 * to clone, and capability-gated allowances are dropped (the sandbox has no capabilities).
 *   bun scripts/seccomp-profile.ts [BASE.json]
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Syscalls the sandbox must never make: namespaces, mounts, keyrings, io_uring, bpf, tracing, ... */
export const BLOCKED = [
  "unshare",
  "setns",
  "mount",
  "umount",
  "umount2",
  "pivot_root",
  "chroot",
  "fsopen",
  "fsmount",
  "fsconfig",
  "fspick",
  "move_mount",
  "open_tree",
  "mount_setattr",
  "keyctl",
  "add_key",
  "request_key",
  "io_uring_setup",
  "io_uring_enter",
  "io_uring_register",
  "bpf",
  "userfaultfd",
  "perf_event_open",
  "ptrace",
  "process_vm_readv",
  "process_vm_writev",
  "pidfd_getfd",
  "kcmp",
  "process_madvise",
  "name_to_handle_at",
  "open_by_handle_at",
  "lookup_dcookie",
  "syslog",
  "reboot",
  "kexec_load",
  "kexec_file_load",
  "init_module",
  "finit_module",
  "delete_module",
  "acct",
  "swapon",
  "swapoff",
  "quotactl",
  "quotactl_fd",
  "vhangup",
  "sethostname",
  "setdomainname",
  "clock_settime",
  "clock_settime64",
  "settimeofday",
  "stime",
  "clock_adjtime",
  "clock_adjtime64",
  "adjtimex",
  "fanotify_init",
  "iopl",
  "ioperm",
  "nfsservctl",
  "uselib",
  "vm86",
  "vm86old",
];
/** CLONE_NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET */
const CLONE_NAMESPACE_FLAGS = 0x7e020000;

interface Rule {
  names: string[];
  action: string;
  args?: unknown[] | null;
  includes?: { caps?: string[]; arches?: string[] };
  excludes?: { caps?: string[]; arches?: string[] };
  errnoRet?: number;
  comment?: string;
}

export function buildProfile(base: { syscalls: Rule[]; [k: string]: unknown }): Record<string, unknown> {
  const blocked = new Set([...BLOCKED, "clone", "clone3"]);
  const syscalls: Rule[] = [];
  for (const rule of base.syscalls) {
    // The sandbox has no capabilities: rules for holders of a capability are dropped, rules for the
    // capability-less case are kept unconditionally.
    if (rule.includes?.caps?.length) continue;
    const names = rule.names.filter((n) => !(rule.action === "SCMP_ACT_ALLOW" && blocked.has(n)));
    if (names.length === 0) continue;
    const copy: Rule = { ...rule, names };
    delete copy.excludes;
    if (!copy.args?.length) delete copy.args;
    if (copy.includes && Object.keys(copy.includes).length === 0) delete copy.includes;
    syscalls.push(copy);
  }
  syscalls.push(
    {
      names: ["clone"],
      action: "SCMP_ACT_ALLOW",
      args: [{ index: 0, value: CLONE_NAMESPACE_FLAGS, valueTwo: 0, op: "SCMP_CMP_MASKED_EQ" }],
      comment: "threads and fork, never new namespaces",
    },
    { names: ["clone3"], action: "SCMP_ACT_ERRNO", errnoRet: 38, comment: "ENOSYS: libc falls back to clone, whose flags can be checked" },
    {
      names: [...BLOCKED].sort(),
      action: "SCMP_ACT_ERRNO",
      errnoRet: 1,
      comment: "EPERM: namespaces, mounts, keyrings, io_uring, bpf, tracing, kernel and clock control",
    },
  );
  return { defaultAction: base.defaultAction, defaultErrnoRet: base.defaultErrnoRet, archMap: base.archMap, syscalls };
}

if (import.meta.main) {
  const basePath = Bun.argv[2] ?? "/usr/share/containers/seccomp.json";
  const base = JSON.parse(readFileSync(basePath, "utf8"));
  const out = join(import.meta.dir, "..", "adapters", "seccomp.json");
  writeFileSync(out, `${JSON.stringify(buildProfile(base), null, 1)}\n`);
  console.log(`wrote ${out} from ${basePath}`);
}
