#!/usr/bin/env python3
"""Third-party material from package registries, pinned (third-party.toml).

Lore takes other projects' files in two ways only, both from a package
registry (PyPI, npm, crates.io, Debian's archive) at a pinned version whose
file is checked against its SHA-256:

- committed files (`[[file]]`): extracted from their package by this script,
  byte for byte, with the package's licence committed beside them; or, where
  the package's own file is far bigger than what Lore reads, re-created from
  the package by a converter of ours (`convert`, a module of `scripts/data/` whose
  `convert(read)` returns the file, `read(member)` giving the package's
  members), which `check --rebuild` runs again;
- data for tests and benchmarks (`[[package]]` without a `[[file]]`):
  fetched into the ignored cache (`$LORE_CACHE_DIR/registry/`) by the
  set-up scripts and read there, never committed.

Usage:
    python3 scripts/setup/third_party.py fetch [ID ...]   download packages into the cache (all by default)
    python3 scripts/setup/third_party.py extract          re-create every committed file from its package
    python3 scripts/setup/third_party.py check            committed files against their recorded SHA-256 (offline)
    python3 scripts/setup/third_party.py check --rebuild  and re-extract each from its package and compare
    python3 scripts/setup/third_party.py path ID          the downloaded package file (fetched when missing)

Each package is asked of its registry's own client by name and version
(`registries.py`), so a mirror or proxy those clients are set up for is
honoured; the SHA-256 is checked here whatever server sent the file.

Other scripts import `package_file`, `read_member` and `members` to read a
package without unpacking it.
"""

import argparse
import gzip
import hashlib
import io
import lzma
import os
import sys
import tarfile
import tempfile
import tomllib
import zipfile
from pathlib import Path

from registries import FetchError, download

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / "third-party.toml"
REGISTRIES = {"pypi": "PyPI", "npm": "the npm registry", "crates": "crates.io", "debian": "Debian's archive"}
CLIENT_NAMES = {"pypi": "pip", "npm": "npm", "crates": "cargo", "debian": "apt"}


def cache_dir() -> Path:
    return Path(os.environ.get("LORE_CACHE_DIR") or ROOT / ".cache")


def manifest() -> dict:
    with open(MANIFEST, "rb") as handle:
        data = tomllib.load(handle)
    packages = {package["id"]: package for package in data.get("package", [])}
    for file in data.get("file", []):
        if file["package"] not in packages:
            raise SystemExit(f"third-party.toml: {file['path']} names package {file['package']!r}, which is not listed")
    return {"packages": packages, "files": data.get("file", [])}


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def retry_hint(package: dict) -> str:
    return f"python3 scripts/setup/third_party.py fetch {package['id']}"


def package_file(package_id: str, packages: dict | None = None) -> Path:
    """The package's file in the cache, downloaded and checked when missing."""
    packages = packages or manifest()["packages"]
    package = packages[package_id]
    folder = cache_dir() / "registry" / package["registry"]
    path = folder / package["file"]
    if path.exists() and sha256(path.read_bytes()) == package["sha256"]:
        return path
    folder.mkdir(parents=True, exist_ok=True)
    where = REGISTRIES[package["registry"]]
    with tempfile.TemporaryDirectory(dir=folder) as scratch:
        try:
            download(package, Path(scratch))
        except FetchError as error:
            raise FetchError(
                f"Could not fetch {package['name']} {package['version']} from {where} ({error}). "
                f"Check that {CLIENT_NAMES[package['registry']]} reaches {where} (or the mirror it is configured for), "
                f"then run `{retry_hint(package)}` again."
            ) from error
        fetched = Path(scratch) / package["file"]
        digest = sha256(fetched.read_bytes())
        if digest != package["sha256"]:
            raise FetchError(
                f"{package['name']} {package['version']} from {where} has SHA-256 {digest}, not the pinned "
                f"{package['sha256']}: the registry serves a different file, so nothing was used. "
                f"Check third-party.toml, then run `{retry_hint(package)}` again."
            )
        os.replace(fetched, path)
    return path


def _deb_data(data: bytes) -> tarfile.TarFile:
    """The data.tar.* member of a Debian package (an ar archive)."""
    if not data.startswith(b"!<arch>\n"):
        raise ValueError("not a Debian package")
    at = 8
    while at + 60 <= len(data):
        header = data[at:at + 60]
        name = header[:16].decode().strip().rstrip("/")
        size = int(header[48:58].decode().strip())
        body = data[at + 60:at + 60 + size]
        if name.startswith("data.tar"):
            if name.endswith(".xz"):
                body = lzma.decompress(body)
            elif name.endswith(".gz"):
                body = gzip.decompress(body)
            elif not name.endswith(".tar"):
                raise ValueError(f"{name}: a compression this script does not read")
            return tarfile.open(fileobj=io.BytesIO(body))
        at += 60 + size + (size % 2)
    raise ValueError("no data.tar member")


def _open(path: Path):
    data = path.read_bytes()
    name = path.name
    if name.endswith(".whl") or name.endswith(".zip"):
        return zipfile.ZipFile(io.BytesIO(data))
    if name.endswith(".deb"):
        return _deb_data(data)
    return tarfile.open(fileobj=io.BytesIO(data))


def _normal(member: str) -> str:
    return member[2:] if member.startswith("./") else member


def members(path: Path) -> list[str]:
    """The file names a package holds (a Debian package's without `./`)."""
    archive = _open(path)
    if isinstance(archive, zipfile.ZipFile):
        return archive.namelist()
    return [_normal(info.name) for info in archive.getmembers() if info.isfile()]


def read_all(path: Path, wanted) -> dict[str, bytes]:
    """Every member whose name `wanted(name)` accepts, by name."""
    archive = _open(path)
    found = {}
    if isinstance(archive, zipfile.ZipFile):
        for name in archive.namelist():
            if wanted(name):
                found[name] = archive.read(name)
        return found
    for info in archive.getmembers():
        name = _normal(info.name)
        if info.isfile() and wanted(name):
            found[name] = archive.extractfile(info).read()
    return found


def read_member(path: Path, member: str) -> bytes:
    found = read_all(path, lambda name: name == member)
    if member not in found:
        raise SystemExit(f"{path.name} holds no {member}")
    return found[member]


def fetch(ids: list[str]) -> int:
    packages = manifest()["packages"]
    unknown = [package_id for package_id in ids if package_id not in packages]
    if unknown:
        print(f"third-party.toml lists no package {', '.join(unknown)}; it lists {', '.join(packages)}.",
              file=sys.stderr)
        return 2
    for package_id in ids or list(packages):
        try:
            path = package_file(package_id, packages)
        except FetchError as error:
            print(error, file=sys.stderr)
            return 1
        print(f"{package_id}: {path}")
    return 0


def extracted(file: dict, packages: dict) -> bytes:
    path = package_file(file["package"], packages)
    if "convert" not in file:
        return read_member(path, file["member"])
    import importlib
    # Converters are data scripts (scripts/data/).
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "data"))
    converter = importlib.import_module(file["convert"])
    return converter.convert(lambda member: read_member(path, member))


def origin(file: dict) -> str:
    """Where a committed file comes from, for messages."""
    return file["member"] if "member" in file else f"the conversion by scripts/data/{file['convert']}.py"


def extract() -> int:
    data = manifest()
    for file in data["files"]:
        try:
            content = extracted(file, data["packages"])
        except FetchError as error:
            print(error, file=sys.stderr)
            return 1
        if sha256(content) != file["sha256"]:
            print(f"{file['path']}: {origin(file)} of {file['package']} has SHA-256 {sha256(content)}, "
                  f"not the {file['sha256']} third-party.toml records; update the record with the file.",
                  file=sys.stderr)
            return 1
        target = ROOT / file["path"]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
        print(f"{file['path']} <- {file['package']}: {origin(file)}")
    return 0


def check(rebuild: bool) -> int:
    data = manifest()
    problems = []
    for file in data["files"]:
        target = ROOT / file["path"]
        if not target.exists():
            problems.append(f"{file['path']} is missing: run `python3 scripts/setup/third_party.py extract`.")
            continue
        digest = sha256(target.read_bytes())
        if digest != file["sha256"]:
            problems.append(f"{file['path']} is not the file extracted from {file['package']} "
                            f"(SHA-256 {digest}); third-party files are never edited by hand: "
                            f"run `python3 scripts/setup/third_party.py extract`.")
            continue
        if rebuild:
            try:
                content = extracted(file, data["packages"])
            except FetchError as error:
                problems.append(str(error))
                continue
            if content != target.read_bytes():
                problems.append(f"{file['path']} differs from {origin(file)} of {file['package']}.")
    for package_id in sorted({file["package"] for file in data["files"]}):
        licence = data["packages"][package_id]["licence_member"]
        if not any(file["package"] == package_id and file.get("member") == licence for file in data["files"]):
            problems.append(f"{package_id} has files committed without its licence ({licence}) beside them.")
    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        what = "re-extracted and identical" if rebuild else "match their recorded SHA-256"
        print(f"{len(data['files'])} third-party files {what}")
    return 1 if problems else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    fetch_parser = commands.add_parser("fetch", help="download packages into the cache")
    fetch_parser.add_argument("ids", nargs="*")
    commands.add_parser("extract", help="re-create the committed files from their packages")
    check_parser = commands.add_parser("check", help="check the committed files")
    check_parser.add_argument("--rebuild", action="store_true", help="also re-extract each and compare")
    path_parser = commands.add_parser("path", help="print a package's file in the cache")
    path_parser.add_argument("id")
    args = parser.parse_args()
    if args.command == "fetch":
        return fetch(args.ids)
    if args.command == "extract":
        return extract()
    if args.command == "check":
        return check(args.rebuild)
    try:
        print(package_file(args.id))
    except FetchError as error:
        print(error, file=sys.stderr)
        return 1
    except KeyError:
        print(f"third-party.toml lists no package {args.id}.", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
