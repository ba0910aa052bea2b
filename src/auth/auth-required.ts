/** The error a remote server's missing, expired or revoked sign-in turns into, naming the fix. */

/** The command that signs in to one server. */
export function loginCommand(server: string): string {
  return `mcp-code-exec auth login ${/^[A-Za-z0-9._-]+$/.test(server) ? server : JSON.stringify(server)}`;
}

/** A remote server wants an OAuth sign-in the bridge cannot do on its own (it never opens a browser by itself). */
export class AuthRequiredError extends Error {
  readonly server: string;
  constructor(server: string, why: string) {
    super(`server ${server} needs you to sign in (OAuth): ${why}; run \`${loginCommand(server)}\` in a terminal, then call again`);
    this.name = "AuthRequiredError";
    this.server = server;
  }
}
