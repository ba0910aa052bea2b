# The `mcp` package inside the sandbox: proxies for the tools of configured MCP servers and the
# discovery helpers (`from mcp import runtime`). Installed by interpreter.py as the modules `mcp`,
# `mcp.runtime` and `mcp.servers.<alias>`; talks to the host through `_mcp_host` (rpc / rpc_sync).
#
# Result mapping (what a proxied call returns):
#   structuredContent            -> dict
#   one text block that is JSON  -> the parsed value (dict, list, number, ...)
#   one other text block         -> str
#   image / audio block          -> McpImage / McpAudio (.data bytes, .mime_type)
#   embedded resource            -> its text (parsed if JSON) or McpResource (.uri, .mime_type, .data)
#   several blocks               -> a list of the above
#   isError result               -> raises McpToolError(server, tool, message)
#
# Imported at every sandbox start, so heavy modules (ast, inspect, typing, difflib, textwrap) are
# imported where they are used: the first proxy made, a misspelt argument, a skill saved.
import base64
import importlib
import json
import linecache
import re
import sys
import types
from importlib.machinery import ModuleSpec

import _mcp_host as _host

__all__ = ["McpError", "McpToolError", "McpArgumentError", "McpServerNotLoaded", "McpPolicyError", "InstallError", "PackageNotFoundError", "McpImage", "McpAudio", "McpResource", "runtime"]


class McpError(Exception):
    """A request to an MCP server through the bridge failed."""

    # Who refused a call: "policy" (a setting), "annotation" (the server's hints) or "user".
    decided_by = None

    def __init__(self, message, server=None, tool=None, kind=None):
        super().__init__(message)
        self.message = message
        self.server = server
        self.tool = tool
        self.kind = kind


class McpToolError(McpError):
    """The upstream tool returned an error result, failed, or timed out."""


class McpArgumentError(McpToolError, ValueError):
    """An argument does not fit the tool's input schema (checked before sending, or refused upstream).

    .argument names the argument (a path like 'items[0].name' for nested values) when known."""

    def __init__(self, message, server=None, tool=None, kind="invalid_arguments", argument=None):
        super().__init__(message, server=server, tool=tool, kind=kind)
        self.argument = argument


class McpPolicyError(McpError, PermissionError):
    """The bridge's policy or the user refused this request; the message names the rule, .decided_by who."""


class McpServerNotLoaded(McpError, LookupError):
    """The server exists but was not loaded for this session: pass servers=[...] to run_python."""


class InstallError(McpError):
    """runtime.install() failed: a wheel failed its checks, or the resolver could not run."""


class PackageNotFoundError(InstallError, LookupError):
    """runtime.install(): no such package on the source; the message names the nearest real one."""


def _error_factory(cls):
    def make(err):
        e = cls(str(err.get("message")), server=err.get("server"), tool=err.get("tool"), kind=err.get("kind"))
        if err.get("decided_by"):
            e.decided_by = err.get("decided_by")
        return e

    return make


# Each error kind the host sends becomes the exception class PROTOCOL names (src/sandbox/protocol.ts).
for _kind, _cls in _host.PROTOCOL["error_kinds"].items():
    _host.ERROR_FACTORIES[_kind] = _error_factory(globals()[_cls])


class _Blob:
    __slots__ = ("data", "mime_type")

    def __init__(self, data, mime_type):
        self.data = data
        self.mime_type = mime_type

    def __repr__(self):
        return "<%s %s, %d bytes>" % (type(self).__name__, self.mime_type, len(self.data))

    def save(self, path):
        with open(path, "wb") as f:
            f.write(self.data)
        return path


class McpImage(_Blob):
    """An image returned by a tool: .data (bytes), .mime_type. Return it or runtime.show() it to pass it on."""

    def _repr_png_(self):
        return self.data if self.mime_type == "image/png" else None


class McpAudio(_Blob):
    """Audio returned by a tool: .data (bytes), .mime_type."""


class McpResource(_Blob):
    """A binary embedded resource: .uri, .data (bytes), .mime_type."""

    __slots__ = ("uri",)

    def __init__(self, uri, data, mime_type):
        super().__init__(data, mime_type)
        self.uri = uri


def _maybe_json(text):
    s = text.strip()
    if s[:1] in ("{", "[", '"') or s in ("true", "false", "null") or (s[:1].isdigit() or s[:1] == "-"):
        try:
            return json.loads(s)
        except (ValueError, RecursionError):  # not JSON, or nested too deep to be worth parsing
            pass
    return text


def _convert_block(block):
    t = block.get("type")
    if t == "text":
        return _maybe_json(block.get("text") or "")
    if t in ("image", "audio"):
        cls = McpImage if t == "image" else McpAudio
        return cls(base64.b64decode(block.get("data") or ""), block.get("mimeType"))
    if t == "resource":
        res = block.get("resource") or {}
        if "text" in res:
            return _maybe_json(res.get("text") or "")
        return McpResource(res.get("uri"), base64.b64decode(res.get("blob") or ""), res.get("mimeType"))
    return dict(block)


def _text_of(content):
    parts = [b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"]
    return "\n".join(parts) or "(no message)"


# How MCP servers word a refusal of their arguments (the SDKs' -32602 text, zod and pydantic).
_UPSTREAM_INVALID = re.compile(r"-32602|invalid arguments|invalid params|validation error|input validation", re.I)


def convert_result(server, tool, result):
    if not isinstance(result, dict):
        return result
    if result.get("isError"):
        text = _text_of(result.get("content"))
        if _UPSTREAM_INVALID.search(text):
            raise McpArgumentError("%s.%s refused its arguments: %s" % (server, tool, text), server=server, tool=tool)
        raise McpToolError("%s.%s returned an error: %s" % (server, tool, _text_of(result.get("content"))), server=server, tool=tool, kind="tool_error")
    structured = result.get("structuredContent")
    if isinstance(structured, dict):
        return structured
    blocks = [_convert_block(b) for b in result.get("content") or [] if isinstance(b, dict)]
    if not blocks:
        return None
    return blocks[0] if len(blocks) == 1 else blocks


async def call_tool(server, tool, args=None):
    """Call a tool of a loaded server without a proxy: await call_tool("github", "create_issue", {...})."""
    result = await _host.rpc("tools.call", {"server": server, "tool": tool, "args": {} if args is None else args})
    return convert_result(server, tool, result)



# ---------------------------------------------------------------------------------------------------
# Argument checks against the tool's input schema, before anything is sent: types, required,
# enums, ranges, lengths, patterns, nested objects and arrays, $ref/anyOf/oneOf/allOf. A subset of
# JSON Schema that covers what tool schemas use; anything it does not know passes.

_JSON_TYPES = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool) or (isinstance(v, float) and v.is_integer()),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "array": lambda v: isinstance(v, (list, tuple)),
    "object": lambda v: isinstance(v, dict),
}
_PY_NAMES = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None", "array": "list", "object": "dict"}


class _Invalid(Exception):
    def __init__(self, path, message):
        super().__init__(message)
        self.path = path
        self.message = message


def _short(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _resolve(schema, root, depth):
    seen = 0
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and seen < 16:
        ref = schema["$ref"]
        if not ref.startswith("#"):
            return {}
        target = root
        for part in [p for p in ref[1:].split("/") if p]:
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(target, dict) and part in target:
                target = target[part]
            elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
                target = target[int(part)]
            else:
                return {}
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        schema = dict(target, **rest) if isinstance(target, dict) else rest
        seen += 1
    return schema if isinstance(schema, dict) else {}


def _check(value, schema, root, path, depth=0):
    if depth > 24 or schema is True or schema is None:
        return
    if schema is False:
        raise _Invalid(path, "is not allowed")
    schema = _resolve(schema, root, depth)
    types = schema.get("type")
    if isinstance(types, str):
        types = [types]
    if schema.get("nullable") is True and isinstance(types, list):
        types = types + ["null"]
    if isinstance(types, list) and types:
        known = [t for t in types if t in _JSON_TYPES]
        if known and not any(_JSON_TYPES[t](value) for t in known):
            raise _Invalid(path, "must be %s, not %s %s" % (" or ".join(_PY_NAMES[t] for t in known), type(value).__name__, _short(value)))
    if "const" in schema and value != schema["const"]:
        raise _Invalid(path, "must be %s (got %s)" % (_short(schema["const"]), _short(value)))
    enum = schema.get("enum")
    if isinstance(enum, list) and enum and value not in enum:
        import difflib

        close = difflib.get_close_matches(value, [e for e in enum if isinstance(e, str)], 1) if isinstance(value, str) else []
        allowed = ", ".join(_short(e) for e in enum[:20]) + (", ..." if len(enum) > 20 else "")
        raise _Invalid(path, "must be one of %s (got %s%s)" % (allowed, _short(value), "; did you mean %r?" % close[0] if close else ""))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        for key, ok, word in (("minimum", lambda v, b: v >= b, ">="), ("maximum", lambda v, b: v <= b, "<="),
                              ("exclusiveMinimum", lambda v, b: v > b, ">"), ("exclusiveMaximum", lambda v, b: v < b, "<")):
            bound = schema.get(key)
            if isinstance(bound, (int, float)) and not isinstance(bound, bool) and not ok(value, bound):
                raise _Invalid(path, "must be %s %s (got %s)" % (word, bound, _short(value)))
    if isinstance(value, str):
        lo, hi = schema.get("minLength"), schema.get("maxLength")
        if isinstance(lo, int) and len(value) < lo:
            raise _Invalid(path, "must be at least %d characters (got %d)" % (lo, len(value)))
        if isinstance(hi, int) and len(value) > hi:
            raise _Invalid(path, "must be at most %d characters (got %d)" % (hi, len(value)))
        pattern = schema.get("pattern")
        if isinstance(pattern, str):
            try:
                if re.search(pattern, value) is None:
                    raise _Invalid(path, "must match the pattern %s (got %s)" % (pattern, _short(value)))
            except re.error:
                pass
    if isinstance(value, (list, tuple)):
        lo, hi = schema.get("minItems"), schema.get("maxItems")
        if isinstance(lo, int) and len(value) < lo:
            raise _Invalid(path, "must have at least %d items (got %d)" % (lo, len(value)))
        if isinstance(hi, int) and len(value) > hi:
            raise _Invalid(path, "must have at most %d items (got %d)" % (hi, len(value)))
        items = schema.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(value):
                _check(item, items, root, "%s[%d]" % (path, i), depth + 1)
    if isinstance(value, dict):
        _check_object(value, schema, root, path, depth)
    for part in schema.get("allOf") or []:
        _check(value, part, root, path, depth + 1)
    variants = (schema.get("anyOf") or []) + (schema.get("oneOf") or [])
    if variants:
        problems = []
        for variant in variants:
            try:
                _check(value, variant, root, path, depth + 1)
                break
            except _Invalid as exc:
                problems.append(exc.message)
        else:
            raise _Invalid(path, "matches none of the allowed forms: " + "; or ".join(problems[:4]))


def _check_object(value, schema, root, path, depth):
    props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    for name in schema.get("required") or []:
        if isinstance(name, str) and name not in value:
            raise _Invalid(_join(path, name), "is required")
    for key, item in value.items():
        sub = _join(path, key)
        if key in props:
            _check(item, props[key], root, sub, depth + 1)
        elif schema.get("additionalProperties") is False and path and not schema.get("patternProperties"):
            raise _Invalid(sub, "is not a known field; known: %s" % (", ".join(sorted(props)) or "none"))
        elif isinstance(schema.get("additionalProperties"), dict):
            _check(item, schema["additionalProperties"], root, sub, depth + 1)


def _join(path, key):
    key = key if isinstance(key, str) else str(key)
    return path + "." + key if path else key


def check_arguments(server, tool, schema, args):
    """Raise McpArgumentError naming the argument and what it allows, or return None."""
    if not isinstance(schema, dict):
        return
    try:
        _check_object(args, _resolve(schema, schema, 0), schema, "", 0)
    except _Invalid as exc:
        raise McpArgumentError("%s.%s: argument %r %s" % (server, tool, exc.path, exc.message), server=server, tool=tool, argument=exc.path) from None
    except RecursionError:
        return

# ---------------------------------------------------------------------------------------------------
# Proxies

def _make_tool(server, spec):
    """A coroutine function with the tool's real signature and docstring; unset optionals are not sent."""
    import inspect
    import typing

    py_name = spec["py_name"]
    arg_map = spec.get("arg_map") or {}
    input_schema = spec.get("input_schema")
    required = set(input_schema.get("required") or []) if isinstance(input_schema, dict) else set()
    wire_name = spec["name"]
    ns = {"Any": typing.Any, "Literal": typing.Literal, "Optional": typing.Optional, "Union": typing.Union}
    try:
        exec(compile(spec["signature"] + "\n    pass\n", "<mcp-signature>", "exec"), ns)
        template = ns[py_name]
        sig = inspect.signature(template)
        doc = template.__doc__
    except Exception:
        template = None
        sig = inspect.Signature([inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD)])
        doc = spec.get("signature")
    var_kw = next((p.name for p in sig.parameters.values() if p.kind is inspect.Parameter.VAR_KEYWORD), None)

    params = [p.name for p in sig.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    known = frozenset(params)
    # Keyword arguments only, all of them known, every required one given: they are what sig.bind would
    # give, without its cost on every call.
    needed = frozenset(p.name for p in sig.parameters.values() if p.default is inspect.Parameter.empty and p.kind is not inspect.Parameter.VAR_KEYWORD)
    keywords_only = var_kw is None and all(p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY) for p in sig.parameters.values())

    async def proxy(*args, **kwargs):
        if keywords_only and not args and known.issuperset(kwargs) and needed.issubset(kwargs):
            given = kwargs  # what sig.bind would give
        else:
            try:
                unknown = [k for k in kwargs if k not in known] if var_kw is None else []
                if unknown:
                    # Name the wrong keyword (and the likely right one) before any missing-argument complaint.
                    import difflib

                    fixes = ["%r (did you mean %r?)" % (k, m[0]) if m else repr(k) for k in unknown for m in [difflib.get_close_matches(k, params, 1)]]
                    raise TypeError("unexpected keyword argument %s; parameters: %s" % (", ".join(fixes), ", ".join(params) or "none"))
                given = sig.bind(*args, **kwargs).arguments
            except TypeError as exc:
                raise TypeError("%s.%s: %s (see help(mcp_servers[%r].%s))" % (server, py_name, exc, server, py_name)) from None
        wire = {}
        for k, v in given.items():
            if k == var_kw:
                wire.update(v)
            elif v is not None or arg_map.get(k, k) in required:
                # None for an optional argument means "not given", as the signature's `= None` says.
                wire[arg_map.get(k, k)] = v
        check_arguments(server, py_name, input_schema, wire)
        return await call_tool(server, wire_name, wire)

    proxy.__name__ = py_name
    proxy.__qualname__ = "mcp_%s.%s" % (_alias_of(server), py_name)
    proxy.__doc__ = doc
    proxy.__signature__ = sig
    proxy.__module__ = "mcp.servers.%s" % _alias_of(server)
    return proxy


_ALIASES = {}  # server name -> alias
_SERVERS = {}  # server name -> ServerProxy
_LOADED = set()


def _alias_of(server):
    return _ALIASES.get(server, server)


class ServerProxy:
    """Tools of one MCP server as coroutine functions: await mcp_<alias>.<tool>(**kwargs)."""

    def __init__(self, name, alias):
        self.__dict__["_name"] = name
        self.__dict__["_alias"] = alias
        self.__dict__["_tools"] = None

    def _load(self):
        if self._tools is None:
            specs = _host.rpc_sync("tools.proxy_specs", {"server": self._name})
            tools = {}
            for spec in specs:
                fn = _make_tool(self._name, spec)
                tools[spec["py_name"]] = fn
                tools.setdefault(spec["name"], fn)
            self.__dict__["_tools"] = tools
        return self._tools

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        tools = self._load()
        if attr in tools:
            return tools[attr]
        close = [n for n in tools if attr.lower().replace("-", "_") in n.lower() or n.lower() in attr.lower()][:5]
        hint = " Did you mean: %s?" % ", ".join(close) if close else ""
        raise AttributeError("MCP server %r has no tool %r.%s All tools: runtime.list_tools_sync(%r)" % (self._name, attr, hint, self._name))

    def __setattr__(self, attr, value):
        raise AttributeError("MCP server proxies are read-only")

    def __dir__(self):
        return sorted({fn.__name__ for fn in self._load().values()})

    def __repr__(self):
        n = "?" if self._tools is None else len(set(map(id, self._tools.values())))
        return "<MCP server %r: %s tools; dir(mcp_%s) lists them, help(mcp_%s.<tool>) shows one>" % (self._name, n, self._alias, self._alias)


class _ServerMap(dict):
    def __missing__(self, name):
        raise McpServerNotLoaded(_not_loaded_message(name), server=name, kind="not_loaded")


mcp_servers = _ServerMap()


def _not_loaded_message(name):
    known = _host.KNOWN_SERVERS
    if name in known:
        return "MCP server %r is not loaded in this session: call run_python with servers=[%r]" % (name, name)
    return "no MCP server named %r is configured (configured: %s)" % (name, ", ".join(sorted(known)) or "none")


def _install(frame):
    """Run hook: make the loaded servers' proxies visible for this run."""
    discovered = frame.get("discovered")
    if isinstance(discovered, list):
        _host.KNOWN_SERVERS.clear()
        for item in discovered:
            if isinstance(item, dict) and isinstance(item.get("name"), str) and isinstance(item.get("alias"), str):
                _host.KNOWN_SERVERS[item["name"]] = item["alias"]
                _ALIASES[item["name"]] = item["alias"]
    loaded = frame.get("servers")
    if not isinstance(loaded, list):
        return
    g = _host.user_globals_dict()
    for name in loaded:
        if not isinstance(name, str) or name not in _host.KNOWN_SERVERS:
            continue
        alias = _host.KNOWN_SERVERS[name]
        if name not in _SERVERS:
            _SERVERS[name] = ServerProxy(name, alias)
        _LOADED.add(name)
        mcp_servers[name] = _SERVERS[name]
        g["mcp_" + alias] = _SERVERS[name]
    g["mcp_servers"] = mcp_servers
    g.setdefault("McpToolError", McpToolError)
    g.setdefault("McpArgumentError", McpArgumentError)


_host.RUN_HOOKS.append(_install)


def _explain_missing(name):
    if name.startswith("mcp_") and name != "mcp_servers":
        alias = name[4:]
        server = next((n for n, a in _host.KNOWN_SERVERS.items() if a == alias), None)
        if server is not None:
            raise NameError("name %r is not defined: MCP server %r is not loaded in this session; call run_python with servers=[%r]" % (name, server, server))
        raise NameError("name %r is not defined: no MCP server has the alias %r (configured: %s)" % (name, alias, ", ".join("mcp_" + a for a in sorted(_host.KNOWN_SERVERS.values())) or "none"))


_host.MISSING_NAME_HOOKS.append(_explain_missing)


class _ServersFinder:
    """`from mcp.servers.<alias> import *` for loaded servers (a meta path finder and its loader)."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.startswith("mcp.servers."):
            return ModuleSpec(fullname, self)
        return None

    def create_module(self, spec):
        alias = spec.name.split(".", 2)[2]
        name = next((n for n, a in _host.KNOWN_SERVERS.items() if a == alias), None)
        if name is None:
            raise ImportError("no MCP server with alias %r is configured (aliases: %s)" % (alias, ", ".join(sorted(_host.KNOWN_SERVERS.values())) or "none"))
        if name not in _LOADED:
            raise ImportError(_not_loaded_message(name))
        mod = types.ModuleType(spec.name, "Tools of the MCP server %r" % name)
        tools = _SERVERS[name]._load()
        seen = {}
        for fn in tools.values():
            seen[fn.__name__] = fn
        mod.__dict__.update(seen)
        mod.__all__ = sorted(seen)
        return mod

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, _ServersFinder())
servers = types.ModuleType("mcp.servers", "Proxies of loaded MCP servers: from mcp.servers.<alias> import *")
servers.__path__ = []
sys.modules["mcp.servers"] = servers


# ---------------------------------------------------------------------------------------------------
# Discovery helpers: `from mcp import runtime`

runtime = types.ModuleType("mcp.runtime", "Discover and call the MCP servers configured for this bridge.")


def _helper(fn):
    setattr(runtime, fn.__name__, fn)
    return fn


@_helper
def discovered_servers():
    """Every configured server: name, alias, type, source file, loaded."""
    return _host.rpc_sync("servers.discovered", {})


@_helper
async def list_servers():
    """Names of every configured server."""
    return [s["name"] for s in await _host.rpc("servers.discovered", {})]


@_helper
def list_servers_sync():
    """Names of every configured server."""
    return [s["name"] for s in discovered_servers()]


@_helper
def list_loaded_server_metadata():
    """describe_server() for each server loaded in this session."""
    return _host.rpc_sync("servers.loaded", {})


@_helper
def describe_server(name):
    """Transport, command or URL (no secrets), the config file that defined it, status, tool count."""
    return _host.rpc_sync("servers.describe", {"name": name})


@_helper
def list_tools_sync(server):
    """[{'name', 'summary'}] for one server (starts it once if its tools are not cached)."""
    return _host.rpc_sync("tools.list", {"server": server})


@_helper
async def query_tool_docs(server, tool=None, detail="summary"):
    """Docs for one tool or all tools of a server. detail: 'summary', 'signature' (Python) or 'full' (JSON Schema)."""
    return _docs(await _host.rpc("tools.docs", {"server": server, "tool": tool, "detail": detail}), detail)


@_helper
def query_tool_docs_sync(server, tool=None, detail="summary"):
    """Docs for one tool or all tools of a server. detail: 'summary', 'signature' (Python) or 'full' (JSON Schema)."""
    return _docs(_host.rpc_sync("tools.docs", {"server": server, "tool": tool, "detail": detail}), detail)


class Text(str):
    """A string that shows as itself when it is a run's last expression."""

    def __repr__(self):
        return str(self)


def _docs(value, detail):
    if isinstance(value, list) and detail != "full":
        return Text(("\n\n" if detail == "signature" else "\n").join(value))
    return Text(value) if isinstance(value, str) else value


class SearchHits(list):
    def __repr__(self):
        if not self:
            return "[] (no matching tools)"
        lines = ["%s.%s%s: %s" % (h["server"], h["tool"], "" if h["loaded"] else " (not loaded)", h["summary"]) for h in self]
        # A miss usually still names the right server: say how to see all of its tools.
        servers = []
        for h in self:
            if h["server"] not in servers and not h.get("skill"):
                servers.append(h["server"])
        if servers:
            lines.append("(not there? runtime.list_tools_sync(server) lists all of a server's tools: %s)" % ", ".join(servers[:3]))
        return "\n".join(lines)


def _hits(answer):
    hits = SearchHits(answer.get("hits") or [])
    for err in answer.get("errors") or []:
        print("warning: could not list tools of %s: %s" % (err.get("server"), err.get("error")), file=sys.stderr)
    return hits


@_helper
async def search_tool_docs(query, limit=5):
    """Rank the tools of every configured server against a description of what you want."""
    return _hits(await _host.rpc("tools.search", {"query": query, "limit": limit}))


@_helper
def search_tool_docs_sync(query, limit=5):
    """Rank the tools of every configured server against a description of what you want."""
    return _hits(_host.rpc_sync("tools.search", {"query": query, "limit": limit}))


# ---------------------------------------------------------------------------------------------------
# Skills: functions saved for later sessions (runtime.save_skill), imported with `from skills import
# name`. A skill's source is fetched and run only when code imports it; nothing runs at start.

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")


def _defines(source, name):
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise ValueError("the skill's source does not parse: %s" % exc) from None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return True
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return True
    return False


@_helper
def save_skill(func_or_source, name=None, description=None):
    """Keep a function for later sessions: save_skill(my_func) or save_skill(source, name, description).

    The source and description go to a file the user can read, edit or remove (mcp-code-exec skills).
    Later: from skills import <name>. Nothing runs until it is imported."""
    if callable(func_or_source):
        import inspect
        import textwrap

        try:
            source = textwrap.dedent(inspect.getsource(func_or_source))
        except (OSError, TypeError):
            raise ValueError("the source of %r cannot be read: pass it as a string, save_skill(source, name, description)" % (func_or_source,)) from None
        name = name or getattr(func_or_source, "__name__", None)
        if description is None:
            description = inspect.getdoc(func_or_source) or ""
    elif isinstance(func_or_source, str):
        source = func_or_source
    else:
        raise TypeError("save_skill takes a function or its source as a string")
    if not isinstance(name, str) or not _IDENT.match(name):
        raise ValueError("a skill name is a Python identifier (letters, digits, _; at most 64): got %r" % (name,))
    if not _defines(source, name):
        raise ValueError("the source does not define %r at top level: a skill is imported by that name" % name)
    answer = _host.rpc_sync("skills.save", {"name": name, "description": description or "", "source": source})
    sys.modules.pop("skills." + name, None)
    skills_package.__dict__.pop(name, None)
    return Text("saved skill %r to %s; later: from skills import %s" % (name, answer.get("file"), name))


@_helper
def list_skills():
    """Saved skills: [{'name', 'description'}]."""
    return _host.rpc_sync("skills.list", {})


class _SkillsFinder:
    """`import skills.<name>`: the skill's source, fetched from the host when first imported (a meta path
    finder and its loader)."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.startswith("skills.") and fullname.count(".") == 1:
            return ModuleSpec(fullname, self)
        return None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        name = module.__name__.split(".", 1)[1]
        try:
            skill = _host.rpc_sync("skills.get", {"name": name})
        except Exception as exc:
            raise ImportError(str(getattr(exc, "message", exc)), name=module.__name__) from None
        filename = "<skill %s>" % name
        source = skill.get("source") or ""
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        module.__doc__ = skill.get("description") or None
        exec(compile(source, filename, "exec"), module.__dict__)


def _skills_getattr(name):
    if name.startswith("__"):
        raise AttributeError(name)
    module = importlib.import_module("skills." + name)
    value = getattr(module, name, module)
    # Importing skills.<name> set the package attribute to the module: `from skills import name`
    # must give the function.
    setattr(skills_package, name, value)
    return value


sys.meta_path.insert(0, _SkillsFinder())
skills_package = types.ModuleType("skills", "Saved skills: from skills import <name> (runtime.list_skills() lists them)")
skills_package.__path__ = []
skills_package.__getattr__ = _skills_getattr
sys.modules["skills"] = skills_package


@_helper
def capability_summary():
    """What this bridge offers, in a few lines."""
    return Text(_host.rpc_sync("capabilities", {}))


runtime.call_tool = call_tool
runtime.show = sys.modules["_mcp_display"].show if "_mcp_display" in sys.modules else None
runtime.McpToolError = McpToolError
runtime.McpError = McpError
runtime.McpArgumentError = McpArgumentError
sys.modules["mcp.runtime"] = runtime
