/**
 * Why a sandbox ended, and what to do about a start that failed, read from its exit code and the last
 * of its stderr (where the engine and the sandbox's init, entrypoint/init.py, say what happened).
 */
import type { ContainerSpec, RuntimeAdapter } from "../../adapters/types.ts";
import { ENV_VARS, parseSize } from "../config/env.ts";
import { BridgeError } from "../errors.ts";

export interface SandboxExit {
  code: number | null;
  /** We stopped it (timeout kill, reset, idle, shutdown, flooding, lifetime cap). */
  killedByUs: boolean;
  /** Stopped for a reason no run reports (it flooded the bridge, it reached its lifetime cap): the next call must hear it. */
  reportLoss: boolean;
  reason: string;
  stderrTail: string;
}

/** Why a sandbox ended that we did not stop: its init (entrypoint/init.py) says, where it could. */
export function describeExit(code: number | null, memory: string, stderrTail: string): string {
  if (/\[sandbox-init\] lifetime cap reached/.test(stderrTail)) return "it reached its lifetime cap (MCP_BRIDGE_CONTAINER_LIFETIME)";
  // An engine with an API says why a sandbox it lost ended (adapters/kube/attach.ts).
  const engineSays = /\[kubernetes\] (.+)\n?$/.exec(stderrTail);
  if (engineSays && (code === null || code === 137)) return engineSays[1]!;
  const killed = /\[sandbox-init\] interpreter killed by signal (\d+)(?:; oom_kills=(\d+))?/.exec(stderrTail);
  if (killed) {
    const [, sig, ooms] = killed;
    if (ooms !== undefined && Number(ooms) > 0)
      return `it ran out of memory (limit ${memory}, MCP_BRIDGE_MEMORY): the kernel killed the interpreter`;
    if (sig === "9")
      return ooms === undefined
        ? `the interpreter was killed (SIGKILL): most likely it ran out of memory (limit ${memory}, MCP_BRIDGE_MEMORY)`
        : "the interpreter was killed (SIGKILL) from outside: not by the memory limit";
    return `the interpreter was killed by signal ${sig}`;
  }
  if (code === 137 || code === null) return "it was killed (SIGKILL) from outside the sandbox (the engine, or `kill`/`docker rm -f`)";
  if (code === 0) return "it exited (the code ended the interpreter, e.g. os._exit, or the engine stopped it)";
  return `it exited with code ${code}`;
}

/** Turn a container that died before its ready frame into an error that says how to fix it. */
export function startError(adapter: RuntimeAdapter, spec: ContainerSpec, exit: SandboxExit): BridgeError {
  const text = exit.stderrTail;
  const engine = adapter.name;
  const image = spec.image;
  if (/image not known|no such image|unable to find image|manifest unknown|pull access denied|repository does not exist/i.test(text)) {
    return new BridgeError("IMAGE_MISSING", `image ${image} not found`, { source: engine, hint: adapter.imageHint(image) });
  }
  if (/cgroups in hybrid mode|hybrid mode not supported/i.test(text)) {
    return new BridgeError("SANDBOX_START", "crun cannot run on this hybrid cgroup v1 host", {
      source: engine,
      hint: 'install runc and set runtime = "runc" and cgroup_manager = "cgroupfs" in /etc/containers/containers.conf (or MCP_BRIDGE_OCI_RUNTIME=runc)',
    });
  }
  if (/ulimit|rlimit|RLIMIT/i.test(text)) {
    return new BridgeError("SANDBOX_START", `the engine could not apply resource limits: ${lastLines(text)}`, {
      source: engine,
      hint: "lower the nofile/nproc limits below the host's hard limits (`ulimit -Hn`, `ulimit -Hu`), or run the bridge as root",
    });
  }
  // Before the runtime's own messages: podman says "OCI runtime attempted to invoke a command that was not found".
  if (/executable file not found|command that was not found|exec: "?python3"?: /i.test(text)) {
    return new BridgeError("SANDBOX_START", `the image ${image} has no python3 to run: ${lastLines(text)}`, {
      source: engine,
      hint: "MCP_BRIDGE_IMAGE must name an image with Python 3.9 or later as python3 on its PATH: unset it for the default sandbox image (pulled at first use, or made by `mcp-code-exec image build`)",
    });
  }
  if (spec.ociRuntime && /unknown or invalid runtime name|runtime .* not found|invalid runtime/i.test(text)) {
    return new BridgeError("SANDBOX_START", `the OCI runtime ${spec.ociRuntime} is not known to ${engine}`, {
      source: engine,
      hint: `install it (e.g. apt-get install runsc) and register it with ${engine}, or unset MCP_BRIDGE_OCI_RUNTIME`,
    });
  }
  if (/network enabled in root network namespace/i.test(text)) {
    return new BridgeError("SANDBOX_START", "gVisor (runsc) could not set up its network stack on this host", {
      source: engine,
      hint: 'register runsc with the runtime argument --network=none, e.g. in /etc/docker/daemon.json: {"runtimes": {"runsc": {"path": "/usr/bin/runsc", "runtimeArgs": ["--network=none"]}}}, then restart the engine',
    });
  }
  // Python needs some room to start: limits far below the defaults are the likeliest cause of a silent exit.
  const tight = [
    parseSize(spec.memory) < 64 * 1024 * 1024 ? `MCP_BRIDGE_MEMORY=${spec.memory}` : "",
    spec.pids < 16 ? `MCP_BRIDGE_PIDS=${spec.pids}` : "",
  ].filter(Boolean);
  return new BridgeError("SANDBOX_START", `sandbox failed to start (exit ${exit.code ?? "signal"}): ${lastLines(text) || exit.reason}`, {
    source: engine,
    hint: `${tight.length ? `${tight.join(" and ")} may be too small for Python to start (the defaults are ${ENV_VARS.MCP_BRIDGE_MEMORY.default} and ${ENV_VARS.MCP_BRIDGE_PIDS.default}); ` : ""}${text.trim() ? "the engine's own message is above; " : ""}\`${engine} run --rm ${image} true\` shows whether any container starts here`,
  });
}

function lastLines(text: string): string {
  return text.trim().split("\n").slice(-5).join(" | ").slice(0, 800);
}
