#!/usr/bin/env bun
// Cost of checking arguments against input schemas inside the sandbox (entrypoint/mcp_package.py),
// per call, over every tool of a catalog: a valid argument set is built from each schema (required
// fields, first enum value, in-range numbers) and checked many times. Prints p50/p99 microseconds per
// check next to the floor of the same run (json.dumps of the same arguments, which every call pays to
// reach the host), and any valid set the checker wrongly refused.
// usage: bun bench/arg-check.ts [CATALOG.json ...]   (default: the shared catalog and bench/search-data/real-servers.catalog.json)
import { existsSync } from "node:fs";
import path from "node:path";
import { PROTOCOL } from "../src/sandbox/protocol.ts";

const here = import.meta.dir;
const shared = [path.join(here, "search-data", "shared", "tool-catalog.json")].find(existsSync);
const files = process.argv.slice(2).length
  ? process.argv.slice(2)
  : [shared, path.join(here, "search-data", "real-servers.catalog.json")].filter((f): f is string => !!f);

const script = String.raw`
import json, sys, time, types
sys.path.insert(0, sys.argv[1])
host = types.ModuleType("_mcp_host"); host.ERROR_FACTORIES = {}; host.RUN_HOOKS = []; host.MISSING_NAME_HOOKS = []; host.KNOWN_SERVERS = {}
host.PROTOCOL = json.loads(sys.argv.pop(2))
sys.modules["_mcp_host"] = host
import mcp_package as m

def sample(schema, root, depth=0):
    s = m._resolve(schema, root, 0) if isinstance(schema, dict) else {}
    if depth > 6: return None
    if "const" in s: return s["const"]
    if isinstance(s.get("enum"), list) and s["enum"]: return s["enum"][0]
    if "default" in s: return s["default"]
    for key in ("anyOf", "oneOf"):
        if isinstance(s.get(key), list) and s[key]: return sample(s[key][0], root, depth + 1)
    t = s.get("type")
    if isinstance(t, list): t = next((x for x in t if x != "null"), "null")
    if t == "object" or "properties" in s:
        props = s.get("properties") or {}
        return {k: sample(props.get(k, {}), root, depth + 1) for k in (s.get("required") or []) if isinstance(k, str)}
    if t == "array":
        n = s.get("minItems") or 0
        return [sample(s.get("items") or {}, root, depth + 1) for _ in range(n)]
    if t in ("integer", "number"):
        lo = s.get("minimum", s.get("exclusiveMinimum", 0))
        return (lo if isinstance(lo, (int, float)) else 0) + (1 if "exclusiveMinimum" in s else 0)
    if t == "boolean": return True
    if t == "null": return None
    n = s.get("minLength") or 1
    return "x" * n

refused, times, floor, n = [], [], [], 0
for path in sys.argv[2:]:
    for server in json.load(open(path)):
        for tool in server["tools"]:
            schema = tool.get("inputSchema")
            if not isinstance(schema, dict): continue
            args = sample(schema, schema)
            if not isinstance(args, dict): args = {}
            if "pattern" in json.dumps(schema): pass
            try:
                m.check_arguments(server["server"], tool["name"], schema, args)
            except m.McpArgumentError as e:
                refused.append(str(e)); continue
            n += 1
            for _ in range(50):
                t = time.perf_counter(); m.check_arguments(server["server"], tool["name"], schema, args); times.append(time.perf_counter() - t)
                t = time.perf_counter(); json.dumps(args); floor.append(time.perf_counter() - t)
times.sort(); floor.sort()
pct = lambda xs, p: xs[min(len(xs) - 1, int(p / 100 * len(xs)))] * 1e6
print("tools checked: %d; argument check per call: p50 %.1f us, p99 %.1f us; floor (json.dumps of the same arguments): p50 %.1f us, p99 %.1f us" % (n, pct(times, 50), pct(times, 99), pct(floor, 50), pct(floor, 99)))
print("generated argument sets refused (patterns the generator cannot satisfy, or checker mistakes): %d" % len(refused))
for r in refused[:15]: print("  " + r[:200])
`;
const proc = Bun.spawnSync(["python3", "-c", script, path.join(here, "..", "entrypoint"), JSON.stringify(PROTOCOL), ...files], {
  stdout: "inherit",
  stderr: "inherit",
});
process.exit(proc.exitCode ?? 1);
