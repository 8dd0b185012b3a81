"""A local mirror of the four registries set-up fetches from, serving the
packages of a folder laid out as the cache's (`registry/{pypi,npm,crates,
debian}/`), each by the protocol its client speaks:

- PyPI's simple index (PEP 503) under /pypi/simple/, for pip;
- npm's registry (a packument per package, with its integrity) under /npm/;
- a sparse cargo index (RFC 2789) under /crates/index/;
- a Debian archive (an unsigned Release and Packages of every suite asked
  for, so apt is pointed at it with `trusted=yes`) under /debian/.

Usage: registry_mirror.py FOLDER LOG [--alter FILE]
  Prints `port N` once listening on 127.0.0.1, then serves until killed,
  appending the name of each package file it sends to LOG. --alter serves
  FILE with one byte appended (and the indexes describe the altered file,
  so only a pinned SHA-256 can tell).
"""

import argparse
import base64
import hashlib
import io
import json
import re
import subprocess
import sys
import tarfile
import tempfile
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote


def normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


class Packages:
    """The folder's package files, each read once."""

    def __init__(self, folder: Path, altered: str | None) -> None:
        self.files: dict[str, bytes] = {}
        for path in sorted(folder.glob("*/*")):
            data = path.read_bytes()
            if path.name == altered:
                data += b"\n"
            self.files[f"{path.parent.name}/{path.name}"] = data

    def of(self, registry: str) -> dict[str, bytes]:
        prefix = registry + "/"
        return {key[len(prefix):]: data for key, data in self.files.items() if key.startswith(prefix)}

    def pypi_project(self, project: str) -> list[str]:
        found = []
        for name in self.of("pypi"):
            stem = name.split("-")[0] if name.endswith(".whl") else name.rsplit("-", 1)[0]
            if normal(stem) == normal(project):
                found.append(name)
        return found

    def npm_packument(self, package: str, base: str) -> dict | None:
        versions = {}
        for name, data in self.of("npm").items():
            with tarfile.open(fileobj=io.BytesIO(data)) as archive:
                manifest = json.load(archive.extractfile("package/package.json"))
            if manifest["name"] != package:
                continue
            integrity = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
            versions[manifest["version"]] = {
                **{key: manifest[key] for key in ("name", "version")},
                "dist": {"tarball": f"{base}/npm/files/{name}", "shasum": hashlib.sha1(data).hexdigest(),
                         "integrity": integrity},
            }
        if not versions:
            return None
        return {"name": package, "versions": versions, "dist-tags": {"latest": max(versions)}}

    def crate_index(self, crate: str) -> str | None:
        lines = []
        for name, data in self.of("crates").items():
            stem = name.removesuffix(".crate")
            crate_name, _, version = stem.rpartition("-")
            if crate_name == crate:
                lines.append(json.dumps({"name": crate, "vers": version, "deps": [], "features": {},
                                         "cksum": hashlib.sha256(data).hexdigest(), "yanked": False}))
        return "\n".join(lines) + "\n" if lines else None

    def debian_packages(self) -> str:
        stanzas = []
        for name, data in sorted(self.of("debian").items()):
            with tempfile.NamedTemporaryFile(suffix=".deb") as deb:
                deb.write(data)
                deb.flush()
                control = subprocess.run(["dpkg-deb", "--field", deb.name], capture_output=True,
                                         check=True).stdout.decode().rstrip("\n")
            stanzas.append(f"{control}\nFilename: pool/{name}\nSize: {len(data)}\n"
                           f"SHA256: {hashlib.sha256(data).hexdigest()}\n")
        return "\n".join(stanzas)

    def debian_release(self, suite: str, packages: bytes, arch: str) -> str:
        date = datetime.now(timezone.utc).strftime("%a, %d %b %Y %H:%M:%S UTC")
        return (f"Suite: {suite}\nCodename: {suite}\nDate: {date}\nArchitectures: {arch}\nComponents: main\n"
                f"SHA256:\n {hashlib.sha256(packages).hexdigest()} {len(packages)} main/binary-{arch}/Packages\n")


def handler(packages: Packages, log: Path, arch: str):
    debian_index = packages.debian_packages().encode()

    class Mirror(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def send(self, body: bytes, kind: str = "application/octet-stream", served: str | None = None) -> bool:
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            if served:
                with open(log, "a") as handle:
                    handle.write(served + "\n")
            return True

        def do_GET(self) -> None:
            base = f"http://{self.headers.get('Host')}"
            path = unquote(self.path.split("?")[0])
            parts = [part for part in path.split("/") if part]
            if not self.route(parts, base):
                self.send_error(404)

        def route(self, parts: list[str], base: str):
            registry, rest = (parts[0], parts[1:]) if parts else ("", [])
            if registry == "pypi" and rest[:1] == ["simple"] and len(rest) == 2:
                names = packages.pypi_project(rest[1])
                links = "".join(f'<a href="{base}/pypi/files/{name}#sha256='
                                f'{hashlib.sha256(packages.files["pypi/" + name]).hexdigest()}">{name}</a>\n'
                                for name in names)
                return names and self.send(f"<!DOCTYPE html><html><body>\n{links}</body></html>".encode(), "text/html")
            if registry in ("pypi", "npm", "debian") and rest[:1] in (["files"], ["pool"]) and len(rest) == 2:
                data = packages.files.get(f"{registry}/{rest[1]}")
                return data is not None and self.send(data, served=rest[1])
            if registry == "npm" and rest:
                packument = packages.npm_packument("/".join(rest), base)
                return packument and self.send(json.dumps(packument).encode(), "application/json")
            if registry == "crates" and rest == ["index", "config.json"]:
                return self.send(json.dumps({"dl": f"{base}/crates/dl/{{crate}}/{{version}}"}).encode(),
                                 "application/json")
            if registry == "crates" and rest[:1] == ["index"] and len(rest) >= 2:
                index = packages.crate_index(rest[-1])
                return index and self.send(index.encode(), "text/plain")
            if registry == "crates" and rest[:1] == ["dl"] and len(rest) == 3:
                name = f"{rest[1]}-{rest[2]}.crate"
                data = packages.files.get(f"crates/{name}")
                return data is not None and self.send(data, served=name)
            if registry == "debian" and rest[:1] == ["dists"] and len(rest) >= 3:
                suite, file = rest[1], "/".join(rest[2:])
                if file == "Release":
                    return self.send(packages.debian_release(suite, debian_index, arch).encode(), "text/plain")
                if file == f"main/binary-{arch}/Packages":
                    return self.send(debian_index, "text/plain")
            return None

    return Mirror


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path)
    parser.add_argument("log", type=Path)
    parser.add_argument("--alter")
    args = parser.parse_args()
    arch = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True, check=True).stdout.strip()
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler(Packages(args.folder, args.alter), args.log, arch))
    print(f"port {server.server_address[1]}", flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
