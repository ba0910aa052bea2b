/**
 * How the entrypoint reaches the container: no volume, no file beside the binary. The container runs
 * `python3 -I -c BOOTSTRAP`; the bootstrap reads a 10-digit length and that many bytes of source from
 * stdin, or from the channel fd it is given (byte-exact, so the protocol that follows on the same fd
 * is untouched), and executes it.
 */
import DISPLAY_PY from "../../entrypoint/display.py" with { type: "text" };
import INIT_PY from "../../entrypoint/init.py" with { type: "text" };
import MCP_PACKAGE_PY from "../../entrypoint/mcp_package.py" with { type: "text" };
import INTERPRETER_PY from "../../entrypoint/interpreter.py" with { type: "text" };
import PACKAGES_PY from "../../entrypoint/packages.py" with { type: "text" };
import { PROTOCOL } from "./protocol.ts";

/**
 * A wall-clock mark of the sandbox's start-up (bootstrap begun, payload read, entrypoint compiled, ...),
 * sent back in the ready frame so the host can show where a start's milliseconds went. Debug only:
 * the host never trusts these numbers for anything else.
 */
export const BOOT_MARK = (name: string): string => `_BOOT[${JSON.stringify(name)}] = __import__("time").time()`;

/** Modules installed inside the sandbox, in order (JSON strings are valid Python string literals). */
const EMBEDDED_MODULES = { _mcp_display: DISPLAY_PY, mcp: MCP_PACKAGE_PY, _mcp_packages: PACKAGES_PY };

/**
 * init.py (the container's own init: it forks, and only the child goes on), then interpreter.py preceded by
 * the protocol contract (protocol.ts) and the sources of the modules it installs.
 */
export const ENTRYPOINT_SOURCE: string = `${BOOT_MARK("compiled")}\n${INIT_PY}\nPROTOCOL = __import__("json").loads(${JSON.stringify(JSON.stringify(PROTOCOL))})\nEMBEDDED_MODULES = ${JSON.stringify(EMBEDDED_MODULES)}\n${INTERPRETER_PY}`;

export const BOOTSTRAP = [
  "import os,sys,time",
  "B={'start':time.time()}",
  "a=sys.argv[2:]",
  "f=int(a[0]) if a and a[0].isdigit() else 0",
  "def r(n):",
  " d=b''",
  " while len(d)<n:",
  "  c=os.read(f,n-len(d))",
  "  if not c: raise SystemExit(3)",
  "  d+=c",
  " return d",
  "s=r(int(r(10)))",
  "B['read']=time.time()",
  "exec(compile(s,'<mcp-entrypoint>','exec'),{'__name__':'__mcp_entrypoint__','_BOOT':B})",
].join("\n");

/**
 * The entrypoint as sent to one container: with the token it proves itself with on a socket channel
 * (src/host/socket-channel.ts), which only this container's stdin ever carries.
 */
export function entrypointFor(channelToken?: string): string {
  return channelToken === undefined ? ENTRYPOINT_SOURCE : `_CHANNEL_TOKEN = ${JSON.stringify(channelToken)}\n${ENTRYPOINT_SOURCE}`;
}

/** The bytes written to the container's stdin (or channel fd) before the first frame. */
export function bootstrapPayload(source: string = ENTRYPOINT_SOURCE): Uint8Array {
  const body = new TextEncoder().encode(source);
  const header = new TextEncoder().encode(String(body.length).padStart(10, "0"));
  const out = new Uint8Array(header.length + body.length);
  out.set(header, 0);
  out.set(body, header.length);
  return out;
}

/**
 * The command inside the container: the interpreter reads the entrypoint, whose init (entrypoint/init.py)
 * stays PID 1 and enforces the lifetime cap (argv[1], seconds) from outside the code's reach. argv[2],
 * when there, is the channel the protocol runs over: the number of an fd the engine passed
 * (ContainerSpec.channelFd), or the path of a socket to connect to (ContainerSpec.channelSocket); else
 * stdin/stdout.
 */
export function containerCommand(lifetimeSec: number, channel?: number | string): string[] {
  return ["python3", "-I", "-c", BOOTSTRAP, String(Math.ceil(lifetimeSec)), ...(channel === undefined ? [] : [String(channel)])];
}
