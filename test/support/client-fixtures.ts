/**
 * A HOME and a project holding one config per client, written in each client's documented format
 * (paths for Linux), with precedence cases inside each client and disabled entries. Used by the unit
 * tests (discovery) and the compiled-binary tests (`servers --json`).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

export type FixtureFile =
  | "claudeJson"
  | "mcpJson"
  | "desktop"
  | "vscodeWs"
  | "vscodeUser"
  | "cursorGlobal"
  | "cursorProject"
  | "windsurf"
  | "codexUser"
  | "codexProject"
  | "gemini"
  | "geminiProject"
  | "zedUser"
  | "zedProject"
  | "opencode"
  | "cline"
  | "continueUser"
  | "continueProject"
  | "goose"
  | "copilotUser"
  | "copilotProject";

export interface ClientWorld {
  home: string;
  cwd: string;
  /** Environment the fixtures expect (variables they substitute). */
  env: Record<string, string>;
  files: Record<FixtureFile, string>;
}

function put(file: string, content: unknown): string {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content, null, 2));
  return file;
}

/** Writes every client's files under root/home and root/project. `memory` is the server-memory script. */
export function writeClientWorld(root: string, memory = "/opt/memory.js"): ClientWorld {
  const home = join(root, "home");
  const cwd = join(root, "project");
  mkdirSync(join(cwd, ".git"), { recursive: true }); // the project's root, for opencode's walk up
  const f = {} as Record<FixtureFile, string>;
  f.claudeJson = put(join(home, ".claude.json"), {
    numStartups: 3,
    mcpServers: {
      "cc-user": { command: "cc-user-cmd", args: ["${CC_VAR:-dflt}", "${CC_UNSET:-fallback}"] },
      "cc-dup": { command: "user-version" },
    },
    projects: {
      [cwd]: {
        hasTrustDialogAccepted: true,
        mcpServers: {
          "cc-local": { type: "stdio", command: "cc-local-cmd", env: { PLAIN: "${CC_VAR}" } },
          "cc-dup": { command: "local-version" },
        },
      },
    },
  });
  f.mcpJson = put(join(cwd, ".mcp.json"), {
    mcpServers: {
      "cc-dup": { command: "project-version" },
      "cc-proj": { type: "http", url: "https://cc.example/${CC_VAR}/mcp", headers: { "X-Org": "${CC_VAR}" } },
    },
  });
  f.desktop = put(join(home, ".config", "Claude", "claude_desktop_config.json"), {
    mcpServers: { desk: { command: "desk-cmd", args: ["${HOME}"], env: { PLAIN: "v" } } },
  });
  f.vscodeWs = put(
    join(cwd, ".vscode", "mcp.json"),
    `{
  // VS Code: comments and trailing commas
  "inputs": [{ "type": "promptString", "id": "api-token", "description": "API token", "password": true }],
  "servers": {
    "vs-ws": {
      "type": "stdio",
      "command": "node",
      "args": ["\${workspaceFolder}/server.js", "\${workspaceFolderBasename}", "\${userHome}"],
      "env": { "PORT": 8080, "NULLED": null, "SECRET_TOKEN": "\${input:api-token}" },
      "envFile": "\${workspaceFolder}/.env",
    },
  },
}`,
  );
  put(join(cwd, ".env"), "FROM_FILE=yes\nPORT=1\n");
  f.vscodeUser = put(join(home, ".config", "Code", "User", "mcp.json"), {
    servers: { "vs-user": { type: "http", url: "https://vs.example/mcp", headers: { "X-Org": "${env:VS_ORG}" } } },
  });
  f.cursorGlobal = put(join(home, ".cursor", "mcp.json"), {
    mcpServers: {
      "cur-dup": { command: "global-version" },
      "cur-g": { url: "https://cur.example/mcp", headers: { "X-Org": "${env:CUR_ORG}" } },
    },
  });
  f.cursorProject = put(join(cwd, ".cursor", "mcp.json"), {
    mcpServers: { "cur-dup": { command: "project-version", args: ["${workspaceFolder}"] } },
  });
  put(join(home, "ws-value.txt"), "from-file\n");
  f.windsurf = put(join(home, ".codeium", "windsurf", "mcp_config.json"), {
    mcpServers: {
      "ws-remote": { serverUrl: "https://ws.example/mcp" },
      "ws-off": { command: "x", disabled: true },
      "ws-file": { command: "wsf", env: { PLAIN: "${file:~/ws-value.txt}", ORG: "${env:WS_ORG}" } },
    },
  });
  f.codexUser = put(
    join(home, ".codex", "config.toml"),
    `# Codex config
model = "o4"

[mcp_servers.codex-mem]
command = "node"
args = ["${memory}"]
env = { MEMORY_FILE_PATH = "${join(root, "codex-memory.jsonl")}" }
env_vars = ["CODEX_PASS"]

[mcp_servers.codex-http]
url = "https://codex.example/mcp"
bearer_token_env_var = "CODEX_TOKEN"

[mcp_servers.codex-off]
command = "x"
enabled = false

[projects."${cwd}"]
trust_level = "trusted"
`,
  );
  f.codexProject = put(join(cwd, ".codex", "config.toml"), '[mcp_servers.codex-proj]\ncommand = "codex-proj-cmd"\nargs = ["--x"]\n');
  f.gemini = put(join(home, ".gemini", "settings.json"), {
    mcpServers: {
      "gem-sse": { url: "https://g.example/sse" },
      "gem-http": { httpUrl: "https://g.example/mcp", headers: { "X-Org": "$GEM_ORG" } },
      "gem-stdio": { command: "gem-cmd", args: ["${GEM_ORG}", "$GEM_UNSET"], cwd: "/tmp" },
      "gem-ex": { command: "x" },
    },
    mcp: { excluded: ["gem-ex"] },
  });
  f.geminiProject = put(join(cwd, ".gemini", "settings.json"), { mcpServers: { "gem-proj": { command: "gem-proj-cmd" } } });
  f.zedUser = put(
    join(home, ".config", "zed", "settings.json"),
    `// Zed settings
{
  "theme": "One Dark",
  "context_servers": {
    "zed-new": { "command": "zn", "args": ["a"], "env": { "PLAIN": "1" } },
    "zed-old": { "source": "custom", "command": { "path": "zo", "args": ["b"], "env": { "E": "1" } } },
    "zed-remote": { "url": "https://zed.example/mcp", "headers": { "X-Org": "z" } },
    "zed-ext": { "source": "extension", "settings": {} },
    "zed-off": { "command": "x", "enabled": false },
  },
}`,
  );
  f.zedProject = put(join(cwd, ".zed", "settings.json"), { context_servers: { "zed-new": { args: ["override"] } } });
  f.opencode = put(join(home, ".config", "opencode", "opencode.json"), {
    $schema: "https://opencode.ai/config.json",
    mcp: {
      "oc-local": {
        type: "local",
        command: ["node", memory],
        environment: { MEMORY_FILE_PATH: join(root, "oc-memory.jsonl"), PLAIN: "{env:OC_VAR}" },
      },
      "oc-remote": { type: "remote", url: "https://oc.example/mcp", headers: { "X-Org": "{env:OC_VAR}" } },
      "oc-off": { type: "local", command: ["x"], enabled: false },
    },
  });
  f.cline = put(join(home, ".cline", "data", "settings", "cline_mcp_settings.json"), {
    mcpServers: {
      "cline-sse": { url: "https://cl.example/sse" },
      "cline-http": { type: "streamableHttp", url: "https://cl.example/mcp" },
      "cline-off": { command: "x", disabled: true, autoApprove: [] },
    },
  });
  f.continueUser = put(
    join(home, ".continue", "config.yaml"),
    `name: My config
version: 0.0.1
schema: v1
mcpServers:
  - name: cont-user
    command: npx
    args: ["-y", "some-server"]
    env:
      PLAIN: \${{ secrets.CONT_VALUE }}
  - name: cont-missing
    command: x
    env:
      OTHER: \${{ secrets.NOT_SET_ANYWHERE }}
`,
  );
  put(join(home, ".continue", ".env"), "CONT_VALUE=from-continue-env\n");
  f.continueProject = put(
    join(cwd, ".continue", "mcpServers", "remote.yaml"),
    "name: Remote block\nversion: 0.0.1\nschema: v1\nmcpServers:\n  - name: cont-proj\n    type: streamable-http\n    url: https://cont.example/mcp\n",
  );
  f.goose = put(
    join(home, ".config", "goose", "config.yaml"),
    `GOOSE_PROVIDER: openai
extensions:
  goose-mem:
    name: Memory
    type: stdio
    cmd: node
    args: ["${memory}"]
    envs:
      MEMORY_FILE_PATH: ${join(root, "goose-memory.jsonl")}
    env_keys: [GOOSE_KEY]
    enabled: true
    timeout: 300
  developer:
    type: builtin
    name: developer
    enabled: true
  goose-remote:
    type: streamable_http
    uri: https://goose.example/mcp
    enabled: true
  goose-off:
    type: stdio
    cmd: x
    enabled: false
`,
  );
  f.copilotUser = put(join(home, ".copilot", "mcp-config.json"), {
    mcpServers: { "cop-local": { type: "local", command: "cop-cmd", args: ["a"], tools: ["*"] } },
  });
  f.copilotProject = put(join(cwd, ".github", "mcp.json"), {
    mcpServers: { "cop-proj": { type: "http", url: "https://cop.example/mcp" } },
  });
  put(join(home, ".copilot", "config.json"), { trusted_folders: [cwd] });
  return {
    home,
    cwd,
    files: f,
    env: { CC_VAR: "cv", VS_ORG: "vo", CUR_ORG: "co", WS_ORG: "wo", GEM_ORG: "go", OC_VAR: "ov", CODEX_PASS: "cp", GOOSE_KEY: "gk" },
  };
}
