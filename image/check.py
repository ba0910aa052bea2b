"""The build-time proof that the new root works (run by scripts/build-image.sh inside it, no network).

    python3 -I -B check.py LIST MANIFEST EXPECTED

Imports the import name of every distribution of LIST (python-top40.json) the MANIFEST says is
installed, and exercises the standard library the sandbox runtime needs and the data stack's native
parts (BLAS, image codecs, fonts). Prints "importable N/M"; fails when an installed package does not
import, a feature is broken, or fewer than EXPECTED import. test/e2e/image-features.test.ts checks
the same again through the bridge, in a real sandbox.
"""

import asyncio
import ctypes
import ctypes.util
import importlib
import io
import json
import re
import sqlite3
import ssl
import sys
import zoneinfo

listed, manifest_file, expected = sys.argv[1], sys.argv[2], int(sys.argv[3])
manifest = json.load(open(manifest_file))
canon = lambda name: re.sub(r"[-_.]+", "-", name).lower()  # noqa: E731 - PEP 503
have = {canon(d["name"]) for d in manifest["distributions"]}
packages = json.load(open(listed))["packages"]

broken, imported, absent = [], [], []
for p in packages:
    if canon(p["distribution"]) not in have:
        absent.append(p["distribution"])
        continue
    try:
        importlib.import_module(p["import"])
        imported.append(p["import"])
    except Exception as e:  # noqa: BLE001 - any failure to import is what this reports
        broken.append(f"{p['distribution']} (import {p['import']}): {type(e).__name__}: {e}")

# Submodules code reaches for right after the top-level import (a pruned file or a missing shared
# library shows up here rather than in a user's session).
DEEPER = {
    "sklearn": ["sklearn.ensemble", "sklearn.model_selection", "sklearn.metrics", "sklearn.cluster"],
    "scipy": ["scipy.stats", "scipy.signal", "scipy.interpolate", "scipy.sparse.linalg", "scipy.spatial"],
    "statsmodels": ["statsmodels.api", "statsmodels.formula.api", "statsmodels.tsa.api"],
    "plotly": ["plotly.express", "plotly.graph_objects", "plotly.io"],
    "pyarrow": ["pyarrow.parquet", "pyarrow.dataset", "pyarrow.compute", "pyarrow.csv", "pyarrow.feather", "pyarrow.fs"],
    "skimage": ["skimage.io", "skimage.filters", "skimage.transform", "skimage.measure"],
    "nltk": ["nltk.tokenize", "nltk.stem"],
    "xarray": ["xarray.core.dataset"],
    "seaborn": ["seaborn.objects"],
    "sympy": ["sympy.plotting"],
    "networkx": ["networkx.algorithms"],
    "imageio": ["imageio.v3"],
    "cryptography": ["cryptography.fernet", "cryptography.hazmat.primitives.asymmetric.rsa"],
    "reportlab": ["reportlab.pdfgen.canvas", "reportlab.platypus"],
}
for top, subs in DEEPER.items():
    if top in imported:
        for sub in subs:
            try:
                importlib.import_module(sub)
            except Exception as e:  # noqa: BLE001
                broken.append(f"{sub}: {type(e).__name__}: {e}")

# The standard library the runtime relies on.
assert ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").abs(-3) == 3
assert asyncio.run(asyncio.sleep(0, "ok")) == "ok"
assert sqlite3.connect(":memory:").execute("select 1").fetchone() == (1,)
assert zoneinfo.ZoneInfo("Europe/Paris") and ssl.create_default_context().cert_store_stats()["x509_ca"] > 100

if "numpy" in imported:
    import numpy as np

    a = np.arange(12.0).reshape(3, 4)
    assert float((a @ a.T).trace()) == 506.0 and abs(np.linalg.det(np.eye(3) * 2) - 8) < 1e-9
if "pandas" in imported:
    import pandas as pd

    df = pd.read_csv(io.StringIO("x,y\n1,2\n3,4\n"))
    assert int(df.y.sum()) == 6 and "x,y" in df.to_csv(index=False)
if "matplotlib" in imported:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([1, 2, 3])
    ax.set_title("font check")
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    assert buf.getvalue()[:8] == b"\x89PNG\r\n\x1a\n"
if "PIL" in imported:
    from PIL import Image, ImageFont

    for fmt in ("PNG", "JPEG", "WEBP", "TIFF", "GIF"):
        out = io.BytesIO()
        Image.new("RGB", (8, 8), (200, 10, 10)).save(out, fmt)
        assert Image.open(io.BytesIO(out.getvalue())).size == (8, 8)
    ImageFont.truetype("DejaVuSans.ttf", 12)  # found by name in /usr/share/fonts
if "scipy" in imported:
    import scipy.optimize

    assert abs(scipy.optimize.brentq(lambda x: x * x - 2, 0, 2) - 2**0.5) < 1e-9
if "sklearn" in imported:
    from sklearn.linear_model import LinearRegression

    assert abs(LinearRegression().fit([[0], [1], [2]], [1, 3, 5]).coef_[0] - 2) < 1e-9
if "pyarrow" in imported:
    import pyarrow as pa
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.write_table(pa.table({"x": [1, 2]}), buf)
    assert pq.read_table(io.BytesIO(buf.getvalue())).column("x").to_pylist() == [1, 2]
if "cv2" in imported:
    import cv2
    import numpy as np

    ok, png = cv2.imencode(".png", np.zeros((4, 4, 3), np.uint8))
    assert ok and bytes(png[:4]) == b"\x89PNG"

total = len(packages)
left_out = f"; not in this image: {', '.join(absent)}" if absent and imported else ""
print(f"importable {len(imported)}/{total}{left_out}")
for b in broken:
    print(f"broken: {b}", file=sys.stderr)
if broken or len(imported) < expected:
    sys.exit(1)
