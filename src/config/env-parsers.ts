/**
 * The parsers the variables in env-vars.ts are declared with: seconds, sizes, whole numbers, glob
 * lists, flags and command lines, each with an error message that names the variable and says what
 * was expected.
 */
import { statSync } from "node:fs";
import * as z from "zod";

export const seconds = (name: string) =>
  z
    .string()
    .trim()
    .transform((raw, ctx) => {
      const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h)?$/i.exec(raw);
      if (!m) {
        ctx.addIssue({ code: "custom", message: `${name}: expected seconds like 30, 2.5, 90s, 5m or 1h; got "${raw}"` });
        return z.NEVER;
      }
      const n = Number(m[1]);
      const unit = (m[2] ?? "s").toLowerCase();
      const factor = unit === "ms" ? 0.001 : unit === "m" ? 60 : unit === "h" ? 3600 : 1;
      const value = n * factor;
      if (!(value > 0)) {
        ctx.addIssue({ code: "custom", message: `${name}: must be greater than 0; got "${raw}"` });
        return z.NEVER;
      }
      return value;
    });

/** Bytes in a size such as 65536, 64k, 512m, 1g or 2GiB (powers of 1024); NaN when it is not one. */
export function parseSize(raw: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([kmg]i?b?|b)?$/i.exec(raw.trim());
  if (!m) return Number.NaN;
  const unit = (m[2] ?? "b").toLowerCase()[0];
  const factor = unit === "k" ? 1024 : unit === "m" ? 1024 ** 2 : unit === "g" ? 1024 ** 3 : 1;
  return Math.floor(Number(m[1]) * factor);
}

export const bytes = (name: string) =>
  z
    .string()
    .trim()
    .transform((raw, ctx) => {
      const value = parseSize(raw);
      if (Number.isNaN(value)) {
        ctx.addIssue({ code: "custom", message: `${name}: expected a size like 65536, 64k, 512m or 1g; got "${raw}"` });
        return z.NEVER;
      }
      if (value <= 0) {
        ctx.addIssue({ code: "custom", message: `${name}: must be greater than 0; got "${raw}"` });
        return z.NEVER;
      }
      return value;
    });

export const positiveInt = (name: string) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, `${name}: expected a whole number`)
    .transform(Number)
    .refine((n) => n > 0, `${name}: must be greater than 0`);

export const globList = (name: string) =>
  z
    .string()
    .transform((raw) =>
      raw
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean),
    )
    .refine((l) => l.every((g) => g.length <= 300), `${name}: each pattern at most 300 characters`);

export const flag = z
  .string()
  .trim()
  .toLowerCase()
  .refine((v) => ["1", "0", "true", "false", "yes", "no", "on", "off", ""].includes(v), "expected 1/0, true/false, yes/no or on/off")
  .transform((v) => ["1", "true", "yes", "on"].includes(v));

/** A command line split on spaces, or a JSON array of strings; `none` is the empty list. */
export const commandLine = (name: string) =>
  z
    .string()
    .trim()
    .min(1)
    .transform((raw, ctx) => {
      if (raw === "none") return [];
      if (!raw.startsWith("[")) return raw.split(/\s+/);
      try {
        const v: unknown = JSON.parse(raw);
        if (Array.isArray(v) && v.length > 0 && v.every((x): x is string => typeof x === "string" && x !== "")) return v;
      } catch {
        // reported below
      }
      ctx.addIssue({ code: "custom", message: `${name}: expected a command line, or a JSON array of non-empty strings` });
      return z.NEVER;
    });

export function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

export function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}
