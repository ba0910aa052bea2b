/**
 * What the batteries image (image/, scripts/build-image.sh) promises, checked through the compiled
 * bridge in a real sandbox on every engine: every one of the 40 packages of image/python-top40.json
 * imports, the manifest of what is importable is where the runtime reads it, numpy on OpenBLAS,
 * pandas, matplotlib with its pre-built font cache, Pillow, scipy, the rest of the data stack at work,
 * and the standard library the runtime and users rely on. The build prunes tests, headers and parts of
 * wheels; these tests are what stops a future pruning from quietly removing something that is used.
 * Also: the image carries the current recipe's label (so a stale image cannot pass for a new one),
 * holds no compiler, headers or package manager, and stays within 1.05 GB (bench/packages.ts prints
 * the size against the goal).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { startBridge, type BridgeHandle } from "../support/bridge.ts";
import { bridgeEnv, ENGINES, IMAGE } from "../support/env.ts";
import { IMPORT_ALL, recipeDigest, TOP40 } from "../support/recipe.ts";
import { run } from "../support/run.ts";

const RECIPE = recipeDigest("batteries");
const LABEL = "io.github.mcp-code-exec.recipe";
const MAX_BYTES = 1.05e9;
const PNG_MAGIC = "iVBORw0KGgo"; // base64 of \x89PNG\r\n\x1a\n

describe.each(ENGINES)("the batteries image on %s", (engine) => {
  let bridge: BridgeHandle;
  let state: string;
  /** Run code that prints one JSON document; return it parsed, with stderr kept for checks. */
  const json = async (code: string) => {
    const r = await bridge.run(code);
    expect(r.structured.error).toBeUndefined();
    return { out: JSON.parse(String(r.structured.stdout)), stderr: String(r.structured.stderr ?? ""), raw: r.raw };
  };

  beforeAll(async () => {
    state = mkdtempSync(join(tmpdir(), "mcp-code-exec-image-features-"));
    bridge = await startBridge({ MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_STATE_DIR: state });
  });
  afterAll(async () => {
    await bridge?.close();
    rmSync(state, { recursive: true, force: true });
  });

  test("is the image the current recipe builds, at most 1.05 GB", async () => {
    const r = await run([engine, "image", "inspect", "--format", `{{.Size}}|{{ index .Config.Labels "${LABEL}" }}`, IMAGE], {
      env: bridgeEnv(),
    });
    expect(r.code).toBe(0);
    const [size, label] = r.stdout.trim().split("|");
    expect(label).toBe(RECIPE);
    expect(Number(size)).toBeLessThanOrEqual(MAX_BYTES);
  });

  test("all 40 packages of the list import in a fresh session", async () => {
    const { out } = await json(IMPORT_ALL);
    expect(out).toEqual([]);
  });

  test("the manifest at /usr/share/mcp-code-exec/packages.json names every distribution, its version and import names", async () => {
    const { out } = await json(`
import importlib.metadata as md, json, sys
m = json.load(open("/usr/share/mcp-code-exec/packages.json"))
installed = {d.metadata["Name"].lower(): d.version for d in md.distributions()}
print(json.dumps({
  "python": m["python"] == "%d.%d.%d" % sys.version_info[:3],
  "variant": m["image"]["variant"],
  "versions_match": all(installed.get(d["name"].lower()) == d["version"] for d in m["distributions"]),
  "count": len(m["distributions"]) == len(installed),
  "imports": {d["name"]: d["imports"] for d in m["distributions"] if d["name"] in ("scikit-learn", "PyYAML", "opencv-python-headless", "beautifulsoup4")},
}))
`);
    expect(out).toEqual({
      python: true,
      variant: "batteries",
      versions_match: true,
      count: true,
      imports: { "scikit-learn": ["sklearn"], PyYAML: ["_yaml", "yaml"], "opencv-python-headless": ["cv2"], beautifulsoup4: ["bs4"] },
    });
    const { out: listed } = await json(`
import json, re
m = json.load(open("/usr/share/mcp-code-exec/packages.json"))
canon = lambda n: re.sub(r"[-_.]+", "-", n).lower()
print(json.dumps(sorted(canon(d["name"]) for d in m["distributions"])))
`);
    for (const p of TOP40) expect(listed).toContain(p.distribution.toLowerCase());
  });

  test("the data stack at work: scikit-learn, statsmodels, seaborn, plotly offline HTML, pyarrow, openpyxl, OpenCV, sympy, networkx, bs4", async () => {
    const { out } = await json(`
import io, json, numpy as np, pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.datasets import load_iris
X, y = load_iris(return_X_y=True)
acc = LogisticRegression(max_iter=500).fit(X, y).score(X, y)
import statsmodels.formula.api as smf
df = pd.DataFrame({"x": np.arange(20.0), "y": 3 * np.arange(20.0) + 1})
slope = smf.ols("y ~ x", df).fit().params["x"]
import seaborn as sns
ax = sns.histplot(x=[1, 2, 2, 3])
import plotly.express as px
html = px.scatter(df, x="x", y="y").to_html(include_plotlyjs=True)
import pyarrow as pa, pyarrow.parquet as pq
df.to_parquet("/tmp/d.parquet")
df.to_excel("/tmp/d.xlsx", index=False)
import cv2
gray = cv2.cvtColor(np.zeros((8, 8, 3), np.uint8), cv2.COLOR_BGR2GRAY)
import sympy
x = sympy.symbols("x")
import networkx as nx
from bs4 import BeautifulSoup
print(json.dumps({
  "acc": acc > 0.9,
  "slope": round(float(slope), 6),
  "seaborn": len(ax.patches) > 0,
  "plotly_offline": len(html) > 1_000_000,
  "parquet": pd.read_parquet("/tmp/d.parquet").equals(df),
  "xlsx": pd.read_excel("/tmp/d.xlsx").shape == (20, 2),
  "cv2": list(gray.shape),
  "sympy": str(sympy.integrate(x**2, x)),
  "networkx": nx.shortest_path_length(nx.path_graph(5), 0, 4),
  "bs4": BeautifulSoup("<p>hi</p>", "lxml").p.text,
}))
`);
    expect(out).toEqual({
      acc: true,
      slope: 3,
      seaborn: true,
      plotly_offline: true,
      parquet: true,
      xlsx: true,
      cv2: [8, 8],
      sympy: "x**3/3",
      networkx: 4,
      bs4: "hi",
    });
  });

  test("numpy: arrays, linear algebra on OpenBLAS, random numbers, FFT", async () => {
    const { out } = await json(`
import json, numpy as np
a = np.array([[3.0, 1.0], [1.0, 2.0]])
x = np.linalg.solve(a, [9.0, 8.0])
m = np.random.default_rng(0).standard_normal((300, 300))
inv_ok = bool(np.allclose(m @ np.linalg.inv(m), np.eye(300)))
openblas = any("openblas" in line for line in open("/proc/self/maps"))
fft = np.fft.rfft([0.0, 1.0, 0.0, -1.0])
print(json.dumps({"solve": x.round(6).tolist(), "inv_ok": inv_ok, "openblas": openblas, "fft_imag": (fft.imag.round(6) + 0.0).tolist(), "dtype": str(np.arange(3).dtype)}))
`);
    expect(out).toEqual({ solve: [2, 3], inv_ok: true, openblas: true, fft_imag: [0, -2, 0], dtype: "int64" });
  });

  test("pandas: DataFrame, groupby, CSV round trip in /tmp, time zones, read_html and read_xml", async () => {
    const { out } = await json(`
import io, json, pandas as pd
df = pd.DataFrame({"city": ["a", "b", "a"], "n": [1, 2, 3]})
df.to_csv("/tmp/t.csv", index=False)
back = pd.read_csv("/tmp/t.csv")
sums = back.groupby("city")["n"].sum().to_dict()
ts = pd.Timestamp("2024-06-01 12:00", tz="UTC").tz_convert("Europe/Paris").isoformat()
html = pd.read_html(io.StringIO("<table><tr><th>k</th></tr><tr><td>7</td></tr></table>"))[0]
xml = pd.read_xml(io.StringIO("<rows><r><v>5</v></r><r><v>6</v></r></rows>"))
print(json.dumps({"sums": sums, "ts": ts, "html": int(html.k[0]), "xml": xml.v.tolist(), "same": back.equals(df)}))
`);
    expect(out).toEqual({ sums: { a: 4, b: 2 }, ts: "2024-06-01T14:00:00+02:00", html: 7, xml: [5, 6], same: true });
  });

  test("matplotlib: Agg PNG with text and mathtext from the pre-built font cache; an open figure comes back as an image", async () => {
    const { out, stderr, raw } = await json(`
import glob, io, json, os
import matplotlib.pyplot as plt
from matplotlib import font_manager
fig, ax = plt.subplots()
ax.plot([1, 2, 3], [2, 1, 3])
ax.set_title(r"café $\\alpha^2$")
buf = io.BytesIO()
fig.savefig(buf, format="png", dpi=50)
print(json.dumps({
  "png": buf.getvalue()[:4].hex(),
  "backend": plt.get_backend().lower(),
  "font": os.path.basename(font_manager.findfont("DejaVu Sans", fallback_to_default=False)),
  "cache": [os.path.basename(p).startswith("fontlist-") for p in glob.glob(os.environ["MPLCONFIGDIR"] + "/*.json")],
}))
`);
    expect(out).toEqual({ png: "89504e47", backend: "agg", font: "DejaVuSans.ttf", cache: [true] });
    expect(stderr).not.toContain("font cache");
    const imgs = (raw as CallToolResult).content.filter((c) => c.type === "image") as Array<{ data: string; mimeType: string }>;
    expect(imgs.map((i) => [i.mimeType, i.data.startsWith(PNG_MAGIC)])).toEqual([["image/png", true]]);
  });

  test("Pillow: PNG, JPEG, WebP, TIFF and GIF round trips, TrueType text", async () => {
    const { out } = await json(`
import io, json
from PIL import Image, ImageDraw, ImageFont
img = Image.new("RGB", (40, 20), (200, 10, 10))
font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 12)
ImageDraw.Draw(img).text((2, 2), "Hi", font=font, fill=(255, 255, 255))
sizes = {}
for fmt in ["PNG", "JPEG", "WEBP", "TIFF", "GIF"]:
    b = io.BytesIO()
    img.save(b, fmt)
    back = Image.open(io.BytesIO(b.getvalue()))
    sizes[fmt] = [back.format, list(back.size)]
img.save("/tmp/pic.jpg")
print(json.dumps({"sizes": sizes, "disk": Image.open("/tmp/pic.jpg").format, "text_drawn": any(p != (200, 10, 10) for p in img.getdata())}))
`);
    expect(out).toEqual({
      sizes: {
        PNG: ["PNG", [40, 20]],
        JPEG: ["JPEG", [40, 20]],
        WEBP: ["WEBP", [40, 20]],
        TIFF: ["TIFF", [40, 20]],
        GIF: ["GIF", [40, 20]],
      },
      disk: "JPEG",
      text_drawn: true,
    });
  });

  test("scipy: stats, optimize, interpolate, sparse and signal", async () => {
    const { out } = await json(`
import json, numpy as np
from scipy import interpolate, optimize, signal, sparse, stats
from scipy.sparse.linalg import spsolve
root = optimize.brentq(lambda x: x * x - 2, 0, 2)
p = stats.norm.cdf(1.96)
f = interpolate.interp1d([0, 1, 2], [0, 10, 20])
x = spsolve(sparse.csr_matrix([[2.0, 0.0], [0.0, 4.0]]), np.array([2.0, 8.0]))
b, a = signal.butter(2, 0.5)
print(json.dumps({"root": round(root, 6), "p": round(float(p), 3), "interp": float(f(1.5)), "sparse": x.tolist(), "butter": len(b)}))
`);
    expect(out).toEqual({ root: 1.414214, p: 0.975, interp: 15, sparse: [1, 2], butter: 3 });
  });

  test("the standard library: ctypes, json, asyncio, sqlite3, ssl, hashlib, compression, zoneinfo, decimal, subprocess, UTF-8", async () => {
    const { out } = await json(`
import asyncio, bz2, ctypes, ctypes.util, decimal, hashlib, json, locale, lzma, sqlite3, ssl, subprocess, sys, zlib, zoneinfo
from datetime import datetime
libc = ctypes.CDLL(ctypes.util.find_library("c"))
db = sqlite3.connect(":memory:")
db.execute("create table t (x)")
db.executemany("insert into t values (?)", [(1,), (2,)])
async def two():
    return await asyncio.gather(asyncio.sleep(0, 1), asyncio.sleep(0, 2))
data = b"x" * 1000
print(json.dumps({
  "ctypes": libc.abs(-5),
  "sqlite": db.execute("select sum(x) from t").fetchone()[0],
  "asyncio": asyncio.run(two()),
  "ssl": ssl.OPENSSL_VERSION.split()[0],
  "certs": ssl.create_default_context().cert_store_stats()["x509_ca"] > 100,
  "sha256": hashlib.sha256(b"abc").hexdigest()[:8],
  "compress": [len(m.decompress(m.compress(data))) for m in (zlib, bz2, lzma)],
  "tz": datetime(2024, 1, 1, 12, tzinfo=zoneinfo.ZoneInfo("Asia/Tokyo")).utcoffset().seconds // 3600,
  "decimal": str(decimal.Decimal("0.1") + decimal.Decimal("0.2")),
  "shell": subprocess.run(["sh", "-c", "echo ok"], capture_output=True, text=True).stdout.strip(),
  "utf8": [sys.getfilesystemencoding(), locale.getpreferredencoding(), "caf\\u00e9 \\u2713"],
}))
`);
    expect(out).toEqual({
      ctypes: 5,
      sqlite: 3,
      asyncio: [1, 2],
      ssl: "OpenSSL",
      certs: true,
      sha256: "ba7816bf",
      compress: [1000, 1000, 1000],
      tz: 9,
      decimal: "0.3",
      shell: "ok",
      utf8: ["utf-8", "UTF-8", "café ✓"],
    });
  });

  test("the build chain is gone: no compiler, linker, headers, perl tools, pip or apt", async () => {
    const { out } = await json(`
import json, os, shutil, importlib.util
print(json.dumps({
  "tools": [t for t in ["cc", "gcc", "g++", "c++", "ld", "as", "cpan", "make", "pip", "pip3", "apt", "apt-get"] if shutil.which(t)],
  "headers": [p for p in ["/usr/include/python3.13/Python.h", "/usr/include/stdio.h"] if os.path.exists(p)],
  "modules": [m for m in ["pip", "pythran", "tkinter"] if importlib.util.find_spec(m)],
}))
`);
    expect(out).toEqual({ tools: [], headers: [], modules: [] });
  });
});
