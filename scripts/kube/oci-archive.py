#!/usr/bin/env python3
"""Write a one-layer OCI image archive (oci-layout tar) that `ctr images import` reads.

Used by scripts/kube-up.sh for the pause image, which no registry here can provide:
    oci-archive.py OUT.tar NAME ENTRYPOINT FILE:PATH_IN_IMAGE...
The layer holds the given files (mode 0755, root-owned); mtimes are 0, so the same inputs give the
same image digest and a second import is a no-op.
"""
import hashlib
import io
import json
import sys
import tarfile


def blob(tar, data, media_type):
    digest = hashlib.sha256(data).hexdigest()
    info = tarfile.TarInfo(f"blobs/sha256/{digest}")
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))
    return {"mediaType": media_type, "digest": f"sha256:{digest}", "size": len(data)}


def main():
    out, name, entrypoint, *files = sys.argv[1:]
    layer_buf = io.BytesIO()
    with tarfile.open(fileobj=layer_buf, mode="w", format=tarfile.PAX_FORMAT) as layer:
        for spec in files:
            source, target = spec.split(":", 1)
            with open(source, "rb") as f:
                data = f.read()
            info = tarfile.TarInfo(target.lstrip("/"))
            info.size, info.mode, info.mtime = len(data), 0o755, 0
            layer.addfile(info, io.BytesIO(data))
    layer_bytes = layer_buf.getvalue()
    diff_id = "sha256:" + hashlib.sha256(layer_bytes).hexdigest()
    config = {
        "architecture": "amd64",
        "os": "linux",
        "config": {"Entrypoint": [entrypoint], "User": "65535:65535"},
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
    }
    with tarfile.open(out, "w") as tar:
        layer_desc = blob(tar, layer_bytes, "application/vnd.oci.image.layer.v1.tar")
        config_desc = blob(tar, json.dumps(config, sort_keys=True).encode(), "application/vnd.oci.image.config.v1+json")
        manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json", "config": config_desc, "layers": [layer_desc]}
        manifest_desc = blob(tar, json.dumps(manifest, sort_keys=True).encode(), "application/vnd.oci.image.manifest.v1+json")
        manifest_desc["annotations"] = {"io.containerd.image.name": name, "org.opencontainers.image.ref.name": name.rsplit(":", 1)[-1]}
        for path, data in (
            ("oci-layout", json.dumps({"imageLayoutVersion": "1.0.0"}).encode()),
            ("index.json", json.dumps({"schemaVersion": 2, "manifests": [manifest_desc]}).encode()),
        ):
            info = tarfile.TarInfo(path)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


if __name__ == "__main__":
    main()
