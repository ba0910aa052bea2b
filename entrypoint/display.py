# Rich results inside the sandbox: images (matplotlib figures left open, PIL images, McpImage,
# runtime.show(obj)), DataFrames as compact tables, and files written to /tmp/outputs/. Installed by
# interpreter.py as the module `_mcp_display`; the host validates everything this sends.
import base64
import io
import json
import mimetypes
import os
import stat
import sys
import time

import _mcp_host as _host

# /tmp/outputs in every sandbox; the test-only local engine gives each "container" its own folder.
OUTPUT_DIR = os.environ.get("MCP_SANDBOX_OUTPUT_DIR", "/tmp/outputs")
TABLE_ROWS = 20  # rows shown of a long DataFrame (half from the head, half from the tail)
TABLE_COLS = 20
TABLE_CELL = 50
TEXT_MIME = ("text/", "application/json", "application/xml", "application/csv", "application/x-yaml", "application/javascript")

_run = {"images": [], "notes": [], "limits": {}, "spent": 0}
_sent_files = {}  # name -> (size, mtime_ns) already returned, so unchanged files are not sent again


def _limit(key):
    """The run's limit `key` as the exec frame sent it, else the contract's default (DISPLAY_DEFAULTS in
    src/sandbox/protocol.ts, which arrives as PROTOCOL["display_defaults"])."""
    value = _run["limits"].get(key)
    return value if isinstance(value, int) and value >= 0 else _host.PROTOCOL["display_defaults"][key]


def _start(frame):
    _run["images"] = []
    _run["notes"] = []
    _run["spent"] = 0
    limits = frame.get("display")
    _run["limits"] = limits if isinstance(limits, dict) else {}


def _afford(size, label):
    """Images and files share one budget per run (MCP_BRIDGE_RESULT_CAP), so the whole result fits what
    clients accept; what does not fit is left out with a note."""
    cap = _limit("result_bytes")
    if _run["spent"] + size > cap:
        _run["notes"].append(
            "%s not returned: a run's images and files are capped at %d KiB in all (MCP_BRIDGE_RESULT_CAP) and earlier ones used %d KiB; "
            "return fewer or smaller ones per call (e.g. a lower dpi), or keep it in /tmp and return it in a later call" % (label, cap // 1024, _run["spent"] // 1024)
        )
        return False
    _run["spent"] += size
    return True


def _magic_mime(data):
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return "image/png"
    if data[:3] == b"\xff\xd8\xff":
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _is_figure(obj):
    return type(obj).__name__ == "Figure" and hasattr(obj, "savefig")


def _is_pil(obj):
    return hasattr(obj, "save") and hasattr(obj, "mode") and hasattr(obj, "size") and type(obj).__module__.startswith("PIL")


def _image_bytes(obj):
    """(bytes, mime) for anything show() accepts, else None."""
    if type(obj).__name__ in ("McpImage",) and hasattr(obj, "data"):
        return bytes(obj.data), obj.mime_type or _magic_mime(obj.data) or "image/png"
    if _is_figure(obj):
        buf = io.BytesIO()
        obj.savefig(buf, format="png", bbox_inches="tight", dpi=_limit("dpi"))
        return buf.getvalue(), "image/png"
    if _is_pil(obj):
        buf = io.BytesIO()
        img = obj if obj.mode in ("RGB", "RGBA", "L", "LA", "P", "1", "I;16") else obj.convert("RGBA")
        img.save(buf, format="PNG")
        return buf.getvalue(), "image/png"
    if isinstance(obj, (bytes, bytearray, memoryview)):
        data = bytes(obj)
        mime = _magic_mime(data)
        return (data, mime) if mime else None
    repr_png = getattr(obj, "_repr_png_", None)
    if callable(repr_png):
        data = repr_png()
        if isinstance(data, bytes):
            return data, "image/png"
    return None


def show(obj, label=None):
    """Return obj with this run's result as an image: a matplotlib figure, PIL image, McpImage, or PNG/JPEG bytes."""
    found = _image_bytes(obj)
    if found is None:
        raise TypeError("show() takes a matplotlib figure, a PIL image, an McpImage or PNG/JPEG/GIF/WebP bytes; got %s" % type(obj).__name__)
    _add_image(found[0], found[1], label or type(obj).__name__)
    if _is_figure(obj):
        plt = sys.modules.get("matplotlib.pyplot")
        if plt is not None:
            plt.close(obj)  # shown once, not again at the end of the run
    return None


def _add_image(data, mime, label):
    images = _run["images"]
    if len(images) >= _limit("max_images"):
        _run["notes"].append("%s not returned: at most %d images per run" % (label, _limit("max_images")))
        return
    cap = _limit("image_bytes")
    if len(data) > cap:
        _run["notes"].append(
            "%s not returned: %d KiB is over the %d KiB image cap; make it smaller (fewer pixels, lower dpi)" % (label, len(data) // 1024, cap // 1024)
        )
        return
    encoded = base64.b64encode(data).decode("ascii")
    if _afford(len(encoded), label):
        images.append({"mime_type": mime, "data": encoded})


def _render_value(value):
    """Images and tables as the trailing expression."""
    if _image_bytes_cheap(value):
        show(value, label="the result")
        return {"value": "<%s shown as an image>" % type(value).__name__}
    mod = type(value).__module__ or ""
    if mod.startswith("pandas"):
        name = type(value).__name__
        if name == "DataFrame":
            return _frame_value(value)
        if name == "Series":
            return _series_value(value)
    return None


def _image_bytes_cheap(value):
    return type(value).__name__ == "McpImage" or _is_figure(value) or _is_pil(value)


def _frame_value(df):
    rows, cols = df.shape
    text = df.to_string(max_rows=TABLE_ROWS, max_cols=TABLE_COLS, max_colwidth=TABLE_CELL, show_dimensions=False)
    truncated = rows > TABLE_ROWS or cols > TABLE_COLS
    if truncated:
        text += "\n[%d rows x %d columns; showing %d rows and %d columns: print(df.to_string()) or df.iloc[a:b] for more]" % (
            rows, cols, min(rows, TABLE_ROWS), min(cols, TABLE_COLS))
    half = TABLE_ROWS // 2
    sample = df.iloc[:, :TABLE_COLS]
    sample = sample if rows <= TABLE_ROWS else sample.iloc[list(range(half)) + list(range(rows - half, rows))]
    try:
        split = json.loads(sample.to_json(orient="split", date_format="iso", default_handler=str))
        table = {
            "columns": [_cell(str(c)) for c in split.get("columns", [])],
            "index": [_cell(v) for v in split.get("index", [])],
            "rows": [[_cell(v) for v in row] for row in split.get("data", [])],
            "total_rows": rows,
            "total_columns": cols,
        }
        if truncated:
            table["truncated"] = True
    except Exception:
        table = None
    out = {"value": text}
    if table is not None:
        out["table"] = table
    return out


def _cell(v):
    """A table cell as the host accepts it: a primitive, strings cut to TABLE_CELL characters."""
    if v is None or isinstance(v, (bool, int, float)):
        return v
    text = v if isinstance(v, str) else json.dumps(v, default=str)
    return text if len(text) <= TABLE_CELL else text[: TABLE_CELL - 1] + "…"


def _series_value(series):
    text = series.to_string(max_rows=TABLE_ROWS)
    if len(series) > TABLE_ROWS:
        text += "\n[%d values; showing %d]" % (len(series), TABLE_ROWS)
    return {"value": text}


def _collect_figures():
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return
    try:
        for num in plt.get_fignums():
            fig = plt.figure(num)
            show(fig, label="figure %d" % num)
        plt.close("all")
    except Exception as exc:
        _run["notes"].append("could not render open matplotlib figures: %s" % exc)


def _collect_files():
    """New or changed regular files directly in /tmp/outputs/ (never through a symlink)."""
    files = []
    try:
        st = os.lstat(OUTPUT_DIR)
    except FileNotFoundError:
        return files
    if not stat.S_ISDIR(st.st_mode):
        _run["notes"].append("%s is not a directory; no files returned" % OUTPUT_DIR)
        return files
    per_file = _limit("file_bytes")
    total_cap = _limit("files_total_bytes")
    max_files = _limit("max_files")
    total = 0
    with os.scandir(OUTPUT_DIR) as it:
        entries = sorted(it, key=lambda e: e.name)
    for entry in entries:
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        key = (st.st_size, st.st_mtime_ns)
        if _sent_files.get(entry.name) == key:
            continue  # returned (or reported) already, unchanged since
        if stat.S_ISLNK(st.st_mode):
            _run["notes"].append("%s is a symlink: not followed, not returned" % entry.name)
            _sent_files[entry.name] = key
            continue
        if not stat.S_ISREG(st.st_mode):
            continue
        if len(files) >= max_files:
            _run["notes"].append("%s not returned: at most %d files per run" % (entry.name, max_files))
            continue
        if st.st_size > per_file or total + st.st_size > total_cap:
            _run["notes"].append("%s not returned: %d KiB is over the file cap (%d KiB each, %d KiB per run)" % (entry.name, st.st_size // 1024, per_file // 1024, total_cap // 1024))
            _sent_files[entry.name] = key
            continue
        try:
            fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
            with os.fdopen(fd, "rb") as f:
                data = f.read(per_file + 1)
        except OSError as exc:
            _run["notes"].append("%s not returned: %s" % (entry.name, exc))
            continue
        if len(data) > per_file:
            continue
        mime = mimetypes.guess_type(entry.name)[0] or _magic_mime(data) or "application/octet-stream"
        item = {"name": entry.name, "mime_type": mime, "size": len(data)}
        text = None
        if mime.startswith(TEXT_MIME) or mime == "application/octet-stream":
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                text = None
        if text is not None:
            if mime == "application/octet-stream":
                item["mime_type"] = "text/plain"
            item["text"] = text
        else:
            item["data"] = base64.b64encode(data).decode("ascii")
        if not _afford(len(item.get("data") or data), entry.name):
            _sent_files[entry.name] = key
            continue
        total += len(data)
        files.append(item)
        _sent_files[entry.name] = key
    return files


def _finish(out):
    _collect_figures()
    files = _collect_files()
    if _run["images"]:
        out["images"] = _run["images"]
    if files:
        out["files"] = files
    if _run["notes"]:
        out["display_notes"] = _run["notes"]


def _prepare_outputs():
    try:
        os.makedirs(OUTPUT_DIR, mode=0o700, exist_ok=True)
    except OSError:
        pass
    # The offline image ships a pre-built matplotlib font cache; copying it saves a rebuild per session.
    # A flat folder of small files: copied with os calls (importing shutil costs more than the copy).
    target = os.environ.get("MPLCONFIGDIR")
    if target and os.path.isdir("/opt/mplconfig") and not os.path.exists(target):
        try:
            os.makedirs(target, mode=0o700)
            for entry in os.scandir("/opt/mplconfig"):
                if entry.is_file(follow_symlinks=False):
                    with open(entry.path, "rb") as src, open(os.path.join(target, entry.name), "wb") as dst:
                        dst.write(src.read())
        except OSError:
            pass


_prepare_outputs()
_host.RUN_HOOKS.append(_start)
_host.RESULT_HOOKS.append(_finish)
_host.VALUE_RENDERERS.insert(0, _render_value)
