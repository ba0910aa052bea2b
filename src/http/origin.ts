/**
 * DNS rebinding: a web page the user opened can make their browser send requests to a server on their
 * own machine under the page's name. Browsers always say where such a request comes from (`Origin`),
 * and the name it was sent to (`Host`). A request from an origin not allowed, or to a host name this
 * server does not answer to while it listens on loopback, is refused before anything else is read.
 */

export interface OriginPolicy {
  /** Origins allowed besides this server's own (MCP_BRIDGE_HTTP_ORIGINS). */
  origins: string[];
  /** Host names (with port) this server answers to; empty: any (it listens beyond loopback). */
  hosts: string[];
}

/** The hosts a loopback listener answers to: localhost, 127.0.0.1 and [::1] at its port. */
export function loopbackHosts(hostname: string, port: number): string[] {
  if (!isLoopback(hostname)) return [];
  return [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`];
}

export function isLoopback(hostname: string): boolean {
  return hostname === "localhost" || hostname === "::1" || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

/** Why the request is refused, or undefined. */
export function originProblem(req: Request, policy: OriginPolicy): string | undefined {
  const host = req.headers.get("host")?.toLowerCase();
  if (policy.hosts.length && (!host || !policy.hosts.includes(host)))
    return `requests must be sent to this server by one of its names (${policy.hosts.join(", ")}), not ${JSON.stringify(host ?? "")}`;
  const origin = req.headers.get("origin");
  if (origin === null) return undefined; // not a browser's cross-site request
  const own = host ? [`http://${host}`, `https://${host}`] : [];
  if (own.includes(origin.toLowerCase()) || policy.origins.includes(origin)) return undefined;
  return `requests from the web origin ${JSON.stringify(origin.slice(0, 200))} are not allowed (MCP_BRIDGE_HTTP_ORIGINS lists the ones that are)`;
}
