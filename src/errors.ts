/**
 * Local errors. Each carries a string code and says what to do; `cause` is kept. Wire errors (JSON-RPC)
 * live with the MCP SDK and are never mixed with these.
 */
export type ErrorCode =
  | "CONFIG"
  | "ENGINE_UNAVAILABLE"
  | "ENGINE_FAILED"
  | "IMAGE_MISSING"
  | "IMAGE_PULL"
  | "SANDBOX_START"
  | "SANDBOX_EXITED"
  | "SANDBOX_PROTOCOL"
  | "INVALID_INPUT";

export class BridgeError extends Error {
  readonly code: ErrorCode;
  readonly source: string | undefined;
  readonly hint: string | undefined;

  constructor(code: ErrorCode, message: string, options: { source?: string; hint?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "BridgeError";
    this.code = code;
    this.source = options.source;
    this.hint = options.hint;
  }

  /** `[mcp-code-exec] [podman] image x not found: run ...` */
  render(): string {
    const where = this.source ? ` [${this.source}]` : "";
    const hint = this.hint ? `: ${this.hint}` : "";
    return `[mcp-code-exec]${where} ${this.message}${hint}`;
  }
}

/** An engine that is not installed or not reachable here; selection moves on to the next one. */
export class EngineUnavailableError extends BridgeError {
  constructor(engine: string, message: string, hint?: string, cause?: unknown) {
    super("ENGINE_UNAVAILABLE", message, { source: engine, hint, cause });
    this.name = "EngineUnavailableError";
  }
}

export function renderError(err: unknown): string {
  if (err instanceof BridgeError) return err.render();
  if (err instanceof Error) return `[mcp-code-exec] ${err.message}`;
  return `[mcp-code-exec] ${String(err)}`;
}
