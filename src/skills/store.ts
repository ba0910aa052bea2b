/**
 * Skills: Python functions the model saved with runtime.save_skill, kept per user in the state dir
 * as plain files (`skills/<name>.py`) the user can read and edit. A skill file is the function's
 * source under a module docstring that holds its description. Nothing here runs Python: the
 * sandbox imports a skill's source only when code asks for it (`from skills import name`).
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { errorCode, removeQuietly } from "../host/private-dir.ts";
import * as z from "zod";

/** A skill name: a Python identifier that can be a module name. */
export const SkillNameSchema = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, "a skill name is a Python identifier (letters, digits, _; at most 64)")
  .describe("Name of the skill: `from skills import NAME`");

export const SkillSchema = z.object({
  name: SkillNameSchema,
  description: z
    .string()
    .max(2000, "a description has at most 2,000 characters")
    .default("")
    .describe("What the skill does, for search and review"),
  source: z
    .string()
    .min(1, "a skill needs source code")
    .max(200_000, "a skill's source has at most 200,000 characters")
    .describe("Python source defining NAME"),
});

export type Skill = z.infer<typeof SkillSchema>;

export interface SkillInfo {
  name: string;
  description: string;
  file: string;
  modified: string;
}

const HEADER = /^"""([\s\S]*?)"""\n/;

export class SkillStore {
  readonly dir: string;

  constructor(stateDir: string) {
    this.dir = join(stateDir, "skills");
  }

  list(): SkillInfo[] {
    let names: string[] = [];
    try {
      names = readdirSync(this.dir)
        .filter((f) => /^[A-Za-z_][A-Za-z0-9_]*\.py$/.test(f))
        .sort();
    } catch {
      return [];
    }
    return names.flatMap((f) => {
      const skill = this.get(f.slice(0, -3));
      if (!skill) return [];
      const file = join(this.dir, f);
      return [{ name: skill.name, description: skill.description, file, modified: statSync(file).mtime.toISOString() }];
    });
  }

  get(name: string): Skill | undefined {
    if (!SkillNameSchema.safeParse(name).success) return undefined;
    let text: string;
    try {
      text = readFileSync(join(this.dir, `${name}.py`), "utf8");
    } catch {
      return undefined;
    }
    const m = HEADER.exec(text);
    return { name, description: m ? m[1]!.trim() : "", source: m ? text.slice(m[0].length).replace(/^\n/, "") : text };
  }

  /** Writes the skill's file (0600, atomically); returns its path. */
  save(input: { name: string; description?: string; source: string }): string {
    const skill = SkillSchema.parse(input);
    const file = join(this.dir, `${skill.name}.py`);
    const doc = skill.description.replace(/\\/g, "\\\\").replace(/"""/g, '\\"\\"\\"');
    const text = `"""${doc}"""\n\n${skill.source.replace(/\r\n/g, "\n").trimEnd()}\n`;
    try {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      writeFileSync(`${file}.tmp`, text, { mode: 0o600 });
      renameSync(`${file}.tmp`, file);
    } catch (err) {
      removeQuietly(`${file}.tmp`);
      throw new Error(
        `cannot save the skill to ${this.dir} (${errorCode(err)}): the bridge's state dir must be writable to keep skills; free some disk space or set MCP_BRIDGE_STATE_DIR to a folder this user can write`,
      );
    }
    return file;
  }

  remove(name: string): boolean {
    if (!this.get(name)) return false;
    rmSync(join(this.dir, `${name}.py`), { force: true });
    return true;
  }
}
