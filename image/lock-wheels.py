"""Turn pip's installation report into image/wheels.lock (run by scripts/lock-image.sh in the new root).

    python3 lock-wheels.py REPORT PIP_WHEEL PIP_URL PIP_SHA256 SUITE > wheels.lock

One line per wheel: name, version, sha256, file name, URL, and the distributions of the list that need
it (its own name among them when it is one; "-" for pip, a build tool that is not installed). The
last column lets a build from an incomplete wheelhouse install every package whose wheels are all there.
"""

import json
import platform
import sys
from collections import deque

report_file, pip_wheel, pip_url, pip_sha, suite = sys.argv[1:6]
sys.path.insert(0, pip_wheel)  # packaging, as vendored by the pip that resolved
from pip._vendor.packaging.requirements import Requirement  # noqa: E402
from pip._vendor.packaging.utils import canonicalize_name  # noqa: E402

report = json.load(open(report_file))
items = {canonicalize_name(i["metadata"]["name"]): i for i in report["install"]}
requested = [n for n, i in items.items() if i.get("requested")]


def needs(name: str, extras: frozenset) -> list:
    """The (name, extras) pairs `name` depends on in this environment."""
    out = []
    for spec in items[name]["metadata"].get("requires_dist") or []:
        req = Requirement(spec)
        if req.marker and not any(req.marker.evaluate({"extra": e}) for e in (extras or {""})):
            continue
        dep = canonicalize_name(req.name)
        if dep in items:
            out.append((dep, frozenset(req.extras)))
    return out


needed_by: dict = {n: set() for n in items}
for top in requested:
    seen = set()
    queue = deque([(top, frozenset())])
    while queue:
        node = queue.popleft()
        if node in seen:
            continue
        seen.add(node)
        needed_by[node[0]].add(top)
        queue.extend(needs(*node))

py = platform.python_version()
libc = "-".join(platform.libc_ver())
print(f"# Wheels of the sandbox image, from scripts/lock-image.sh: pip's resolution of python-top40.json for")
print(f"# CPython {py} ({libc}, {platform.machine()}, Debian {suite}); wheels only, every file's sha256 checked at build time.")
print("# name version sha256 file url needed-by")
for name in sorted(items):
    info = items[name]["download_info"]
    url = info["url"]
    sha = info["archive_info"]["hashes"]["sha256"]
    print(name, items[name]["metadata"]["version"], sha, url.rsplit("/", 1)[1], url, ",".join(sorted(needed_by[name])))
pip_file = pip_url.rsplit("/", 1)[1]
print("pip", pip_file.split("-")[1], pip_sha, pip_file, pip_url, "-")
