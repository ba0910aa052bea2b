/**
 * Every client we read, in our order between clients: an earlier client wins a server name. Inside a
 * client, its own reader applies the client's precedence between its scopes.
 */
import { bridge } from "./bridge.ts";
import { claudeCode } from "./claude-code.ts";
import { claudeDesktop } from "./claude-desktop.ts";
import { cline } from "./cline.ts";
import { codex } from "./codex.ts";
import { continueDev } from "./continue.ts";
import { copilotCli } from "./copilot-cli.ts";
import { cursor } from "./cursor.ts";
import { gemini } from "./gemini.ts";
import { goose } from "./goose.ts";
import { opencode } from "./opencode.ts";
import type { ClientReader } from "./types.ts";
import { vscode } from "./vscode.ts";
import { windsurf } from "./windsurf.ts";
import { zed } from "./zed.ts";

export const CLIENT_READERS: readonly ClientReader[] = [
  bridge,
  claudeCode,
  claudeDesktop,
  vscode,
  cursor,
  windsurf,
  codex,
  gemini,
  zed,
  opencode,
  cline,
  continueDev,
  goose,
  copilotCli,
];
