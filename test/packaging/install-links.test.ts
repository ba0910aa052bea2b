/**
 * README's "Add to Cursor" and "Install in VS Code" links, decoded the way each editor decodes them:
 * Cursor's deeplink carries base64 JSON of the server entry in `config`; VS Code's handler takes the
 * `vscode:mcp/install?` query, URL-decodes it, JSON-parses it and splits off `name`. What comes out must
 * be what `config snippet --npx` prints for that client, for this version. (No editor runs here.)
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { cursorDeeplink, entryFor, installLinksMarkdown, SERVER_NAME } from "../../scripts/install-links.ts";
import { ROOT } from "../support/env.ts";

const README = readFileSync(join(ROOT, "README.md"), "utf8");
const REGENERATE = "regenerate them with `bun scripts/install-links.ts` and paste into README's Install section";
/** Markdown link targets in README that start with `prefix`. */
const links = (prefix: string) =>
  [...README.matchAll(/\]\((https:[^)\s]+)\)/g)].map((m) => m[1] as string).filter((u) => u.startsWith(prefix));

describe("README install links", () => {
  const npx = { command: "npx", args: ["-y", `mcp-code-exec@${pkg.version}`] };

  test("Add to Cursor: cursor.com's install page with name and base64 config, the same query as Cursor's own deeplink", () => {
    const found = links("https://cursor.com/en/install-mcp?");
    expect(found, `one Add to Cursor link in README; ${REGENERATE}`).toHaveLength(1);
    const url = new URL(found[0] as string);
    expect(url.searchParams.get("name")).toBe(SERVER_NAME);
    const config = JSON.parse(Buffer.from(url.searchParams.get("config") ?? "", "base64").toString("utf8"));
    expect(config, REGENERATE).toEqual(npx);
    expect(config).toEqual(entryFor("cursor"));
    const deeplink = new URL(cursorDeeplink(SERVER_NAME, config));
    expect([deeplink.protocol, deeplink.host, deeplink.pathname, deeplink.search]).toEqual([
      "cursor:",
      "anysphere.cursor-deeplink",
      "/mcp/install",
      url.search,
    ]);
  });

  test("Install in VS Code: vscode.dev's redirect to vscode:mcp/install with the URL-encoded JSON entry and its name", () => {
    const found = links("https://insiders.vscode.dev/redirect?");
    expect(found, `one Install in VS Code link in README; ${REGENERATE}`).toHaveLength(1);
    const target = new URL(found[0] as string).searchParams.get("url") ?? "";
    const link = new URL(target);
    expect([link.protocol, link.pathname]).toEqual(["vscode:", "mcp/install"]);
    // VS Code decodes the query once when it parses the URI and once more in its handler: harmless
    // only if the JSON itself holds no '%'.
    const json = decodeURIComponent(link.search.slice(1));
    expect(json).not.toContain("%");
    const { name, ...entry } = JSON.parse(json);
    expect(name).toBe(SERVER_NAME);
    expect(entry, REGENERATE).toEqual({ type: "stdio", ...npx });
    expect(entry).toEqual(entryFor("vscode"));
  });

  test("README shows exactly what scripts/install-links.ts makes, and the npx command of this version", () => {
    for (const line of installLinksMarkdown().split("\n")) expect(README, REGENERATE).toContain(line);
    expect(README).toContain(`\`npx -y mcp-code-exec@${pkg.version}\``);
  });
});
