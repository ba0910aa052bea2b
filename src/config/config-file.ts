/** Reading one client config file into an object, whatever its format; problems carry a position. */
import { readJsonObject } from "./server-json.ts";

export type FileFormat = "json";

export type ReadResult =
  | { status: "missing" }
  | { status: "error"; message: string }
  | { status: "ok"; data: Record<string, unknown> };

/** Read a file holding one object at the top level. Missing = ENOENT/ENOTDIR. */
export function readConfigObject(file: string, _format: FileFormat): ReadResult {
  return readJsonObject(file);
}
