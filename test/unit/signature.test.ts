import { afterAll, describe, expect, test } from "bun:test";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { Tiktoken } from "js-tiktoken/lite";
import cl100k from "js-tiktoken/ranks/cl100k_base";
import o200k from "js-tiktoken/ranks/o200k_base";
import {
  argNameMap,
  pythonIdentifier,
  renderSignature,
  renderSummary,
  renderToolDoc,
  type Detail,
  type ToolDef,
} from "../../src/docs/signature.ts";

// ---------------------------------------------------------------------------
// Python checker: compiles rendered signatures with python3 and reports the
// parsed function (name, keyword-only args, defaults, docstring, ...).
// `pyCheck` runs one python3 process for a whole batch (used for the catalog);
// `py` talks to one long-lived python3 process shared by the unit tests.

interface PyFn {
  ok: boolean;
  error?: string;
  name?: string;
  positional?: number;
  vararg?: string | null;
  kwonly?: string[];
  required?: string[];
  kwarg?: string | null;
  kwargAnnotation?: string | null;
  annotations?: Record<string, string>;
  defaults?: Record<string, { v?: unknown; expr?: string }>;
  doc?: string | null;
  returns?: string | null;
}

const PY_CHECK_FN = String.raw`
import ast, json, sys

def check(sources):
    out = []
    for src in sources:
        try:
            compile(src, "<signature>", "exec")  # full compile: catches duplicate args etc.
            mod = ast.parse(src)
            assert len(mod.body) == 1, "expected exactly one statement"
            fn = mod.body[0]
            assert isinstance(fn, ast.AsyncFunctionDef), "expected async def"
            a = fn.args
            defaults = {}
            for arg, d in zip(a.kwonlyargs, a.kw_defaults):
                if d is None:
                    continue
                try:
                    v = ast.literal_eval(d)
                    json.dumps(v)
                    defaults[arg.arg] = {"v": v}
                except Exception:
                    defaults[arg.arg] = {"expr": ast.unparse(d)}
            out.append({
                "ok": True,
                "name": fn.name,
                "positional": len(a.posonlyargs) + len(a.args),
                "vararg": a.vararg.arg if a.vararg else None,
                "kwonly": [x.arg for x in a.kwonlyargs],
                "required": [x.arg for x, d in zip(a.kwonlyargs, a.kw_defaults) if d is None],
                "kwarg": a.kwarg.arg if a.kwarg else None,
                "kwargAnnotation": ast.unparse(a.kwarg.annotation) if a.kwarg and a.kwarg.annotation else None,
                "annotations": {x.arg: ast.unparse(x.annotation) for x in a.kwonlyargs if x.annotation},
                "defaults": defaults,
                "doc": ast.get_docstring(fn, clean=False),
                "returns": ast.unparse(fn.returns) if fn.returns else None,
            })
        except BaseException as e:
            out.append({"ok": False, "error": repr(e)})
    return out
`;

const PY_BATCH = PY_CHECK_FN + "\njson.dump(check(json.load(sys.stdin)), sys.stdout)\n";
const PY_SERVER =
  PY_CHECK_FN + '\nfor line in sys.stdin:\n    sys.stdout.write(json.dumps(check(json.loads(line))) + "\\n")\n    sys.stdout.flush()\n';

/** A rendered signature plus a body, as the brief asks: `    ...`. */
function withBody(sig: string): string {
  return `${sig}\n    ...\n`;
}

function pyCheck(sigs: string[]): PyFn[] {
  const r = spawnSync("python3", ["-c", PY_BATCH], {
    input: JSON.stringify(sigs.map(withBody)),
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`python3 failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as PyFn[];
}

/** One python3 process answering one JSON line (a batch of sources) per request. */
class PyServer {
  private proc = spawn("python3", ["-c", PY_SERVER], { stdio: ["pipe", "pipe", "pipe"] });
  private buf = "";
  private stderr = "";
  private pending: { resolve: (r: PyFn[]) => void; reject: (e: Error) => void }[] = [];

  constructor() {
    this.proc.stdout.setEncoding("utf8");
    this.proc.stdout.on("data", (chunk: string) => {
      this.buf += chunk;
      for (let i = this.buf.indexOf("\n"); i >= 0; i = this.buf.indexOf("\n")) {
        const line = this.buf.slice(0, i);
        this.buf = this.buf.slice(i + 1);
        this.pending.shift()?.resolve(JSON.parse(line) as PyFn[]);
      }
    });
    this.proc.stderr.on("data", (chunk) => (this.stderr += String(chunk)));
    this.proc.on("exit", (code) => {
      for (const p of this.pending.splice(0)) p.reject(new Error(`python3 exited (${code}): ${this.stderr}`));
    });
  }

  check(sigs: string[]): Promise<PyFn[]> {
    return new Promise((resolve, reject) => {
      this.pending.push({ resolve, reject });
      this.proc.stdin.write(JSON.stringify(sigs.map(withBody)) + "\n");
    });
  }

  close(): void {
    this.proc.stdin.end();
  }
}

let server: PyServer | undefined;
afterAll(() => server?.close());

async function py(sig: string): Promise<PyFn> {
  server ??= new PyServer();
  const [res] = await server.check([sig]);
  if (!res?.ok) throw new Error(`not valid Python (${res?.error}):\n${sig}`);
  return res;
}

/** Render + compile a one-parameter tool and return its single annotation. */
async function typeOf(prop: unknown, extra: Record<string, unknown> = {}): Promise<string> {
  const sig = renderSignature({
    name: "t",
    inputSchema: { type: "object", properties: { x: prop }, required: ["x"], ...extra },
  });
  const fn = await py(sig);
  return fn.annotations?.x ?? "<none>";
}

function argsLines(sig: string): string[] {
  const i = sig.split("\n").findIndex((l) => /^(?:""")?Args(?: \(.*\))?:$/.test(l.trim()));
  if (i < 0) return [];
  return sig
    .split("\n")
    .slice(i + 1)
    .filter((l) => l.startsWith("        "))
    .map((l) => l.trim().replace(/"""$/, "")); // the last line ends the docstring
}

function argLine(sig: string, name: string): string | undefined {
  return argsLines(sig).find((l) => l.startsWith(`${name}: `));
}

// ---------------------------------------------------------------------------

const CREATE_ISSUE: ToolDef = {
  name: "create_issue",
  description: "Create a new issue in a GitHub repository.\n\nThe issue is created as the authenticated user.",
  inputSchema: {
    type: "object",
    properties: {
      owner: { type: "string", description: "Repository owner" },
      repo: { type: "string", description: "Repository name" },
      title: { type: "string" },
      body: { type: "string", description: "Issue body (markdown)" },
      labels: { type: "array", items: { type: "string" } },
      state: { type: "string", enum: ["open", "closed"], default: "open", description: "Issue state" },
      per_page: { type: "integer", minimum: 1, maximum: 100, description: "Results per page" },
    },
    required: ["owner", "repo", "title"],
    additionalProperties: false,
  },
};

test("the Python checker itself rejects invalid signatures", async () => {
  await expect(py("async def f(*, a: int, a: str) -> Any:")).rejects.toThrow("duplicate argument");
  await expect(py('async def f() -> Any:\n    """x""""')).rejects.toThrow("not valid Python");
  await expect(py("async def f(*, **kw: Any) -> Any:")).rejects.toThrow("not valid Python");
  expect(pyCheck(["def f(:"])[0]?.ok).toBe(false);
});

describe("pythonIdentifier", () => {
  test("keeps valid names", async () => {
    expect(pythonIdentifier("create_issue")).toBe("create_issue");
    expect(pythonIdentifier("API_get_user")).toBe("API_get_user");
    expect(pythonIdentifier("match")).toBe("match"); // soft keyword: valid identifier
    expect(pythonIdentifier("type")).toBe("type");
  });
  test("non-alnum -> _", async () => {
    expect(pythonIdentifier("get-sum")).toBe("get_sum");
    expect(pythonIdentifier("API-get-user")).toBe("API_get_user");
    expect(pythonIdentifier("user-name")).toBe("user_name");
    expect(pythonIdentifier("$filter")).toBe("_filter");
    expect(pythonIdentifier("a.b c")).toBe("a_b_c");
    expect(pythonIdentifier("naïve")).toBe("na_ve");
  });
  test("leading digit -> _ prefix", async () => {
    expect(pythonIdentifier("2fa")).toBe("_2fa");
    expect(pythonIdentifier("123")).toBe("_123");
  });
  test("keywords -> trailing _", async () => {
    expect(pythonIdentifier("from")).toBe("from_");
    expect(pythonIdentifier("class")).toBe("class_");
    expect(pythonIdentifier("None")).toBe("None_");
    expect(pythonIdentifier("async")).toBe("async_");
    expect(pythonIdentifier("__debug__")).toBe("__debug___");
  });
  test("empty -> _", async () => {
    expect(pythonIdentifier("")).toBe("_");
  });
});

describe("renderSummary", () => {
  test("name: first sentence", async () => {
    expect(renderSummary(CREATE_ISSUE)).toBe("create_issue: Create a new issue in a GitHub repository.");
  });
  test("collapses whitespace and stops at the first paragraph", async () => {
    const s = renderSummary({ name: "x", description: "  Reads   a\n file\tfrom disk\n\nSecond paragraph." });
    expect(s).toBe("x: Reads a file from disk");
  });
  test("does not split on e.g. / i.e. / decimals", async () => {
    const s = renderSummary({
      name: "x",
      description: "Search files, e.g. by glob, i.e. a pattern like *.ts or v1.2 tags. Then more.",
    });
    expect(s).toBe("x: Search files, e.g. by glob, i.e. a pattern like *.ts or v1.2 tags.");
  });
  test("caps at 160 chars with an ellipsis", async () => {
    const s = renderSummary({ name: "long_tool", description: "word ".repeat(100) });
    expect(s.length).toBeLessThanOrEqual(160);
    expect(s.endsWith("…")).toBe(true);
    expect(s.startsWith("long_tool: word word")).toBe(true);
  });
  test("never splits a surrogate pair", async () => {
    const s = renderSummary({ name: "e", description: "😀".repeat(200) });
    expect(s.length).toBeLessThanOrEqual(160);
    expect(/[\ud800-\udbff](?![\udc00-\udfff])/.test(s)).toBe(false);
  });
  test("uses the python name (or alias) and falls back to title / bare name", async () => {
    expect(renderSummary({ name: "get-sum", description: "Adds." })).toBe("get_sum: Adds.");
    expect(renderSummary({ name: "get-sum", description: "Adds." }, { alias: "add" })).toBe("add: Adds.");
    expect(renderSummary({ name: "t", title: "Pretty Title" })).toBe("t: Pretty Title");
    expect(renderSummary({ name: "t" })).toBe("t");
  });
});

describe("renderSignature", () => {
  test("the brief's example", async () => {
    const sig = renderSignature(CREATE_ISSUE);
    expect(sig).toBe(
      [
        'async def create_issue(*, owner: str, repo: str, title: str, body: str = None, labels: list[str] = None, state: Literal["open", "closed"] = "open", per_page: int = None):',
        '    """Create a new issue in a GitHub repository.',
        "",
        "    Args:",
        "        owner: Repository owner",
        "        repo: Repository name",
        "        body: Issue body (markdown)",
        // "Issue state" says no more than create_issue(state=...); the default is in the signature.
        '        per_page: Results per page (1-100)"""',
      ].join("\n"),
    );
    const fn = await py(sig);
    expect(fn.name).toBe("create_issue");
    expect(fn.positional).toBe(0);
    expect(fn.kwonly).toEqual(["owner", "repo", "title", "body", "labels", "state", "per_page"]);
    expect(fn.required).toEqual(["owner", "repo", "title"]);
    expect(fn.defaults?.state).toEqual({ v: "open" });
    expect(fn.annotations?.state).toBe("Literal['open', 'closed']");
    expect(fn.defaults?.body).toEqual({ v: null });
  });

  test("alias overrides the function name", async () => {
    expect(renderSignature(CREATE_ISSUE, { alias: "new_issue" })).toStartWith("async def new_issue(*, owner");
    expect((await py(renderSignature(CREATE_ISSUE, { alias: "bad-alias" }))).name).toBe("bad_alias");
  });

  test("tool names are made callable", async () => {
    expect((await py(renderSignature({ name: "API-get-user" }))).name).toBe("API_get_user");
    expect((await py(renderSignature({ name: "import" }))).name).toBe("import_");
    expect((await py(renderSignature({ name: "3d-render" }))).name).toBe("_3d_render");
  });

  test("required first in schema order, then optional in schema order", async () => {
    const sig = renderSignature({
      name: "t",
      inputSchema: {
        type: "object",
        properties: { a: { type: "string" }, b: { type: "string" }, c: { type: "string" }, d: { type: "string" } },
        required: ["d", "b"],
      },
    });
    const fn = await py(sig);
    expect(fn.kwonly).toEqual(["b", "d", "a", "c"]);
    expect(fn.required).toEqual(["b", "d"]);
  });

  test("required names missing from properties become Any params", async () => {
    const fn = await py(renderSignature({ name: "t", inputSchema: { type: "object", required: ["ghost"] } }));
    expect(fn.kwonly).toEqual(["ghost"]);
    expect(fn.annotations?.ghost).toBe("Any");
  });

  test("no params", async () => {
    expect(renderSignature({ name: "ping" })).toBe("async def ping():");
    expect(renderSignature({ name: "ping", inputSchema: { type: "object", properties: {} } })).toBe("async def ping():");
    expect(renderSignature({ name: "ping", description: "Ping.", inputSchema: { type: "object" } })).toBe(
      'async def ping():\n    """Ping."""',
    );
    await py(renderSignature({ name: "ping" }));
  });

  test("top-level additionalProperties adds **kwargs", async () => {
    const open = renderSignature({
      name: "t",
      inputSchema: { type: "object", properties: { a: { type: "string" } }, additionalProperties: true },
    });
    expect(open).toBe("async def t(*, a: str = None, **kwargs: Any):");
    await py(open);
    const typed = await py(
      renderSignature({
        name: "t",
        inputSchema: { type: "object", properties: { a: { type: "string" } }, additionalProperties: { type: "integer" } },
      }),
    );
    expect(typed.kwarg).toBe("kwargs");
    expect(typed.kwargAnnotation).toBe("int");
    // No named params: no bare `*` (that would be a SyntaxError).
    const only = renderSignature({ name: "t", inputSchema: { type: "object", additionalProperties: true } });
    expect(only).toBe("async def t(**kwargs: Any):");
    await py(only);
    // additionalProperties: false / absent -> no **kwargs
    expect((await py(renderSignature(CREATE_ISSUE))).kwarg).toBeNull();
    expect((await py(renderSignature({ name: "t", inputSchema: { type: "object", properties: { a: {} } } }))).kwarg).toBeNull();
  });

  test("an unconstrained schema (no type, no properties) accepts **kwargs", async () => {
    const sig = renderSignature({ name: "t", inputSchema: { $schema: "http://json-schema.org/draft-07/schema#" } });
    expect(sig).toBe("async def t(**kwargs: Any):");
  });

  test("**kwargs name does not collide with a param named kwargs", async () => {
    const fn = await py(
      renderSignature({
        name: "t",
        inputSchema: { type: "object", properties: { kwargs: { type: "string" } }, additionalProperties: true },
      }),
    );
    expect(fn.kwonly).toEqual(["kwargs"]);
    expect(fn.kwarg).toBe("kwargs_");
  });

  test("return type follows outputSchema", async () => {
    const base: ToolDef = { name: "t", description: "Weather." };
    // No outputSchema: no return annotation (`-> Any` would say nothing).
    expect(renderSignature(base)).toBe('async def t():\n    """Weather."""');
    expect((await py(renderSignature(base))).returns).toBeNull();
    const withOut = renderSignature({
      ...base,
      outputSchema: {
        type: "object",
        properties: { temperature: { type: "number" }, note: { type: "string" } },
        required: ["temperature"],
      },
    });
    const fn = await py(withOut);
    expect(fn.returns).toBe("dict");
    expect(withOut).toContain("Returns: {temperature: float, note?: str}");
    expect((await py(renderSignature({ ...base, outputSchema: { type: "object" } }))).returns).toBeNull();
  });
});

describe("types", () => {
  test("primitives", async () => {
    expect(await typeOf({ type: "string" })).toBe("str");
    expect(await typeOf({ type: "integer" })).toBe("int");
    expect(await typeOf({ type: "number" })).toBe("float");
    expect(await typeOf({ type: "boolean" })).toBe("bool");
    expect(await typeOf({ type: "null" })).toBe("None");
  });
  test("missing / unknown -> Any", async () => {
    expect(await typeOf({})).toBe("Any");
    expect(await typeOf({ description: "anything" })).toBe("Any");
    expect(await typeOf({ type: "wat" })).toBe("Any");
    expect(await typeOf(true)).toBe("Any");
  });
  test("arrays", async () => {
    expect(await typeOf({ type: "array", items: { type: "string" } })).toBe("list[str]");
    expect(await typeOf({ type: "array", items: { type: "array", items: { type: "integer" } } })).toBe("list[list[int]]");
    expect(await typeOf({ type: "array" })).toBe("list");
    expect(await typeOf({ type: "array", items: {} })).toBe("list");
    expect(await typeOf({ type: "array", items: [{ type: "string" }, { type: "integer" }] })).toBe("list");
    expect(await typeOf({ items: { type: "string" } })).toBe("list[str]");
  });
  test("objects", async () => {
    expect(await typeOf({ type: "object", properties: { a: { type: "string" } } })).toBe("dict");
    expect(await typeOf({ type: "object" })).toBe("dict");
    expect(await typeOf({ type: "object", additionalProperties: { type: "string" } })).toBe("dict[str, str]");
    expect(await typeOf({ type: "object", additionalProperties: { type: "array", items: { type: "number" } } })).toBe(
      "dict[str, list[float]]",
    );
    // a typed dict-of-objects stays short
    expect(await typeOf({ type: "object", additionalProperties: { type: "object", properties: { a: { type: "string" } } } })).toBe(
      "dict[str, dict]",
    );
    expect(await typeOf({ type: "object", additionalProperties: true })).toBe("dict");
    expect(await typeOf({ type: "object", patternProperties: { "^x-": { type: "string" } } })).toBe("dict[str, str]");
    expect(await typeOf({ properties: { a: {} } })).toBe("dict");
  });
  test("nested object properties are listed briefly in the Args line", async () => {
    const sig = renderSignature({
      name: "t",
      inputSchema: {
        type: "object",
        properties: {
          loc: {
            type: "object",
            description: "Where",
            properties: { path: { type: "string" }, line: { type: "integer" } },
            required: ["path"],
          },
          files: {
            type: "array",
            items: {
              type: "object",
              properties: { path: { type: "string" }, meta: { type: "object", properties: { sha: { type: "string" } } } },
              required: ["path"],
            },
          },
        },
      },
    });
    await py(sig);
    expect(argLine(sig, "loc")).toBe("loc: Where {path: str, line?: int}");
    expect(argLine(sig, "files")).toBe("files: [{path: str, meta?: {sha?: str}}]");
  });
  test("enum / const -> Literal", async () => {
    expect(await typeOf({ type: "string", enum: ["a", "b"] })).toBe("Literal['a', 'b']"); // ast.unparse uses single quotes
    expect(await typeOf({ enum: [1, 2, 3] })).toBe("Literal[1, 2, 3]");
    expect(await typeOf({ enum: [true, "x"] })).toBe("Literal[True, 'x']");
    expect(await typeOf({ enum: ["a", null] })).toBe("Literal['a'] | None");
    expect(await typeOf({ const: "fixed" })).toBe("Literal['fixed']");
    expect(await typeOf({ type: "string", enum: ['say "hi"', "back\\slash"] })).toBe(`Literal['say "hi"', 'back\\\\slash']`);
    expect(renderSignature({ name: "t", inputSchema: { properties: { x: { enum: ["a", "b"] } }, required: ["x"] } })).toBe(
      'async def t(*, x: Literal["a", "b"]):',
    );
  });
  test("long enums fall back to the base type and are listed in Args", async () => {
    const values = Array.from({ length: 12 }, (_, i) => `v${i}`);
    const sig = renderSignature({
      name: "t",
      inputSchema: { type: "object", properties: { x: { type: "string", enum: values, description: "Pick one" } } },
    });
    expect((await py(sig)).annotations?.x).toBe("str");
    expect(argLine(sig, "x")).toBe(`x: Pick one (one of: ${values.map((v) => `"${v}"`).join(", ")})`);
    expect(await typeOf({ enum: Array.from({ length: 9 }, (_, i) => i) })).toBe("int");
    // very many values: every one is listed (a model cannot guess the ones left out)
    const many = Array.from({ length: 200 }, (_, i) => `value_${i}`);
    const big = renderSignature({ name: "t", inputSchema: { properties: { x: { enum: many } }, required: ["x"] } });
    expect(argLine(big, "x")).toBe(`x: (one of: ${many.map((v) => `"${v}"`).join(", ")})`);
    // enums inside arrays too
    const arr = renderSignature({
      name: "t",
      inputSchema: { properties: { x: { type: "array", items: { enum: values } } }, required: ["x"] },
    });
    expect((await py(arr)).annotations?.x).toBe("list[str]");
    expect(argLine(arr, "x")).toContain('one of: "v0", "v1"');
  });
  test("type arrays and anyOf/oneOf -> unions (deduped, None last)", async () => {
    expect(await typeOf({ type: ["string", "null"] })).toBe("str | None");
    expect(await typeOf({ type: ["null", "integer", "string"] })).toBe("int | str | None");
    expect(await typeOf({ anyOf: [{ type: "string" }, { type: "number" }] })).toBe("str | float");
    expect(await typeOf({ oneOf: [{ type: "string" }, { type: "string", format: "uri" }, { type: "null" }] })).toBe("str | None");
    expect(await typeOf({ anyOf: [{ const: "a" }, { const: "b" }, { type: "integer" }] })).toBe("Literal['a', 'b'] | int");
    expect(await typeOf({ anyOf: [{ type: "string" }, {}] })).toBe("Any");
    expect(await typeOf({ type: "string", nullable: true })).toBe("str | None");
    // variants that only add constraints inherit the parent's type
    expect(await typeOf({ type: "string", anyOf: [{ minLength: 1 }, { format: "uri" }] })).toBe("str");
  });
  test("$ref into $defs / definitions is resolved", async () => {
    const defs = {
      $defs: { Color: { type: "string", enum: ["red", "green"] } },
      definitions: { Point: { type: "object", properties: { x: { type: "number" }, y: { type: "number" } } } },
    };
    expect(await typeOf({ $ref: "#/$defs/Color" }, defs)).toBe("Literal['red', 'green']");
    expect(await typeOf({ type: "array", items: { $ref: "#/definitions/Point" } }, defs)).toBe("list[dict]");
    expect(await typeOf({ $ref: "#/$defs/Missing" }, defs)).toBe("Any");
    expect(await typeOf({ $ref: "https://example.com/schema.json" }, defs)).toBe("Any");
    const sig = renderSignature({
      name: "t",
      inputSchema: {
        type: "object",
        properties: { p: { $ref: "#/definitions/Point", description: "A point" } },
        required: ["p"],
        ...defs,
      },
    });
    expect(argLine(sig, "p")).toBe("p: Point {x?: float, y?: float}");
  });
  test("$ref cycles become Any instead of recursing forever", async () => {
    const defs = {
      $defs: {
        Node: {
          type: "object",
          properties: { children: { type: "array", items: { $ref: "#/$defs/Node" } }, value: { type: "string" } },
        },
        Loop: { $ref: "#/$defs/Loop2" },
        Loop2: { $ref: "#/$defs/Loop" },
        Tree: { anyOf: [{ type: "string" }, { type: "array", items: { $ref: "#/$defs/Tree" } }] },
      },
    };
    expect(await typeOf({ $ref: "#/$defs/Node" }, defs)).toBe("dict");
    expect(await typeOf({ $ref: "#/$defs/Loop" }, defs)).toBe("Any");
    expect(await typeOf({ $ref: "#/$defs/Tree" }, defs)).toBe("str | list");
    expect(await typeOf({ $ref: "#" }, defs)).toBe("dict");
    const sig = renderSignature({
      name: "t",
      inputSchema: { type: "object", properties: { n: { $ref: "#/$defs/Node" } }, required: ["n"], ...defs },
    });
    expect(argLine(sig, "n")).toBe("n: {children?: list, value?: str}"); // the recursive ref stops at `list`
  });
  test("exponential $ref / anyOf fan-out stays fast and valid", async () => {
    const $defs: Record<string, unknown> = { D30: { type: "string" } };
    for (let i = 0; i < 30; i++) {
      const next = { $ref: `#/$defs/D${i + 1}` };
      $defs[`D${i}`] = {
        anyOf: [next, { type: "array", items: next }, { type: "object", properties: { a: next, b: next, c: next } }],
      };
    }
    const started = performance.now();
    const sig = renderSignature({
      name: "t",
      inputSchema: { type: "object", properties: { x: { $ref: "#/$defs/D0" } }, required: ["x"], $defs },
    });
    expect(performance.now() - started).toBeLessThan(1000);
    await py(sig);
  });
  test("exponential allOf fan-out stays fast and valid", async () => {
    const $defs: Record<string, unknown> = { A30: { type: "object", properties: { z: { type: "string" } } } };
    for (let i = 0; i < 30; i++) {
      const next = { $ref: `#/$defs/A${i + 1}` };
      $defs[`A${i}`] = { allOf: [next, next, next, { properties: { [`p${i}`]: next } }] };
    }
    const started = performance.now();
    const sig = renderSignature({ name: "t", inputSchema: { $ref: "#/$defs/A0", $defs } });
    expect(performance.now() - started).toBeLessThan(1000);
    await py(sig);
  });
  test("allOf is merged shallowly", async () => {
    expect(await typeOf({ allOf: [{ type: "string" }, { minLength: 1 }] })).toBe("str");
    const sig = renderSignature({
      name: "t",
      inputSchema: {
        allOf: [
          { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
          { properties: { b: { type: "integer", description: "Bee" } } },
          { $ref: "#/$defs/C" },
        ],
        $defs: { C: { properties: { c: { type: "boolean" } }, required: ["c"] } },
      },
    });
    expect(sig.split("\n")[0]).toBe("async def t(*, a: str, c: bool, b: int = None):");
  });
  test("root-level oneOf variants contribute optional params", async () => {
    const fn = await py(
      renderSignature({
        name: "t",
        inputSchema: {
          type: "object",
          properties: { q: { type: "string" } },
          oneOf: [
            { properties: { id: { type: "string" } }, required: ["id"] },
            { properties: { slug: { type: "string" } }, required: ["slug"] },
          ],
        },
      }),
    );
    expect(fn.kwonly).toEqual(["q", "id", "slug"]);
    expect(fn.required).toEqual([]);
  });
});

describe("defaults", () => {
  const tool = (prop: unknown): ToolDef => ({ name: "t", inputSchema: { type: "object", properties: { x: prop } } });
  test("rendered as Python literals", async () => {
    const cases: [unknown, string, unknown][] = [
      [{ type: "boolean", default: true }, "x: bool = True", true],
      [{ type: "boolean", default: false }, "x: bool = False", false],
      [{ type: "string", default: null }, "x: str = None", null],
      [{ type: "string", default: 'a "q"\n' }, 'x: str = "a \\"q\\"\\n"', 'a "q"\n'],
      [{ type: "integer", default: -1 }, "x: int = -1", -1],
      [{ type: "number", default: 0.5 }, "x: float = 0.5", 0.5],
      [{ type: "array", default: ["public"] }, 'x: list = ["public"]', ["public"]],
      [{ type: "object", default: { a: [1, null], b: false } }, 'x: dict = {"a": [1, None], "b": False}', { a: [1, null], b: false }],
    ];
    for (const [schema, decl, value] of cases) {
      const sig = renderSignature(tool(schema));
      expect(sig).toBe(`async def t(*, ${decl}):`);
      expect((await py(sig)).defaults?.x).toEqual({ v: value });
    }
  });
  test("optional without default -> T = None (None means not sent: no `| None`)", async () => {
    expect(renderSignature(tool({ type: "string" }))).toBe("async def t(*, x: str = None):");
    expect(renderSignature(tool({ type: ["string", "null"] }))).toBe("async def t(*, x: str = None):");
    expect(renderSignature(tool({ type: ["integer", "string", "null"] }))).toBe("async def t(*, x: int | str = None):");
    expect(renderSignature(tool({ enum: ["a", "b", null] }))).toBe('async def t(*, x: Literal["a", "b"] = None):');
    expect(renderSignature(tool({}))).toBe("async def t(*, x: Any = None):");
  });
  test("huge defaults are elided with ... and noted in Args", async () => {
    const big = { type: "string", default: "y".repeat(500) };
    const sig = renderSignature(tool(big));
    expect(sig.split("\n")[0]).toBe("async def t(*, x: str = ...):");
    expect(argLine(sig, "x")).toMatch(/^x: \(default "y+…\)$/);
    expect((await py(sig)).defaults?.x).toEqual({ expr: "..." });
  });
  test("a default alone does not earn an Args line", async () => {
    expect(renderSignature(tool({ type: "integer", default: 10 }))).toBe("async def t(*, x: int = 10):");
  });
});

describe("parameter names", () => {
  const TOOL: ToolDef = {
    name: "t",
    inputSchema: {
      type: "object",
      properties: {
        from: { type: "string", description: "Start date" },
        class: { type: "string" },
        "user-name": { type: "string" },
        $filter: { type: "string", description: "OData filter" },
        "2fa": { type: "boolean" },
        ok_name: { type: "string" },
      },
      required: ["from"],
    },
  };
  test("invalid identifiers are renamed in the signature and noted in Args", async () => {
    const sig = renderSignature(TOOL);
    const fn = await py(sig);
    expect(fn.kwonly).toEqual(["from_", "class_", "user_name", "_filter", "_2fa", "ok_name"]);
    expect(argLine(sig, "from_")).toBe('from_: (sent as "from") Start date');
    expect(argLine(sig, "class_")).toBe('class_: (sent as "class")');
    // A rename by "-" -> "_" alone is said once for the whole tool, in the Args header, not per argument.
    expect(argLine(sig, "user_name")).toBeUndefined();
    expect(sig).toContain('"""Args (sent with - for _):\n');
    expect(sig.match(/sent with - for _/g)).toHaveLength(1);
    expect(argLine(sig, "_filter")).toBe('_filter: (sent as "$filter") OData filter');
    expect(argLine(sig, "ok_name")).toBeUndefined();
  });
  test("argNameMap maps python names back to wire names", async () => {
    expect(argNameMap(TOOL)).toEqual({
      from_: "from",
      class_: "class",
      user_name: "user-name",
      _filter: "$filter",
      _2fa: "2fa",
    });
    expect(argNameMap(CREATE_ISSUE)).toEqual({});
    expect(argNameMap({ name: "t" })).toEqual({});
  });
  test("collisions are avoided; valid names keep theirs", async () => {
    const tool: ToolDef = {
      name: "t",
      inputSchema: {
        type: "object",
        properties: {
          "user-name": { type: "string" },
          user_name: { type: "integer" },
          "user.name": { type: "boolean" },
          from: { type: "string" },
          from_: { type: "string" },
        },
      },
    };
    const sig = renderSignature(tool);
    const fn = await py(sig);
    expect(new Set(fn.kwonly).size).toBe(5);
    const map = argNameMap(tool);
    expect(map).toEqual({ user_name_: "user-name", user_name__: "user.name", from__: "from" });
    expect(fn.annotations?.user_name).toBe("int");
    expect(fn.annotations?.user_name_).toBe("str");
  });
});

describe("Args section", () => {
  test("constraints: ranges, lengths, items, format, pattern", async () => {
    const sig = renderSignature({
      name: "t",
      inputSchema: {
        type: "object",
        properties: {
          a: { type: "integer", minimum: 1 },
          b: { type: "number", exclusiveMinimum: 0, maximum: 1 },
          c: { type: "number", minimum: 0, exclusiveMaximum: true, maximum: 10 },
          d: { type: "string", minLength: 1, maxLength: 64 },
          e: { type: "array", items: { type: "string" }, minItems: 1 },
          f: { type: "string", format: "date-time", description: "When" },
          g: { type: "string", pattern: "^[a-z]+$" },
          h: { type: "string", maxLength: 5 },
        },
      },
    });
    await py(sig);
    expect(argsLines(sig)).toEqual([
      "a: (>=1)",
      "b: (>0, <=1)",
      "c: (>=0, <10)",
      "d: (len 1-64)",
      "e: (>=1 items)",
      "f: When (date-time)",
      "g: (pattern ^[a-z]+$)",
      "h: (len<=5)",
    ]);
  });
  test("descriptions are collapsed to one line and capped with …", async () => {
    const long = "This parameter " + "is very long and ".repeat(30) + "ends here";
    const sig = renderSignature({
      name: "t",
      inputSchema: {
        properties: {
          a: { type: "string", description: "Line one\n  line   two.\n\nMore." },
          b: { type: "string", description: long },
        },
      },
    });
    await py(sig);
    expect(argLine(sig, "a")).toBe("a: Line one line two. More");
    const b = argLine(sig, "b")!;
    expect(b.endsWith("…")).toBe(true);
    expect(b.length).toBeLessThanOrEqual(3 + 200);
  });
  test("only the leading sentence(s) of long arg descriptions are kept", async () => {
    const sig = renderSignature({
      name: "t",
      inputSchema: {
        properties: {
          tenant: {
            type: "string",
            description:
              "The Microsoft Entra ID tenant ID or name. This can be either the GUID identifier or the display name of your Entra ID tenant.",
          },
        },
      },
    });
    expect(argLine(sig, "tenant")).toBe("tenant: Microsoft Entra ID tenant ID or name");
  });
  test("filler is dropped: leading The / (Optional), final period, sentinel bounds", async () => {
    const sig = renderSignature({
      name: "t",
      inputSchema: {
        properties: {
          a: { type: "string", description: "(Optional) the project's slug." },
          b: { type: "string", description: "Optional: Max length... of things" },
          n: { type: "integer", minimum: 1, maximum: 9007199254740991, description: "Count" },
          m: { type: "integer", maximum: 2147483647 },
        },
      },
    });
    expect(argsLines(sig)).toEqual(["a: Project's slug", "b: Max length... of things", "n: Count (>=1)"]);
  });
  test("params without description or constraints get no Args line; no Args -> one-line docstring", async () => {
    const sig = renderSignature({
      name: "t",
      description: "Does a thing.",
      inputSchema: { properties: { a: { type: "string" } } },
    });
    expect(sig).toBe('async def t(*, a: str = None):\n    """Does a thing."""');
  });
  test("Args without a description", async () => {
    const sig = renderSignature({ name: "t", inputSchema: { properties: { a: { type: "string", description: "A" } } } });
    expect(sig).toBe('async def t(*, a: str = None):\n    """Args:\n        a: A"""');
    await py(sig);
  });
});

describe("each thing said once (what the signature line says is not repeated in Args)", () => {
  test("optional: `T = None`; a required nullable argument keeps `| None`; required ones have no default", async () => {
    const sig = renderSignature({
      name: "t",
      inputSchema: {
        type: "object",
        properties: {
          must: { type: ["string", "null"], description: "Pass None to clear" },
          opt: { type: ["string", "null"] },
          cleared: { type: "integer", default: null },
        },
        required: ["must"],
      },
    });
    expect(sig.split("\n")[0]).toBe("async def t(*, must: str | None, opt: str = None, cleared: int = None):");
    const fn = await py(sig);
    expect(fn.required).toEqual(["must"]);
    expect(fn.annotations).toEqual({ must: "str | None", opt: "str", cleared: "int" });
    expect(fn.defaults).toEqual({ opt: { v: null }, cleared: { v: null } });
  });

  test("a default is shown in the signature, not again in Args", async () => {
    const sig = renderSignature({
      name: "t",
      inputSchema: {
        properties: {
          limit: { type: "integer", default: 10, minimum: 1, maximum: 50, description: "Max results" },
          mode: { type: "string", enum: ["fast", "full"], default: "fast", description: "Scan mode" },
        },
      },
    });
    expect(sig.split("\n")[0]).toBe('async def t(*, limit: int = 10, mode: Literal["fast", "full"] = "fast"):');
    expect(argsLines(sig)).toEqual(["limit: Max results (1-50)", "mode: Scan mode"]);
    expect((await py(sig)).defaults).toEqual({ limit: { v: 10 }, mode: { v: "fast" } });
  });

  test("a constraint the description states as a whole is not appended again; a longer number is not it", async () => {
    const sig = renderSignature({
      name: "t",
      inputSchema: {
        properties: {
          a: { type: "integer", minimum: 1, maximum: 20, description: "Number of results (1-20)" },
          b: { type: "integer", minimum: 1, maximum: 10, description: "Between 1-100 items per page" },
          c: { type: "string", format: "date-time", description: "Start as date-time" },
          d: { type: "string", maxLength: 64, description: "Label, up to 64 characters" },
        },
      },
    });
    expect(argsLines(sig)).toEqual([
      "a: Number of results (1-20)",
      "b: Between 1-100 items per page (1-10)",
      "c: Start as date-time",
      "d: Label, up to 64 characters (len<=64)",
    ]);
  });

  test("filler a signature already says is dropped by general rules", async () => {
    const sig = renderSignature({
      name: "t",
      inputSchema: {
        properties: {
          subscription: { type: "string", description: "Specifies the Azure subscription to use." },
          strategy: { type: "string", description: "Retry strategy to use" },
          search: { type: "string", description: "Optional search text filter" },
          context: { type: "string", description: "Kubeconfig context (optional - defaults to null)" },
          images: { type: "boolean", description: "Whether to include images" },
          private: { type: "boolean", description: "Whether the repository is private" },
          verbose: { type: "boolean", description: "If true, includes column details" },
          paths: { type: "array", items: { type: "string" }, description: "Array of file paths to read" },
          tags: { type: "string", description: "List of comma-separated tags" },
          how: { type: "string", description: "Whether to use" },
          limit: { type: "integer", description: "A limit on the number of objects" },
        },
      },
    });
    expect(argsLines(sig)).toEqual([
      "subscription: Azure subscription",
      "strategy: Retry strategy",
      "search: Search text filter",
      "context: Kubeconfig context",
      "images: Include images",
      "private: Whether the repository is private", // only "whether to" goes: "The repository is private" would read as a fact
      "verbose: Includes column details",
      "paths: File paths to read",
      "tags: List of comma-separated tags", // a str, not a list: "List of" is information here
      "how: Whether to use",
      "limit: Limit on the number of objects",
    ]);
  });

  test("a required argument keeps its 'optional' wording (the signature says otherwise; the text may explain when)", async () => {
    const sig = renderSignature({
      name: "t",
      inputSchema: { properties: { a: { type: "string", description: "Optional prefix for keys" } }, required: ["a"] },
    });
    expect(argsLines(sig)).toEqual(["a: Optional prefix for keys"]);
  });

  test("the rules never make room for another sentence: they only shorten what was chosen", async () => {
    const sig = renderSignature({
      name: "t",
      inputSchema: {
        properties: {
          slowly: {
            type: "boolean",
            description: "Whether to type one character at a time. Useful for triggering key handlers in the page.",
          },
        },
      },
    });
    expect(argsLines(sig)).toEqual(["slowly: Type one character at a time"]);
  });

  test("a description that only restates the argument's and the tool's names is dropped; one more word keeps it", async () => {
    const sig = renderSignature({
      name: "route_delete",
      inputSchema: {
        properties: {
          route_id: { type: "string", description: "ID of the route to delete" },
          zoneId: { type: "string", description: "ID of the zone" },
          name: { type: "string", description: "Name of the route to delete (hex)" },
          force: { type: "boolean", description: "Delete even if in use" },
          kind: {
            type: "string",
            enum: Array.from({ length: 10 }, (_, i) => `k${i}`),
            description: "Kind of route",
          },
        },
        required: ["route_id"],
      },
    });
    expect(sig.split("\n")[0]).toBe(
      "async def route_delete(*, route_id: str, zoneId: str = None, name: str = None, force: bool = None, kind: str = None):",
    );
    expect(argsLines(sig)).toEqual([
      "name: Name of the route to delete (hex)",
      "force: Delete even if in use",
      // The description goes, every allowed value stays.
      `kind: (one of: ${Array.from({ length: 10 }, (_, i) => `"k${i}"`).join(", ")})`,
    ]);
  });

  test("nested fields stay when the description goes", async () => {
    const sig = renderSignature({
      name: "push_files",
      inputSchema: {
        properties: {
          files: {
            type: "array",
            description: "Array of files to push",
            items: { type: "object", properties: { path: { type: "string" }, content: { type: "string" } }, required: ["path", "content"] },
          },
        },
        required: ["files"],
      },
    });
    expect(argsLines(sig)).toEqual(["files: [{path: str, content: str}]"]);
  });

  test("a '-' for '_' rename: in the Args header, or a sentence of its own when no argument has a line", async () => {
    const withArgs = renderSignature({
      name: "t",
      description: "Lists things.",
      inputSchema: { properties: { "resource-group": { type: "string", description: "Azure resource group" } } },
    });
    expect(withArgs).toBe(
      'async def t(*, resource_group: str = None):\n    """Lists things.\n\n    Args (sent with - for _):\n        resource_group: Azure resource group"""',
    );
    const bare = renderSignature({ name: "t", inputSchema: { properties: { "resource-group": { type: "string" } } } });
    expect(bare).toBe('async def t(*, resource_group: str = None):\n    """Argument names are sent with - for _."""');
    await py(withArgs);
    await py(bare);
  });

  test("the closing quotes end the last line, whatever that line ends with", async () => {
    for (const tail of ['"', '""', "\\", 'x"""', "…"]) {
      const sig = renderSignature({
        name: "t",
        inputSchema: { properties: { a: { type: "string", description: `Ends with ${tail}` } } },
      });
      expect(sig.split("\n").at(-1)).toEndWith('"""');
      expect((await py(sig)).doc).toEndWith(`a: Ends with ${tail}`);
    }
  });
});

describe("docstring", () => {
  test("first paragraph only, whitespace collapsed, capped near 400 chars", async () => {
    const sig = renderSignature({
      name: "t",
      description: "First   line\ncontinues.\n\nSecond paragraph is dropped.",
    });
    expect(sig).toBe('async def t():\n    """First line continues."""');
    const long = renderSignature({ name: "t", description: "Sentence number one is here. ".repeat(40) });
    const doc = (await py(long)).doc!;
    expect(doc.length).toBeLessThanOrEqual(400);
    expect(doc.endsWith("here.")).toBe(true);
  });
  test("quotes, backslashes and control characters cannot break out of the docstring", async () => {
    const nasty = 'Ends with a quote "x"""" and \\N{bad} \\x \\u12 escapes\u0000 and """ triple';
    const sig = renderSignature({
      name: "t",
      description: nasty,
      inputSchema: { properties: { a: { type: "string", description: 'say """hi""" \\' } } },
    });
    const fn = await py(sig);
    expect(fn.doc).toContain('Ends with a quote "x"""" and \\N{bad} \\x \\u12 escapes and """ triple');
    expect(fn.doc).toContain('a: Say """hi""" \\');
    const oneLiner = await py(renderSignature({ name: "t", description: 'He said "hi"' }));
    expect(oneLiner.doc).toBe('He said "hi"');
    const backslash = await py(renderSignature({ name: "t", description: "path\\" }));
    expect(backslash.doc).toBe("path\\");
    for (const tail of ['"', '""', '"""', '""""', '"""""', '\\"', '\\""', '"\\', '\\"""']) {
      const text = `Ends with ${tail}`;
      expect((await py(renderSignature({ name: "t", description: text }))).doc).toBe(text);
      const withArgs = renderSignature({
        name: "t",
        description: text,
        inputSchema: { properties: { a: { type: "string", description: `A ${tail}` } } },
      });
      expect((await py(withArgs)).doc).toContain(text);
    }
  });
  test("title is used when there is no description", async () => {
    expect(renderSignature({ name: "t", title: "Nice Tool" })).toBe('async def t():\n    """Nice Tool"""');
  });
});

describe("renderToolDoc", () => {
  test("dispatches on detail", async () => {
    expect(renderToolDoc(CREATE_ISSUE, "summary")).toBe(renderSummary(CREATE_ISSUE));
    expect(renderToolDoc(CREATE_ISSUE, "signature")).toBe(renderSignature(CREATE_ISSUE));
    expect(renderToolDoc(CREATE_ISSUE, "signature", { alias: "x" })).toBe(renderSignature(CREATE_ISSUE, { alias: "x" }));
  });
  test("full returns the definition", async () => {
    expect(renderToolDoc(CREATE_ISSUE, "full")).toEqual({
      name: "create_issue",
      description: CREATE_ISSUE.description,
      inputSchema: CREATE_ISSUE.inputSchema,
    });
    const out = { type: "object", properties: { ok: { type: "boolean" } } };
    const full = renderToolDoc({ name: "t", title: "T", outputSchema: out }, "full") as Record<string, unknown>;
    expect(full).toEqual({ name: "t", title: "T", description: "", inputSchema: { type: "object", properties: {} }, outputSchema: out });
    expect(Object.keys(full)).toEqual(["name", "title", "description", "inputSchema", "outputSchema"]);
  });
});

// ---------------------------------------------------------------------------
// Real catalog: every tool, every detail level.

const CATALOG_PATH = path.join(import.meta.dir, "..", "..", "bench", "search-data", "shared", "tool-catalog.json");

interface CatalogServer {
  server: string;
  tools: ToolDef[];
}

describe("tool catalog", () => {
  const catalog = JSON.parse(readFileSync(CATALOG_PATH, "utf8")) as CatalogServer[];
  const tools = catalog.flatMap((s) => s.tools.map((t) => ({ server: s.server, tool: t })));

  test("catalog is loaded", async () => {
    expect(tools.length).toBeGreaterThan(700);
  });

  test("every tool renders at every level", async () => {
    for (const { tool } of tools) {
      for (const detail of ["summary", "signature", "full"] as Detail[]) {
        const doc = renderToolDoc(tool, detail);
        if (detail === "full") {
          expect(typeof doc).toBe("object");
          expect((doc as { name: string }).name).toBe(tool.name);
        } else {
          expect(typeof doc).toBe("string");
          expect((doc as string).length).toBeGreaterThan(0);
        }
      }
      const summary = renderSummary(tool);
      expect(summary.length).toBeLessThanOrEqual(160);
      expect(summary).not.toContain("\n");
    }
  });

  test("every signature is valid Python whose params map back to the schema", async () => {
    const sigs = tools.map(({ tool }) => renderSignature(tool));

    // One module holding every def, each wrapped in its own class so names don't matter.
    const module = sigs.map((s, i) => `class _Tool${i}:\n` + withBody(s).replace(/^(?=.)/gm, "    ")).join("\n");
    const whole = spawnSync("python3", ["-c", "import ast,sys; ast.parse(sys.stdin.read())"], {
      input: module,
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
    });
    expect(whole.stderr).toBe("");
    expect(whole.status).toBe(0);

    // Per-def check (still one python3 process) for precise diagnostics.
    const results = pyCheck(sigs);
    const failures: string[] = [];
    results.forEach((r, i) => {
      const { server, tool } = tools[i]!;
      const where = `${server}/${tool.name}`;
      if (!r.ok) {
        failures.push(`${where}: ${r.error}\n${sigs[i]}`);
        return;
      }
      if (r.name !== pythonIdentifier(tool.name)) failures.push(`${where}: name ${r.name}`);
      if (r.positional !== 0 || r.vararg) failures.push(`${where}: positional params`);

      // Python names -> wire names must give back exactly the schema's properties.
      const map = argNameMap(tool);
      const wire = (r.kwonly ?? []).map((n) => map[n] ?? n);
      const schema = (tool.inputSchema ?? {}) as { properties?: Record<string, unknown>; required?: string[] };
      const expected = Object.keys(schema.properties ?? {});
      for (const req of schema.required ?? []) if (!expected.includes(req)) expected.push(req);
      if ([...wire].sort().join("\n") !== [...expected].sort().join("\n")) {
        failures.push(`${where}: params ${JSON.stringify(wire)} != ${JSON.stringify(expected)}`);
      }
      const required = new Set(schema.required ?? []);
      const req = (r.required ?? []).map((n) => map[n] ?? n);
      if (req.some((n) => !required.has(n)) || req.length !== required.size) {
        failures.push(`${where}: required ${JSON.stringify(req)}`);
      }
      // Required params come first.
      const firstOptional = (r.kwonly ?? []).findIndex((n) => !(r.required ?? []).includes(n));
      if (firstOptional >= 0 && (r.kwonly ?? []).slice(firstOptional).some((n) => (r.required ?? []).includes(n))) {
        failures.push(`${where}: required after optional`);
      }
      // Rendered defaults evaluate back to the schema default.
      for (const [py, d] of Object.entries(r.defaults ?? {})) {
        const prop = schema.properties?.[map[py] ?? py] as { default?: unknown } | undefined;
        if (d.expr !== undefined) {
          if (d.expr !== "...") failures.push(`${where}: default ${py} = ${d.expr}`);
        } else if (prop && "default" in prop) {
          if (JSON.stringify(d.v) !== JSON.stringify(prop.default)) failures.push(`${where}: default ${py}`);
        } else if (d.v !== null) {
          failures.push(`${where}: unexpected default ${py}`);
        }
      }
    });
    expect(failures).toEqual([]);
  });

  test("signatures are much shorter than the JSON schemas", async () => {
    const enc = new Tiktoken(o200k);
    const tokens = (text: string) => enc.encode(text).length;
    const total = { sig: 0, schema: 0, payload: 0, sigTok: 0, schemaTok: 0, payloadTok: 0, bareSig: 0 };
    const perServer: string[] = [];
    for (const server of catalog) {
      let sc = 0;
      let jc = 0;
      for (const tool of server.tools) {
        const sig = renderSignature(tool);
        const schema = JSON.stringify(tool.inputSchema ?? {});
        const payload = JSON.stringify({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema });
        sc += sig.length;
        jc += schema.length;
        total.payload += payload.length;
        total.sigTok += tokens(sig);
        total.schemaTok += tokens(schema);
        total.payloadTok += tokens(payload);
        // Apples to apples: the same rendering without the tool description (not part of inputSchema).
        total.bareSig += renderSignature({ ...tool, description: undefined, title: undefined }).length;
      }
      total.sig += sc;
      total.schema += jc;
      perServer.push(`${server.server}=${(sc / jc).toFixed(2)}`);
    }
    const ratio = total.sig / total.schema;
    const bareRatio = total.bareSig / total.schema;
    const payloadRatio = total.sig / total.payload;
    console.log(
      `signature chars ${total.sig} / JSON.stringify(inputSchema) chars ${total.schema} = ${ratio.toFixed(3)} ` +
        `(tokens ${(total.sigTok / total.schemaTok).toFixed(3)}); ` +
        `without the tool description ${bareRatio.toFixed(3)}; ` +
        `vs JSON {name, description, inputSchema} ${payloadRatio.toFixed(3)} (tokens ${(total.sigTok / total.payloadTok).toFixed(3)})`,
    );
    console.log(`per server (signature/inputSchema chars): ${perServer.join(" ")}`);
    // The signature also carries the tool description (not part of inputSchema), so
    // check the like-for-like ratios too.
    expect(ratio).toBeLessThan(0.9);
    expect(bareRatio).toBeLessThan(0.75);
    expect(payloadRatio).toBeLessThan(0.7);
  });

  test("every allowed value of every argument is in its signature (both catalogs)", async () => {
    const real = path.join(import.meta.dir, "..", "..", "bench", "search-data", "real-servers.catalog.json");
    const both = [
      ...tools,
      ...(JSON.parse(readFileSync(real, "utf8")) as CatalogServer[]).flatMap((s) => s.tools.map((t) => ({ server: s.server, tool: t }))),
    ];
    const missing: string[] = [];
    for (const { server, tool } of both) {
      const sig = renderSignature(tool);
      const props = ((tool.inputSchema ?? {}) as { properties?: Record<string, Record<string, unknown>> }).properties ?? {};
      for (const [name, prop] of Object.entries(props)) {
        // `items` counts for arrays only (digitalocean has `type: "string"` with an `items.enum`).
        const items = prop?.type === "array" || prop?.type === undefined ? [prop?.items] : [];
        const schemas = [prop, ...items, ...((prop?.anyOf as unknown[]) ?? []), ...((prop?.oneOf as unknown[]) ?? [])];
        for (const sch of schemas as { enum?: unknown[]; const?: unknown }[]) {
          const values = [...(Array.isArray(sch?.enum) ? sch.enum : []), ...(sch && "const" in sch ? [sch.const] : [])];
          for (const v of values) {
            if (typeof v !== "string" && typeof v !== "number" && typeof v !== "boolean") continue; // None is the default's
            const lit = typeof v === "string" ? JSON.stringify(v) : typeof v === "boolean" ? (v ? "True" : "False") : String(v);
            if (!sig.includes(lit)) missing.push(`${server}/${tool.name}.${name}: ${lit}`);
          }
        }
      }
    }
    expect(missing).toEqual([]);
  });
});

// The target of bench/signature-tokens.ts (issue 12): signature docs at most half the tokens of the
// JSON definitions they replace (what detail="full" returns), on both catalogs, with cl100k_base.
describe("signature tokens vs the JSON definition", () => {
  const enc = new Tiktoken(cl100k);
  const catalogs = {
    shared: CATALOG_PATH,
    real: path.join(import.meta.dir, "..", "..", "bench", "search-data", "real-servers.catalog.json"),
  };
  for (const [label, file] of Object.entries(catalogs)) {
    test(`${label} catalog: signature <= 0.5x JSON`, () => {
      const catalog = JSON.parse(readFileSync(file, "utf8")) as CatalogServer[];
      let sig = 0;
      let json = 0;
      for (const t of catalog.flatMap((s) => s.tools)) {
        sig += enc.encode(renderToolDoc(t, "signature") as string).length;
        json += enc.encode(JSON.stringify(renderToolDoc(t, "full"))).length;
      }
      console.log(`${label} catalog: signature ${sig} / JSON ${json} tokens = ${(sig / json).toFixed(3)}x`);
      expect(sig / json).toBeLessThanOrEqual(0.5);
    });
  }
});
