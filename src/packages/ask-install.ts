/**
 * The question a person answers before anything is downloaded from a package index: each wheel by
 * name, version and size, which were asked for and which are dependencies, the index, and the risks
 * worth a second look (a name one edit from a popular package, a release younger than the cooldown,
 * an unknown release date). One field, `decision`: install or deny; anything but install is a no.
 */
import type { ElicitRequestFormParams } from "@modelcontextprotocol/sdk/types.js";
import type { RunScope } from "../session/request-gate.ts";
import { maskUrl } from "../config/mask.ts";
import { normalize, oneEditFromPopular } from "./requirement.ts";
import type { LockedWheel } from "./uv.ts";

export interface InstallQuestion {
  asked: string[];
  downloads: LockedWheel[];
  index: string;
  cooldownDays: number;
  now?: Date;
}

export interface Flag {
  name: string;
  why: string;
}

/** Risks to show beside the list: typo-like names and releases younger than the cooldown. */
export function riskFlags(q: Pick<InstallQuestion, "downloads" | "cooldownDays" | "now">): Flag[] {
  const now = (q.now ?? new Date()).getTime();
  const flags: Flag[] = [];
  for (const w of q.downloads) {
    const near = oneEditFromPopular(normalize(w.name));
    if (near)
      flags.push({ name: w.name, why: `the name is one letter away from the popular package "${near}": check it is the one you mean` });
    if (w.uploadTime) {
      const days = (now - Date.parse(w.uploadTime)) / 86_400_000;
      if (days < q.cooldownDays)
        flags.push({
          name: w.name,
          why: `${w.version} was released ${days < 1 ? "less than a day" : `${Math.floor(days)} day(s)`} ago (cooldown ${q.cooldownDays} days, MCP_BRIDGE_PACKAGE_COOLDOWN_DAYS)`,
        });
    }
  }
  return flags;
}

export function formatBytes(n: number | undefined): string {
  if (n === undefined) return "size unknown";
  return n >= 1048576 ? `${(n / 1048576).toFixed(1)} MB` : `${Math.max(1, Math.round(n / 1024))} kB`;
}

export function installForm(q: InstallQuestion): ElicitRequestFormParams {
  const asked = new Set(q.asked.map(normalize));
  const total = q.downloads.reduce((s, w) => s + (w.size ?? 0), 0);
  const unknown = q.downloads.some((w) => w.size === undefined);
  const line = (w: LockedWheel) =>
    `  ${w.name} ${w.version}  ${formatBytes(w.size)}${w.uploadTime ? `  released ${w.uploadTime.slice(0, 10)}` : ""}`;
  const flags = riskFlags(q);
  const lines = [
    "Sandbox code (run_python) wants to install Python packages, downloaded from a package index.",
    `Index: ${maskUrl(q.index)}`,
    "Asked for:",
    ...q.downloads.filter((w) => asked.has(normalize(w.name))).map(line),
    ...(q.downloads.some((w) => !asked.has(normalize(w.name)))
      ? ["Dependencies:", ...q.downloads.filter((w) => !asked.has(normalize(w.name))).map(line)]
      : []),
    `Total download: ${formatBytes(total)}${unknown ? " and more (the index does not give every size)" : ""}; wheels only, each checked against its SHA-256.`,
    ...(flags.length ? ["Check before you allow:", ...flags.map((f) => `  ⚠ ${f.name}: ${f.why}`)] : []),
    ...(q.downloads.some((w) => !w.uploadTime) ? ["(This index does not say when some of these were released.)"] : []),
  ];
  return {
    mode: "form",
    message: lines.join("\n"),
    requestedSchema: {
      type: "object",
      properties: {
        decision: {
          type: "string",
          title: "Download and install these packages?",
          description: "install: download these wheels and make them importable in this session; deny: install nothing",
          enum: ["install", "deny"],
          enumNames: ["Install", "Deny"],
        },
      },
      required: ["decision"],
    },
  };
}

export interface InstallVerdict {
  allowed: boolean;
  /** install, deny, decline, cancel, timeout, unsupported, error, run-ended */
  answer: string;
  why?: string;
  waitMs: number;
}

/** Ask through the client that started the run; a client that cannot ask means no. */
export async function askInstall(q: InstallQuestion, run: RunScope, timeoutMs: number): Promise<InstallVerdict> {
  const client = run.client;
  if (!client?.can().form)
    return {
      allowed: false,
      answer: "unsupported",
      why: `${client ? `${client.name} cannot show approval questions (no elicitation)` : "there is no MCP client to ask (mcp-code-exec exec)"}`,
      waitMs: 0,
    };
  const t0 = performance.now();
  const release = run.holdClock();
  const waited = () => Math.round(performance.now() - t0);
  try {
    return await run.approvals.oneAtATime(async () => {
      if (run.signal.aborted) return { allowed: false, answer: "run-ended", why: "the run ended", waitMs: waited() };
      try {
        const r = await client.elicit(installForm(q), { signal: run.signal, timeoutMs });
        const decision = r.action === "accept" ? r.content?.decision : undefined;
        if (decision === "install") return { allowed: true, answer: "install", waitMs: waited() };
        return {
          allowed: false,
          answer: r.action === "accept" ? "deny" : r.action,
          why: "the user did not approve the download",
          waitMs: waited(),
        };
      } catch (err) {
        if (run.signal.aborted)
          return { allowed: false, answer: "run-ended", why: "the run ended while the question was open", waitMs: waited() };
        const timeout = /timed? ?out/i.test((err as Error).message);
        return {
          allowed: false,
          answer: timeout ? "timeout" : "error",
          why: timeout ? `nobody answered within ${Math.round(timeoutMs / 1000)}s` : `the question failed: ${(err as Error).message}`,
          waitMs: waited(),
        };
      }
    });
  } finally {
    release();
  }
}
