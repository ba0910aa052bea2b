/**
 * Setting one value in a JSON/JSONC document while leaving every other byte as it was (comments,
 * spacing, key order). jsonc-parser finds the nodes; the edit itself only touches the value set, or
 * adds one property after the last one of its object, indented like its siblings.
 */
import { findNodeAtLocation, parseTree, type Node, type ParseError } from "jsonc-parser";

/** Return `text` with `path` set to `value` (objects on the way are created). Throws on broken JSON. */
export function setJsonValue(text: string, path: string[], value: unknown): string {
  const source = text.trim() === "" ? "{}\n" : text;
  const errors: ParseError[] = [];
  const root = parseTree(source, errors, { allowTrailingComma: true });
  if (!root || errors.length) throw new Error("the file is not valid JSON; fix it first");
  if (root.type !== "object") throw new Error("the file does not hold a JSON object at the top level");
  // The deepest existing object on the path, and what is left to create under it.
  let depth = path.length;
  let node: Node | undefined;
  for (; depth > 0; depth--) {
    node = findNodeAtLocation(root, path.slice(0, depth));
    if (node) break;
  }
  if (depth === path.length && node) {
    // Replace the existing value in place.
    const indent = lineIndent(source, node.parent?.offset ?? node.offset);
    return source.slice(0, node.offset) + pretty(value, indent) + source.slice(node.offset + node.length);
  }
  const container = depth === 0 ? root : node!;
  if (container.type !== "object") throw new Error(`${path.slice(0, depth).join(".")} is not an object`);
  let built: unknown = value;
  for (let i = path.length - 1; i > depth; i--) built = { [path[i]!]: built };
  return insertProperty(source, container, path[depth]!, built);
}

function insertProperty(text: string, obj: Node, key: string, value: unknown): string {
  const props = obj.children ?? [];
  const closing = obj.offset + obj.length - 1; // the "}"
  const objIndent = lineIndent(text, obj.offset);
  if (props.length === 0) {
    const inner = `${objIndent}  `;
    return `${text.slice(0, obj.offset)}{\n${inner}${JSON.stringify(key)}: ${pretty(value, inner)}\n${objIndent}}${text.slice(closing + 1)}`;
  }
  const last = props[props.length - 1]!;
  const propIndent = lineIndent(text, last.offset);
  const sameLine = !text.slice(obj.offset, last.offset).includes("\n");
  const end = last.offset + last.length;
  // Keep a trailing comma if the file has one; otherwise add ours.
  const after = text.slice(end, closing);
  const comma = /^\s*,/.test(after);
  const sep = sameLine ? " " : `\n${propIndent}`;
  const unit = propIndent.startsWith(objIndent) && propIndent.length > objIndent.length ? propIndent.slice(objIndent.length) : "  ";
  const entry = `${JSON.stringify(key)}: ${pretty(value, sameLine ? objIndent : propIndent, unit)}`;
  const lineEnd = text.indexOf("\n", end);
  if (!comma && !sameLine && lineEnd >= 0 && lineEnd < closing && /^[ \t]*(\/\/.*|\/\*.*\*\/[ \t]*)$/.test(text.slice(end, lineEnd))) {
    // `"a": 1 // note`: the comma goes after the value, our property on the next line.
    return `${text.slice(0, end)},${text.slice(end, lineEnd)}${sep}${entry}${text.slice(lineEnd)}`;
  }
  const insertion = `${comma ? "" : ","}${sep}${entry}${comma ? "," : ""}`;
  let at = comma ? end + after.indexOf(",") + 1 : end;
  const eol = text.indexOf("\n", at);
  if (comma && !sameLine && eol >= 0 && eol < closing && /^[ \t]*(\/\/.*|\/\*.*\*\/[ \t]*)$/.test(text.slice(at, eol))) at = eol;
  return text.slice(0, at) + insertion + text.slice(at);
}

function pretty(value: unknown, indent: string, unit = "  "): string {
  return JSON.stringify(value, null, unit).replace(/\n/g, `\n${indent}`);
}

/** The whitespace that starts the line holding `offset`. */
function lineIndent(text: string, offset: number): string {
  const start = text.lastIndexOf("\n", offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(start))![0];
}
