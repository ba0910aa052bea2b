/**
 * The answer to a ModuleNotFoundError: the distribution the import name belongs to (from the table in
 * import-names.ts, never guessed) and whether runtime.install() can add it now, or what the user must do.
 */
import type { PackageSettings } from "../config/env.ts";
import type { ErrorInfo } from "../sandbox/frames.ts";
import { distributionForImport } from "./import-names.ts";

const OURS = /^(mcp|skills|_mcp_\w*)$/;

export function moduleNotFoundHint(
  error: ErrorInfo | undefined,
  settings: PackageSettings | undefined,
  unavailable: string | undefined,
): string | undefined {
  if (error?.type !== "ModuleNotFoundError") return undefined;
  const name = /No module named '([^']+)'/.exec(error.message)?.[1];
  // A dotted name means the package is there and lacks a submodule: installing cannot help.
  if (!name || name.includes(".") || OURS.test(name)) return undefined;
  const dist = distributionForImport(name) ?? name;
  const what =
    dist === name
      ? `\`import ${name}\` needs the package ${dist}`
      : `\`import ${name}\` needs the distribution ${dist} (${name} is its import name)`;
  if (!settings) return `Note: ${what}, which this sandbox lacks; installs are not available in this bridge.`;
  if (unavailable) return `Note: ${what}, which this sandbox lacks; installs cannot reach this sandbox: ${unavailable}.`;
  if (settings.mode === "deny")
    return `Note: ${what}, which this sandbox lacks. Installs are turned off (MCP_BRIDGE_INSTALL=deny): tell the user; they can add ${dist} to MCP_BRIDGE_PACKAGES or to the image.`;
  const how =
    settings.mode === "allow"
      ? "(MCP_BRIDGE_INSTALL=allow: no question)"
      : "(at once from the wheelhouse or wheels approved before; a download from the package index asks the user first)";
  return `Note: ${what}, which this sandbox lacks: \`from mcp import runtime; runtime.install(${JSON.stringify(dist)})\` makes it importable in this session, variables kept ${how}.`;
}
