/**
 * A package index on loopback, speaking the protocols a devpi or Artifactory mirror speaks: PEP 503
 * HTML pages and PEP 691 JSON (by Accept header), PEP 658 metadata files beside each wheel (so a
 * resolver reads dependencies without downloading wheels), PEP 700 sizes and upload times. It serves
 * real wheels from PyPI (scripts/test-wheels.sh) and wheels a test builds. It records which wheel files
 * were downloaded, and can serve altered bytes for a file (a tampered mirror).
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ZipReader } from "../../src/packages/zip-reader.ts";

export const TEST_WHEELS = process.env.MCP_TEST_WHEELS ?? "/var/cache/mcp-code-exec/test-wheels-cp313";

export interface IndexOptions {
  dirs: string[];
  /** ISO upload time per file name (default: 400 days ago). */
  uploadTime?: (file: string) => string | undefined;
  /** Files served with altered bytes (the listed SHA-256 stays the real one). */
  tamper?: Set<string>;
}

export interface PackageIndex {
  /** The simple index URL, ending in /simple/. */
  url: string;
  /** Wheel files downloaded (metadata files not counted), in order. */
  downloads: string[];
  /** Project pages asked for (normalized names). */
  pages: string[];
  close(): void;
}

interface Entry {
  file: string;
  path: string;
  sha256: string;
  size: number;
  metadata: Buffer;
  metaSha: string;
}

const norm = (n: string) => n.toLowerCase().replace(/[-_.]+/g, "-");

export async function startPackageIndex(opts: IndexOptions): Promise<PackageIndex> {
  const projects = new Map<string, Entry[]>();
  for (const dir of opts.dirs)
    for (const file of readdirSync(dir).filter((f) => f.endsWith(".whl"))) {
      const path = join(dir, file);
      const bytes = readFileSync(path);
      const zip = await ZipReader.open(path, { maxEntries: 100_000, maxTotalBytes: 2 ** 31 });
      const meta = zip.entries.find((e) => /^[^/]+\.dist-info\/METADATA$/.test(e.name));
      const metadata = meta ? await zip.read(meta) : Buffer.from("");
      await zip.close();
      const key = norm(file.split("-")[0]!);
      const entry = {
        file,
        path,
        sha256: createHash("sha256").update(bytes).digest("hex"),
        size: bytes.length,
        metadata,
        metaSha: createHash("sha256").update(metadata).digest("hex"),
      };
      projects.set(key, [...(projects.get(key) ?? []), entry]);
    }
  const old = new Date(Date.now() - 400 * 86_400_000).toISOString();
  const downloads: string[] = [];
  const pages: string[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const url = new URL(req.url);
      const files = /^\/files\/([^/]+)$/.exec(url.pathname);
      if (files) {
        const name = decodeURIComponent(files[1]!);
        const wheel = name.replace(/\.metadata$/, "");
        const entry = [...projects.values()].flat().find((e) => e.file === wheel);
        if (!entry) return new Response("not found", { status: 404 });
        if (name.endsWith(".metadata")) return new Response(entry.metadata);
        downloads.push(wheel);
        const bytes = readFileSync(entry.path);
        if (opts.tamper?.has(wheel)) bytes.writeUInt8(bytes.readUInt8(bytes.length >> 1) ^ 0xff, bytes.length >> 1);
        return new Response(bytes, { headers: { "content-type": "application/octet-stream" } });
      }
      const page = /^\/simple\/([^/]+)\/?$/.exec(url.pathname);
      if (page) {
        const key = norm(decodeURIComponent(page[1]!));
        pages.push(key);
        const list = projects.get(key);
        if (!list) return new Response("not found", { status: 404 });
        const href = (e: Entry) => `${url.origin}/files/${encodeURIComponent(e.file)}`;
        if ((req.headers.get("accept") ?? "").includes("application/vnd.pypi.simple.v1+json"))
          return Response.json(
            {
              meta: { "api-version": "1.1" },
              name: key,
              versions: [...new Set(list.map((e) => e.file.split("-")[1]))],
              files: list.map((e) => ({
                filename: e.file,
                url: href(e),
                hashes: { sha256: e.sha256 },
                size: e.size,
                "upload-time": opts.uploadTime?.(e.file) ?? old,
                "core-metadata": { sha256: e.metaSha },
              })),
            },
            { headers: { "content-type": "application/vnd.pypi.simple.v1+json" } },
          );
        const links = list
          .map(
            (e) =>
              `<a href="${href(e)}#sha256=${e.sha256}" data-core-metadata="sha256=${e.metaSha}" data-dist-info-metadata="sha256=${e.metaSha}">${e.file}</a><br/>`,
          )
          .join("\n");
        return new Response(`<!DOCTYPE html><html><body><h1>Links for ${key}</h1>\n${links}\n</body></html>`, {
          headers: { "content-type": "text/html" },
        });
      }
      if (url.pathname === "/simple/" || url.pathname === "/simple")
        return new Response([...projects.keys()].map((k) => `<a href="/simple/${k}/">${k}</a>`).join("\n"), {
          headers: { "content-type": "text/html" },
        });
      return new Response("not found", { status: 404 });
    },
  });
  return { url: `http://127.0.0.1:${server.port}/simple/`, downloads, pages, close: () => server.stop(true) };
}
