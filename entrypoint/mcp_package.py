# The `mcp` package inside the sandbox: proxies for the tools of configured MCP servers and the
# discovery helpers (`from mcp import runtime`). Installed by runtime.py as the modules `mcp`,
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
import base64
import difflib
import functools
import importlib.abc
import importlib.util
import inspect
import json
import sys
import types
import typing

import _mcp_host as _host

__all__ = ["McpError", "McpToolError", "McpServerNotLoaded", "McpPolicyError", "McpImage", "McpAudio", "McpResource", "runtime"]


class McpError(Exception):
    """A request to an MCP server through the bridge failed."""

    def __init__(self, message, server=None, tool=None, kind=None):
        super().__init__(message)
        self.message = message
        self.server = server
        self.tool = tool
        self.kind = kind


class McpToolError(McpError):
    """The upstream tool returned an error result, failed, or timed out."""


class McpPolicyError(McpError, PermissionError):
    """The bridge's policy refused this request; the message names the rule."""


class McpServerNotLoaded(McpError, LookupError):
    """The server exists but was not loaded for this session: pass servers=[...] to run_python."""


def _error_factory(cls):
    def make(err):
        return cls(str(err.get("message")), server=err.get("server"), tool=err.get("tool"), kind=err.get("kind"))

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


def convert_result(server, tool, result):
    if not isinstance(result, dict):
        return result
    if result.get("isError"):
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
# Proxies

_SIG_GLOBALS = {"Any": typing.Any, "Literal": typing.Literal, "Optional": typing.Optional, "Union": typing.Union}


def _make_tool(server, spec):
    """A coroutine function with the tool's real signature and docstring; unset optionals are not sent."""
    py_name = spec["py_name"]
    arg_map = spec.get("arg_map") or {}
    wire_name = spec["name"]
    ns = dict(_SIG_GLOBALS)
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

    async def proxy(*args, **kwargs):
        try:
            unknown = [k for k in kwargs if k not in params] if var_kw is None else []
            if unknown:
                # Name the wrong keyword (and the likely right one) before any missing-argument complaint.
                fixes = ["%r (did you mean %r?)" % (k, m[0]) if m else repr(k) for k in unknown for m in [difflib.get_close_matches(k, params, 1)]]
                raise TypeError("unexpected keyword argument %s; parameters: %s" % (", ".join(fixes), ", ".join(params) or "none"))
            bound = sig.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError("%s.%s: %s (see help(mcp_servers[%r].%s))" % (server, py_name, exc, server, py_name)) from None
        wire = {}
        for k, v in bound.arguments.items():
            if k == var_kw:
                wire.update(v)
            else:
                wire[arg_map.get(k, k)] = v
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


_host.RUN_HOOKS.append(_install)


def _explain_missing(name):
    if name.startswith("mcp_") and name != "mcp_servers":
        alias = name[4:]
        server = next((n for n, a in _host.KNOWN_SERVERS.items() if a == alias), None)
        if server is not None:
            raise NameError("name %r is not defined: MCP server %r is not loaded in this session; call run_python with servers=[%r]" % (name, server, server))
        raise NameError("name %r is not defined: no MCP server has the alias %r (configured: %s)" % (name, alias, ", ".join("mcp_" + a for a in sorted(_host.KNOWN_SERVERS.values())) or "none"))


_host.MISSING_NAME_HOOKS.append(_explain_missing)


class _ServersFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """`from mcp.servers.<alias> import *` for loaded servers."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.startswith("mcp.servers."):
            return importlib.util.spec_from_loader(fullname, self)
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
        return "\n".join("%s.%s%s: %s" % (h["server"], h["tool"], "" if h["loaded"] else " (not loaded)", h["summary"]) for h in self)


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


@_helper
def capability_summary():
    """What this bridge offers, in a few lines."""
    return Text(_host.rpc_sync("capabilities", {}))


runtime.call_tool = call_tool
runtime.show = sys.modules["_mcp_display"].show if "_mcp_display" in sys.modules else None
runtime.McpToolError = McpToolError
runtime.McpError = McpError
sys.modules["mcp.runtime"] = runtime
