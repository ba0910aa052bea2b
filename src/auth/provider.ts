/**
 * The MCP SDK's OAuthClientProvider for one remote server, backed by the token store. The SDK does the
 * OAuth itself (discovery, registration, PKCE, code exchange, refresh); this says where things are kept
 * and what may happen:
 * - "login" (`mcp-code-exec auth login`): may register a client and hands the authorization URL to the
 *   caller, who shows it to the user and waits on the loopback redirect.
 * - "background" (a bridge serving proxied calls): uses and refreshes what a login stored, and never
 *   registers a client or starts an authorization: it raises AuthRequiredError naming the login command.
 */
import type { OAuthClientProvider, OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { OAuthSettings } from "../config/servers.ts";
import { AuthRequiredError } from "./auth-required.ts";
import type { AuthState, StoreKey, TokenStore } from "./token-store.ts";

/** A remote server as the OAuth code needs it. */
export interface OAuthTarget {
  name: string;
  url: string;
  oauth?: OAuthSettings;
}

export type ProviderMode =
  | { kind: "background" }
  | {
      kind: "login";
      redirectUrl: string;
      state: string;
      onAuthorizationUrl: (url: URL) => void;
      /** Authorization server metadata given in the config (oauth.authServerMetadataUrl) instead of discovered. */
      discovery?: OAuthDiscoveryState;
    };

/** The record of a target: its URL and the client id its config names. */
export function storeKey(target: { url: string; oauth?: OAuthSettings }): StoreKey {
  return { url: target.url, clientId: target.oauth?.clientId };
}

/** Client name shown on consent screens. */
const CLIENT_NAME = "mcp-code-exec";

export class StoredOAuthProvider implements OAuthClientProvider {
  readonly #target: OAuthTarget;
  readonly #store: TokenStore;
  readonly #mode: ProviderMode;
  readonly #version: string;
  #verifier: string | undefined;
  /** A login discovers afresh: what it found so far (a bridge in the background reuses the stored discovery). */
  #loginDiscovery: OAuthDiscoveryState | undefined;
  /** The tokens last handed to the SDK, so a failed refresh only forgets those (not newer ones another bridge saved). */
  #handedOut: OAuthTokens | undefined;
  /** The authorization server refused the stored tokens during this provider's life. */
  #refused = false;

  constructor(target: OAuthTarget, store: TokenStore, mode: ProviderMode, version: string) {
    this.#target = target;
    this.#store = store;
    this.#mode = mode;
    this.#version = version;
    if (mode.kind === "login") this.#loginDiscovery = mode.discovery;
  }

  get redirectUrl(): string {
    if (this.#mode.kind === "login") return this.#mode.redirectUrl;
    // Never used to redirect in the background; the SDK only needs to know this is an interactive client.
    return (this.#read().client as { redirect_uris?: string[] } | undefined)?.redirect_uris?.[0] ?? "http://127.0.0.1/callback";
  }

  get clientMetadata(): OAuthClientMetadata {
    const secret = this.#target.oauth?.clientSecret;
    return {
      client_name: CLIENT_NAME,
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: secret ? "client_secret_basic" : "none",
      software_id: CLIENT_NAME,
      software_version: this.#version,
      ...(this.#target.oauth?.scopes ? { scope: this.#target.oauth.scopes } : {}),
    };
  }

  state(): string {
    // In the background an authorization never starts: redirectToAuthorization refuses it just after.
    return this.#mode.kind === "login" ? this.#mode.state : "unused";
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    const stored = this.#read().client;
    const configured = this.#target.oauth?.clientId;
    if (configured) {
      if (stored?.client_id === configured) return stored;
      return { client_id: configured, ...(this.#target.oauth?.clientSecret ? { client_secret: this.#target.oauth.clientSecret } : {}) };
    }
    if (this.#mode.kind === "login") {
      // A registration made for another redirect URL (another loopback port) is of no use: register again.
      const uris = (stored as { redirect_uris?: string[] } | undefined)?.redirect_uris;
      return uris && !uris.includes(this.#mode.redirectUrl) ? undefined : stored;
    }
    if (!stored) throw this.#needsLogin("you have not signed in to it yet");
    return stored;
  }

  saveClientInformation(client: OAuthClientInformationMixed): void {
    this.#update((s) => ({ ...s, client }));
  }

  tokens(): OAuthTokens | undefined {
    // A login asks for a new authorization; the old tokens stay on disk until the new ones replace them.
    if (this.#mode.kind === "login") return undefined;
    this.#handedOut = this.#read().tokens;
    return this.#handedOut;
  }

  /** The stored access token, without handing it out (auth/fetch.ts compares a refused request's with it). */
  accessToken(): string | undefined {
    return this.#mode.kind === "login" ? undefined : this.#read().tokens?.access_token;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.#handedOut = tokens;
    this.#update((s) => ({ ...s, tokens, tokensSavedAt: Date.now(), needsLogin: undefined }));
  }

  redirectToAuthorization(url: URL): void {
    if (this.#mode.kind === "login") return this.#mode.onAuthorizationUrl(url);
    const had = this.#refused || this.#read().tokens !== undefined;
    throw this.#needsLogin(had ? "the sign-in expired or was revoked and could not be refreshed" : "you have not signed in to it yet");
  }

  saveCodeVerifier(verifier: string): void {
    this.#verifier = verifier;
  }

  codeVerifier(): string {
    if (!this.#verifier) throw new Error("no login in progress (PKCE verifier missing)");
    return this.#verifier;
  }

  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): void {
    if (scope === "verifier" || scope === "all") this.#verifier = undefined;
    if (scope === "verifier") return;
    if (this.#mode.kind === "login") {
      if (scope === "all" || scope === "discovery") this.#loginDiscovery = undefined;
      if (scope === "tokens") return; // a login never used the stored tokens
    }
    const handedOut = this.#handedOut;
    if (scope === "tokens" || scope === "all") this.#refused = true;
    this.#update((s) => {
      const next = { ...s };
      if (scope === "all" || scope === "client") next.client = undefined;
      if (scope === "all" || scope === "discovery") next.discovery = undefined;
      // Forget only the tokens that failed: another bridge may have refreshed them meanwhile.
      if (scope === "all" || (scope === "tokens" && (!handedOut || next.tokens?.refresh_token === handedOut.refresh_token))) {
        next.tokens = undefined;
        next.tokensSavedAt = undefined;
      }
      return next;
    });
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    if (this.#mode.kind === "login") this.#loginDiscovery = state;
    this.#update((s) => ({ ...s, discovery: state }));
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.#mode.kind === "login" ? this.#loginDiscovery : this.#read().discovery;
  }

  #read(): AuthState {
    return this.#store.read(storeKey(this.#target)) ?? {};
  }

  #update(change: (s: AuthState) => AuthState): void {
    this.#store.update(storeKey(this.#target), this.#target.name, change);
  }

  #needsLogin(why: string): AuthRequiredError {
    try {
      this.#update((s) => ({ ...s, needsLogin: { at: new Date().toISOString(), reason: why } }));
    } catch {
      // a read-only state dir must not hide the real problem
    }
    return new AuthRequiredError(this.#target.name, why);
  }
}
