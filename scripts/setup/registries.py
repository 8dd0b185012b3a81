"""Each registry's own client, asked for one package by name and version.

Set-up never names a registry host: pip, npm, cargo and apt each know where
their registry is, through whatever mirror, proxy or credentials the machine
configured for them (`pip.conf` or `PIP_INDEX_URL`, `.npmrc` or
`npm_config_registry`, cargo's source replacement, apt's sources and
`Acquire::*::Proxy`, the `http(s)_proxy` variables). `download(package,
folder)` leaves the package's file (`package["file"]`) in `folder` or raises
`FetchError` with the client's own reason; checking it against its SHA-256 is
the caller's (`third_party.py`).
"""

import atexit
import glob
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


class FetchError(Exception):
    """A package that could not be fetched; its message is the reason."""


def _run(command: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(command, capture_output=True, text=True, cwd=cwd)
    except FileNotFoundError as error:
        raise FetchError(f"{command[0]} is not installed ({error.strerror})") from error


def _last_line(result: subprocess.CompletedProcess, otherwise: str) -> str:
    lines = [line for line in (result.stderr + result.stdout).strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else otherwise


def _pip(package: dict, folder: Path) -> None:
    # An sdist's metadata is read by building it, which pip does with the
    # build backend from the same index; only the package itself is taken
    # as source, its backend as wheels.
    kind = "--only-binary=:all:" if package["file"].endswith(".whl") else f"--no-binary={package['name']}"
    result = _run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--disable-pip-version-check",
                   kind, "-d", str(folder), f"{package['name']}=={package['version']}"])
    if result.returncode != 0 or not (folder / package["file"]).exists():
        raise FetchError(_last_line(result, f"pip did not save {package['file']}"))


def _npm(package: dict, folder: Path) -> None:
    result = _run(["npm", "pack", "--silent", "--pack-destination", str(folder),
                   f"{package['name']}@{package['version']}"], cwd=folder)
    if result.returncode != 0 or not (folder / package["file"]).exists():
        raise FetchError(_last_line(result, f"npm pack did not save {package['file']}"))


def _cargo(package: dict, folder: Path) -> None:
    # Cargo has no command that only downloads a crate. `cargo install` of a
    # library fetches it (through the configured source replacement, with
    # the index's checksum checked) into cargo's own package cache, and only
    # then refuses to install it: the file is taken from that cache.
    home = Path(os.environ.get("CARGO_HOME") or Path.home() / ".cargo")
    name = f"{package['name']}-{package['version']}.crate"
    with tempfile.TemporaryDirectory() as root:
        result = _run(["cargo", "install", "--quiet", "--root", root, f"{package['name']}@{package['version']}"],
                      cwd=Path(root))
    cached = sorted(glob.glob(str(home / "registry" / "cache" / "*" / glob.escape(name))), key=os.path.getmtime)
    if not cached:
        raise FetchError(_last_line(result, f"cargo left no {name} in {home / 'registry' / 'cache'}"))
    shutil.copyfile(cached[-1], folder / package["file"])


class _Apt:
    """A private apt state (lists and cache in a scratch folder) over the
    machine's own Debian sources, so that `apt-get update` and `apt-get
    download` need no root and leave the machine's apt as it was. A package
    pinned in another suite than the machine's (`suite` in third-party.toml)
    is looked for at the same mirrors under that suite."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="lore-apt-"))
        atexit.register(shutil.rmtree, self.folder, True)
        self.updated: set[str] = set()
        self.options: list[str] = []
        self.uris: list[str] = []

    def download(self, package: dict, folder: Path) -> None:
        suite = package["suite"]
        if suite not in self.updated:
            self._update(self.updated | {suite})
        result = _run(["apt-get", *self.options, "download", f"{package['name']}={package['version']}"], cwd=folder)
        if result.returncode != 0 or not (folder / package["file"]).exists():
            raise FetchError(f"apt-get download: {_last_line(result, 'no file saved')} (looked in {suite} at "
                             f"{', '.join(self.uris) or 'no source'}; Debian's suites keep the current version only, "
                             f"so a pin that left its suite needs a newer version or a snapshot mirror)")

    def _update(self, suites: set[str]) -> None:
        entries = [entry for suite in sorted(suites) for entry in _entries_for(suite, _machine_sources())]
        if not entries:
            raise FetchError("apt has no Debian source configured (its sources list names none with a suite)")
        self.uris = sorted({entry["URIs"] for entry in entries})
        parts = self.folder / "sources"
        parts.mkdir(exist_ok=True)
        (parts / "lore.sources").write_text("\n".join(_deb822(entry) for entry in entries))
        (self.folder / "none.list").write_text("")
        (self.folder / "status").write_text("")
        for sub in ("lists/partial", "cache/archives/partial"):
            (self.folder / sub).mkdir(parents=True, exist_ok=True)
        self.options = [
            "-q", "-o", f"Dir::Etc::SourceList={self.folder / 'none.list'}", "-o", f"Dir::Etc::SourceParts={parts}",
            "-o", f"Dir::State::Lists={self.folder / 'lists'}", "-o", f"Dir::Cache={self.folder / 'cache'}",
            "-o", f"Dir::State::status={self.folder / 'status'}",
        ]
        if os.geteuid() == 0:
            # apt would hand downloads to its `_apt` user, which cannot
            # write into this private folder.
            self.options += ["-o", "APT::Sandbox::User=root"]
        # A failed source is reported by the download that needed it.
        _run(["apt-get", *self.options, "update"])
        self.updated = suites


_DEB822_NAMES = {"arch": "Architectures", "signed-by": "Signed-By", "trusted": "Trusted", "lang": "Languages",
                 "by-hash": "By-Hash", "check-valid-until": "Check-Valid-Until"}


def _machine_sources() -> list[dict]:
    """The machine's `deb` sources as deb822 fields, one URI and suite each
    (apt's own configuration says where they are, `APT_CONFIG` included)."""
    result = _run(["apt-config", "shell", "LIST", "Dir::Etc::SourceList/f", "PARTS", "Dir::Etc::SourceParts/d"])
    where = {}
    for line in result.stdout.splitlines():
        key, _, value = line.partition("=")
        where[key] = shlex.split(value)[0] if value else ""
    files = [Path(where["LIST"])] if where.get("LIST") else []
    if where.get("PARTS") and Path(where["PARTS"]).is_dir():
        files += sorted(path for path in Path(where["PARTS"]).iterdir() if path.suffix in (".list", ".sources"))
    sources = []
    for path in files:
        if path.is_file():
            text = path.read_text()
            sources += _deb822_entries(text) if path.suffix == ".sources" else _one_line_entries(text)
    return sources


def _one_line_entries(text: str) -> list[dict]:
    entries = []
    for line in text.splitlines():
        words = line.split("#", 1)[0].split()
        if not words or words[0] != "deb":
            continue
        fields, rest = {}, words[1:]
        if rest and rest[0].startswith("["):
            options = []
            while rest:
                word = rest.pop(0)
                options.append(word.strip("[]"))
                if word.endswith("]"):
                    break
            for option in filter(None, options):
                key, _, value = option.partition("=")
                if key in _DEB822_NAMES:
                    fields[_DEB822_NAMES[key]] = value.replace(",", " ")
        if len(rest) >= 2:
            entries.append({**fields, "URIs": rest[0], "Suites": rest[1]})
    return entries


def _deb822_entries(text: str) -> list[dict]:
    entries = []
    for paragraph in text.split("\n\n"):
        fields, key = {}, None
        for line in paragraph.splitlines():
            if line.startswith("#"):
                continue
            if line[:1] in (" ", "\t") and key:
                fields[key] += "\n" + line
            elif ":" in line:
                key, _, value = line.partition(":")
                fields[key.strip()] = value.strip()
        if "deb" not in fields.get("Types", "").split() or fields.get("Enabled", "yes") == "no":
            continue
        kept = {key: value for key, value in fields.items() if key in _DEB822_NAMES.values()}
        for uri in fields.get("URIs", "").split():
            for suite in fields.get("Suites", "").split():
                entries.append({**kept, "URIs": uri, "Suites": suite})
    return entries


def _entries_for(suite: str, sources: list[dict]) -> list[dict]:
    """The machine's sources re-pointed at `suite`: those whose own suite
    has the same kind (`bookworm` and `sid` are one kind, `bookworm-security`
    another), so that a suite is asked of the mirrors that carry its kind."""
    kind = suite.partition("-")[2]
    seen, entries = set(), []
    for source in sources:
        if source["Suites"].endswith("/") or source["Suites"].partition("-")[2] != kind:
            continue
        entry = {**source, "Types": "deb", "Suites": suite, "Components": "main", "Targets": "Packages"}
        if (entry["URIs"], suite) not in seen:
            seen.add((entry["URIs"], suite))
            entries.append(entry)
    return entries


def _deb822(entry: dict) -> str:
    return "".join(f"{key}: {value}\n" for key, value in entry.items())


_apt: _Apt | None = None


def _debian(package: dict, folder: Path) -> None:
    global _apt
    _apt = _apt or _Apt()
    _apt.download(package, folder)


CLIENTS = {"pypi": _pip, "npm": _npm, "crates": _cargo, "debian": _debian}


def download(package: dict, folder: Path) -> None:
    """Leaves the package's file in `folder`, fetched by its registry's client."""
    CLIENTS[package["registry"]](package, folder)
