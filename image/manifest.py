"""Write what the image holds, as JSON on stdout (run by scripts/build-image.sh inside the new root).

    python3 -I manifest.py RECIPE VARIANT > /usr/share/mcp-code-exec/packages.json

{"python": "3.13.5", "platform": "manylinux_2_41_x86_64", "image": {"recipe", "variant"},
 "distributions": [{"name", "version", "imports": [...]}]}, distributions sorted by name. The import
names come from a distribution's top_level.txt, else from the files it installed (its RECORD): what a
`ModuleNotFoundError` names is looked up here, and what `runtime.packages()` lists. Standard library only.
"""

import importlib.metadata as md
import json
import platform
import sys


def imports(dist: md.Distribution) -> list:
    top = dist.read_text("top_level.txt")
    names = set(top.split()) if top else set()
    if not names:
        for f in dist.files or []:
            first = f.parts[0]
            if len(f.parts) == 1:
                if first.endswith(".py"):
                    names.add(first[:-3])
                elif first.endswith(".so"):
                    names.add(first.split(".", 1)[0])
            elif first.isidentifier() and first != "__pycache__":  # not foo.libs, foo.dist-info, ..
                names.add(first)
    dotted = (n.replace("/", ".") for n in names)  # top_level.txt names namespace packages as a/b
    return sorted(n for n in dotted if all(part.isidentifier() for part in n.split(".")))


def platform_tag() -> str:
    libc, version = platform.libc_ver()
    major, minor = (version.split(".") + ["0"])[:2]
    return f"manylinux_{major}_{minor}_{platform.machine()}" if libc == "glibc" else f"linux_{platform.machine()}"


recipe, variant = sys.argv[1:3]
seen = {}
for d in md.distributions():
    name = d.metadata["Name"]
    if name and name.lower() not in seen:  # the first on sys.path wins, as for imports
        seen[name.lower()] = {"name": name, "version": d.version, "imports": imports(d)}
json.dump(
    {
        "python": platform.python_version(),
        "platform": platform_tag(),
        "image": {"recipe": recipe, "variant": variant},
        "distributions": sorted(seen.values(), key=lambda x: x["name"].lower()),
    },
    sys.stdout,
    indent=1,
)
print()
