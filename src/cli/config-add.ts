/**
 * `mcp-code-exec config add --client X`: write our entry into the client's own user-level file, the way
 * its docs describe, keeping everything else as it was (comments and formatting of JSONC, TOML and
 * YAML), after a backup. An existing entry of the same name is kept unless --force.
 */
import * as fs from "node:fs";
import { homedir } from "node:os";
import * as path from "node:path";
import { parse as parseJsonc, type ParseError } from "jsonc-parser";
import { parse as parseToml } from "smol-toml";
import { isMap, isSeq, parseDocument } from "yaml";
import { linkTarget, writeConfigText } from "../config/config-file.ts";
import { setJsonValue } from "../config/json-edit.ts";
import { BridgeError } from "../errors.ts";
import { errorCode, removeQuietly } from "../host/private-dir.ts";
import type { Launch } from "../host/self.ts";
import { entryFor, TARGETS, tomlTable, type ClientName } from "./client-targets.ts";
import { bridgeEnvForEntry, clientArg, launchFor } from "./config-snippet.ts";

export interface AddResult {
  file: string;
  backup?: string;
  replaced: boolean;
}

/** Add (or with force replace) our entry in `client`'s file. Throws a BridgeError when it exists. */
export function addToClient(
  client: ClientName,
  name: string,
  launch: Launch,
  env: Record<string, string>,
  opts: { force?: boolean; home?: string; env?: Record<string, string | undefined>; platform?: NodeJS.Platform } = {},
): AddResult {
  const t = TARGETS[client];
  const file = t.file({ env: opts.env ?? process.env, home: opts.home ?? homedir(), platform: opts.platform ?? process.platform });
  let text = "";
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw new BridgeError("CONFIG", `cannot read ${file}: ${(e as Error).message}`);
  }
  const entry = entryFor(client, name, launch, env);
  const exists = () =>
    new BridgeError("INVALID_INPUT", `${file} already has a server named ${JSON.stringify(name)}`, {
      hint: "pass --force to replace it (a backup is kept), or --name to add ours under another name",
    });
  let next: string;
  let replaced = false;
  try {
    if (t.format === "json") {
      const errors: ParseError[] = [];
      const data = (text.trim() ? parseJsonc(text, errors, { allowTrailingComma: true }) : {}) as Record<string, unknown>;
      if (errors.length) throw new BridgeError("CONFIG", `${file} is not valid JSON; fix it first (\`mcp-code-exec servers\` shows where)`);
      const [key] = t.path(name);
      replaced = !!(data?.[key!] as Record<string, unknown> | undefined)?.[name];
      if (replaced && !opts.force) throw exists();
      next = setJsonValue(text, t.path(name), entry);
    } else if (t.format === "toml") {
      const data = text.trim() ? (parseToml(text) as Record<string, unknown>) : {};
      replaced = !!(data.mcp_servers as Record<string, unknown> | undefined)?.[name];
      if (replaced && !opts.force) throw exists();
      const kept = replaced ? removeTomlTable(text, name) : text;
      next = `${kept.replace(/\s*$/, "")}${kept.trim() ? "\n\n" : ""}${tomlTable(name, entry)}\n`;
      const check = parseToml(next) as { mcp_servers?: Record<string, { command?: string }> };
      if (check.mcp_servers?.[name]?.command !== launch.command)
        throw new BridgeError(
          "CONFIG",
          `${file}: could not add [mcp_servers.${name}] cleanly (it is defined in another form, e.g. inline); edit it by hand`,
        );
    } else {
      const doc = parseDocument(text);
      if (doc.errors.length)
        throw new BridgeError("CONFIG", `${file} is not valid YAML; fix it first (\`mcp-code-exec servers\` shows where)`);
      if (client === "continue") {
        let list = doc.get("mcpServers");
        if (!isSeq(list)) {
          doc.set("mcpServers", doc.createNode([]));
          list = doc.get("mcpServers");
        }
        const seq = list as import("yaml").YAMLSeq;
        const i = seq.items.findIndex((it) => isMap(it) && it.get("name") === name);
        replaced = i >= 0;
        if (replaced && !opts.force) throw exists();
        if (replaced) seq.items[i] = doc.createNode(entry) as never;
        else seq.add(doc.createNode(entry));
      } else {
        replaced = doc.hasIn(t.path(name));
        if (replaced && !opts.force) throw exists();
        doc.setIn(t.path(name), doc.createNode(entry));
      }
      next = String(doc);
    }
  } catch (e) {
    if (e instanceof BridgeError) throw e;
    throw new BridgeError("CONFIG", `${file}: ${(e as Error).message.split("\n")[0]}; fix it first`);
  }
  let backup: string | undefined;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  let mode = 0o600;
  if (text) {
    backup = `${file}.bak-${new Date().toISOString().replace(/[-:]/g, "").replace(/\..*/, "")}`;
    fs.copyFileSync(file, backup);
    mode = fs.statSync(file).mode & 0o777;
  }
  try {
    writeConfigText(file, next, mode);
  } catch (e) {
    if (backup) removeQuietly(backup);
    const target = linkTarget(file);
    const where =
      target === file
        ? `${file} cannot be written (${errorCode(e)})`
        : `${file} is a link to ${target}, which cannot be written (${errorCode(e)})`;
    throw new BridgeError("CONFIG", `${where}; nothing was changed`, {
      hint: `if another tool manages it (home-manager, a dotfiles repository), add the entry there: \`mcp-code-exec config snippet --client ${client}\` prints it`,
    });
  }
  return { file, backup, replaced };
}

/** Remove `[mcp_servers.NAME]` and its sub-tables from TOML text, leaving every other line. */
function removeTomlTable(text: string, name: string): string {
  const esc = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const own = new RegExp(`^\\s*\\[\\s*mcp_servers\\s*\\.\\s*(?:${esc}|"${esc}"|'${esc}')\\s*(\\]|\\.)`);
  const out: string[] = [];
  let skipping = false;
  for (const line of text.split("\n")) {
    if (/^\s*\[/.test(line)) skipping = own.test(line);
    if (!skipping) out.push(line);
  }
  return out.join("\n");
}

/** Entry point of `config add`. */
export function configAdd(opts: { client?: string; name?: string; force?: boolean; npx?: boolean }): number {
  const client = clientArg(opts.client);
  const name = opts.name || "code-exec";
  const r = addToClient(client, name, launchFor(opts.npx), bridgeEnvForEntry(), { force: opts.force });
  process.stdout.write(`${r.replaced ? "Replaced" : "Added"} ${name} in ${r.file}${r.backup ? ` (backup: ${r.backup})` : ""}.\n`);
  if (client === "claude-code")
    process.stdout.write("Claude Code reads it as a user-scope server in every project (like `claude mcp add --scope user`).\n");
  return 0;
}
