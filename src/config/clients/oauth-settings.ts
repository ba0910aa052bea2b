/**
 * A remote entry's OAuth client settings and headersHelper, read only where the client documents them:
 * - Claude Code (and our own files): `oauth{clientId, callbackPort, authServerMetadataUrl, scopes}`
 *   (`clientSecret` too, which Claude Code keeps in its keychain instead) and `headersHelper`;
 * - VS Code: `oauth{clientId}` (`enterpriseManaged` is VS Code's business);
 * - Cursor: `auth{CLIENT_ID, CLIENT_SECRET, scopes}`.
 * Strings are kept as written here; the client's variables are expanded with the rest of the entry.
 */
import * as z from "zod";
import type { OAuthSettings } from "../server-entry.ts";
import { validate, type PathSegment, type SchemaIssue } from "../server-schemas.ts";

/** Which client's OAuth fields an entry may carry. */
export type OAuthDialect = "claude" | "vscode" | "cursor";

const scopes = z.union([z.string(), z.array(z.string())]).transform((v) => (Array.isArray(v) ? v.join(" ") : v).trim() || undefined);

export const OAuthSettingsSchema = z
  .looseObject({
    clientId: z
      .string()
      .min(1)
      .optional()
      .describe("A client id registered ahead of time; without it the bridge registers itself (dynamic client registration)"),
    clientSecret: z.string().min(1).optional().describe("Secret of that client, if it has one; variables expand"),
    callbackPort: z
      .number()
      .int()
      .min(1)
      .max(65535)
      .optional()
      .describe("Fixed port of the loopback redirect http://localhost:PORT/callback"),
    authServerMetadataUrl: z.string().min(1).optional().describe("Authorization server metadata URL, instead of discovering it"),
    scopes: scopes.optional().describe("Scopes to ask for, space-separated or a list"),
  })
  .describe("OAuth client settings of a remote server (Claude Code)");

export const VsCodeOAuthSchema = z
  .looseObject({ clientId: z.string().min(1).optional().describe("A client id registered ahead of time") })
  .describe("VS Code's OAuth client settings");

export const CursorAuthSchema = z
  .looseObject({
    CLIENT_ID: z.string().min(1).optional().describe("Client id"),
    CLIENT_SECRET: z.string().min(1).optional().describe("Client secret"),
    scopes: scopes.optional().describe("Scopes"),
  })
  .describe("Cursor's static OAuth client");

export const HeadersHelperSchema = z
  .string()
  .min(1, "must not be empty")
  .describe("Claude Code: a shell command printing a JSON object of headers, run on this computer at each connection");

/** Where each setting sits in the entry, for messages about its variables. */
export interface OAuthRead {
  settings: OAuthSettings;
  /** The entry's key holding them (`oauth`, or Cursor's `auth`). */
  key: "oauth" | "auth";
  /** Field names as the client spells them. */
  fields: Partial<Record<keyof OAuthSettings, string>>;
}

/** The entry's OAuth settings in this client's dialect; undefined when it has none. */
export function readOAuthSettings(raw: Record<string, unknown>, dialect: OAuthDialect): { read?: OAuthRead; issues: SchemaIssue[] } {
  if (dialect === "cursor") {
    if (raw.auth === undefined) return { issues: [] };
    const v = validate(CursorAuthSchema, raw.auth);
    if (!v.ok) return { issues: v.issues.map((i) => ({ ...i, path: ["auth", ...i.path] })) };
    const settings = clean({ clientId: v.data.CLIENT_ID, clientSecret: v.data.CLIENT_SECRET, scopes: v.data.scopes });
    return { read: settings && { settings, key: "auth", fields: { clientId: "CLIENT_ID", clientSecret: "CLIENT_SECRET" } }, issues: [] };
  }
  if (raw.oauth === undefined || raw.oauth === false) return { issues: [] };
  const v = validate<Record<string, unknown>>(dialect === "vscode" ? VsCodeOAuthSchema : OAuthSettingsSchema, raw.oauth);
  if (!v.ok) return { issues: v.issues.map((i) => ({ ...i, path: ["oauth", ...i.path] })) };
  const d = v.data as z.infer<typeof OAuthSettingsSchema>;
  const settings = clean(
    dialect === "vscode"
      ? { clientId: d.clientId }
      : {
          clientId: d.clientId,
          clientSecret: d.clientSecret,
          callbackPort: d.callbackPort,
          authServerMetadataUrl: d.authServerMetadataUrl,
          scopes: d.scopes,
        },
  );
  return { read: settings && { settings, key: "oauth", fields: {} }, issues: [] };
}

/** The entry's headersHelper (Claude Code's field), validated. */
export function readHeadersHelper(raw: Record<string, unknown>): { value?: string; issues: SchemaIssue[] } {
  if (raw.headersHelper === undefined) return { issues: [] };
  const v = validate(HeadersHelperSchema, raw.headersHelper);
  return v.ok
    ? { value: v.data, issues: [] }
    : { issues: v.issues.map((i) => ({ ...i, path: ["headersHelper" as PathSegment, ...i.path] })) };
}

function clean(o: OAuthSettings): OAuthSettings | undefined {
  for (const k of Object.keys(o) as Array<keyof OAuthSettings>) if (o[k] === undefined) delete o[k];
  return Object.keys(o).length ? o : undefined;
}
