/** `mcp-code-exec skills list|show|rm NAME`: review the skills the model saved (runtime.save_skill). */
import { createApp } from "../app.ts";
import { SkillStore } from "../skills/store.ts";

export function skills(action: string, name: string | undefined, opts: { json?: boolean }): number {
  const app = createApp({ ...process.env, MCP_BRIDGE_LOG_LEVEL: process.env.MCP_BRIDGE_LOG_LEVEL ?? "ERROR" });
  const store = new SkillStore(app.config.stateDir);
  switch (action) {
    case "list": {
      const all = store.list();
      if (opts.json) process.stdout.write(`${JSON.stringify(all, null, 2)}\n`);
      else if (all.length === 0) process.stdout.write(`no skills saved (they live in ${store.dir})\n`);
      else for (const s of all) process.stdout.write(`${s.name}  ${s.description.split("\n")[0] ?? ""}\n    ${s.file}\n`);
      return 0;
    }
    case "show":
    case "rm": {
      if (!name) {
        process.stderr.write(`[mcp-code-exec] skills ${action} needs a skill name: see \`mcp-code-exec skills list\`\n`);
        return 2;
      }
      const skill = store.get(name);
      if (!skill) {
        process.stderr.write(`[mcp-code-exec] no skill named ${JSON.stringify(name)} in ${store.dir}: see \`mcp-code-exec skills list\`\n`);
        return 1;
      }
      if (action === "rm") {
        store.remove(name);
        process.stdout.write(`removed skill ${name}\n`);
      } else {
        process.stdout.write(`"""${skill.description}"""\n\n${skill.source}`);
      }
      return 0;
    }
    default:
      process.stderr.write(
        `[mcp-code-exec] unknown action ${JSON.stringify(action)}: use skills list, skills show NAME or skills rm NAME\n`,
      );
      return 2;
  }
}
