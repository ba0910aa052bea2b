# Packages inside the sandbox: runtime.packages() (what is importable) and runtime.install() (more,
# without a network: the host resolves, checks and unpacks the wheels into its package store, which
# every sandbox has mounted read-only at /opt/mcp-code-exec/packages; this side only puts the folders
# it is given on sys.path). Installed by interpreter.py as the module `_mcp_packages`, after `mcp`.
# The sandbox has no pip and never runs one: see src/packages/ on the host.
import os
import sys

import _mcp_host as _host

_runtime = sys.modules["mcp.runtime"]
_mcp = sys.modules["mcp"]
MANIFEST = "/usr/share/mcp-code-exec/packages.json"
MOUNT = "/opt/mcp-code-exec/packages"
_ADDED = []  # store folders this interpreter put on sys.path, in order
_STATE = {"always_done": False}


def _target():
    """This interpreter and platform, for the host's resolver."""
    libc, ver = "glibc", "2.17"
    try:
        name, _, ver = os.confstr("CS_GNU_LIBC_VERSION").partition(" ")
        libc = "glibc" if name == "glibc" else name
    except (ValueError, OSError, AttributeError):
        libc, ver = "musl", "1.2"
    return {"python": "%d.%d.%d" % sys.version_info[:3], "machine": os.uname().machine, "libc": libc, "libc_version": ver}


def _installed():
    """[{'name', 'version'}] of every distribution on sys.path (the resolver builds on them): quick, no import names."""
    import importlib.metadata as md

    out = {}
    for dist in md.distributions():
        name = dist.metadata["Name"] if dist.metadata else None
        if name and _key(name) not in out:
            out[_key(name)] = {"name": name, "version": dist.version}
    return list(out.values())


def _distributions():
    """[(name, version, imports)] of every importable distribution: the image's manifest when it has one
    (and it is this interpreter's), then what importlib.metadata finds on sys.path (installs included)."""
    import importlib.metadata as md
    import json

    seen = {}
    try:
        with open(MANIFEST) as f:
            manifest = json.load(f)
        if str(manifest.get("python", "")).split(".")[:2] == [str(x) for x in sys.version_info[:2]]:
            for d in manifest.get("distributions") or []:
                if isinstance(d, dict) and d.get("name"):
                    seen[_key(d["name"])] = (d["name"], str(d.get("version", "")), list(d.get("imports") or []), "image")
    except (OSError, ValueError, AttributeError):
        pass
    tops = None
    for dist in md.distributions():
        name = dist.metadata["Name"] if dist.metadata else None
        if not name or _key(name) in seen and seen[_key(name)][3] == "image" and not _is_added(dist):
            continue
        if tops is None:
            tops = {}
            try:
                for mod, dists in md.packages_distributions().items():
                    for dn in dists:
                        tops.setdefault(_key(dn), []).append(mod)
            except Exception:
                pass
        source = "installed" if _is_added(dist) else "image"
        seen[_key(name)] = (name, dist.version, sorted(set(tops.get(_key(name), []))), source)
    return sorted(seen.values(), key=lambda d: d[0].lower())


def _is_added(dist):
    path = str(getattr(dist, "_path", ""))
    return path.startswith(MOUNT + "/")


def _key(name):
    import re

    return re.sub(r"[-_.]+", "-", name).lower()


class PackageList(list):
    """runtime.packages(): dicts of name, version, imports, source; shows as one line per package."""

    def __repr__(self):
        if not self:
            return "[] (no distributions found)"
        return "\n".join(
            "%s %s%s%s" % (p["name"], p["version"], "  import " + ", ".join(p["imports"][:6]) if p["imports"] and p["imports"] != [p["name"]] else "", "  (installed this session)" if p["source"] == "installed" else "")
            for p in self
        )


def packages():
    """What is importable: [{'name', 'version', 'imports', 'source'}], source 'image' or 'installed'."""
    return PackageList({"name": n, "version": v, "imports": i, "source": s} for n, v, i, s in _distributions())


def _add_paths(paths):
    import importlib

    added = False
    for p in paths:
        if not isinstance(p, str) or not p.startswith(MOUNT + "/") or p in sys.path:
            continue
        # Before the image's site-packages, so an upgraded version wins; after the standard library.
        at = next((i for i, e in enumerate(sys.path) if e.endswith(("site-packages", "dist-packages"))), len(sys.path))
        sys.path.insert(at, p)
        _ADDED.append(p)
        added = True
    if added:
        importlib.invalidate_caches()


def install(*requirements, _config=False):
    """Install packages into this session: install("rich"), install("scikit-learn==1.7.2", "tabulate").

    Wheels only, resolved and checked on the host; importable at once, variables kept. From the
    wheelhouse it is immediate; a download from the package index first asks the user (unless they
    allowed installs). Raises PackageNotFoundError (with the nearest real name), McpPolicyError (not
    allowed) or InstallError."""
    if len(requirements) == 1 and isinstance(requirements[0], (list, tuple)):
        requirements = tuple(requirements[0])
    installed = _installed()
    params = {"requirements": list(requirements), "target": _target(), "installed": installed[:5000], "config": bool(_config)}
    answer = _host.rpc_sync("packages.install", params)
    _add_paths([p.get("path") for p in answer.get("installed") or []])
    return _Installed(answer)


class _Installed(dict):
    def __repr__(self):
        got = self.get("installed") or []
        lines = []
        if got:
            lines.append("installed: " + ", ".join("%s %s" % (p["name"], p["version"]) for p in got))
        if self.get("present"):
            lines.append("already importable: " + ", ".join(self["present"]))
        lines.extend(self.get("notes") or [])
        return "\n".join(lines) or "nothing to install"


def _on_run(frame):
    """Run hook: folders installed earlier in this session (a fresh interpreter gets them back), then the
    user's MCP_BRIDGE_PACKAGES once per session."""
    spec = frame.get("packages")
    if not isinstance(spec, dict):
        return
    _add_paths(spec.get("paths") or [])
    always = spec.get("always")
    if always and not _STATE["always_done"]:
        _STATE["always_done"] = True
        try:
            install(*always, _config=True)
        except Exception as exc:
            print("warning: MCP_BRIDGE_PACKAGES could not be installed: %s" % (getattr(exc, "message", None) or exc), file=sys.stderr)


_host.RUN_HOOKS.append(_on_run)
_runtime.packages = packages
_runtime.install = install
_runtime.InstallError = _mcp.InstallError
_runtime.PackageNotFoundError = _mcp.PackageNotFoundError
