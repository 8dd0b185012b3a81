#!/usr/bin/env python3
"""Fails when a tracked file refers to a path outside the repository.

A clone of Lore must build, test and read on its own: a test that opens a
data file two folders above its crate, or a README link to a document beside
the checkout, works only on the machine where those happen to sit.

Every relative path that climbs with `..` segments is resolved against the
directories it can be relative to: the file's own folder (links, includes,
`mod` paths; the only one for markdown), and the crate folder that holds it (Rust's
`env!("CARGO_MANIFEST_DIR")`, cargo's working directory for tests) or, for a
file outside any crate, the repository root (where make and the scripts
run). A path that climbs out of the repository from any of them is
reported. A path naming the hand-over folder (`shared/`) after a climb is
reported whatever it resolves to, because that folder is never part of the
product.

Relative links in tracked markdown files (`[text](path)`) must also name a
file or folder the repository tracks, and a `#heading` the markdown file
they name has, so the README and the book never lead a reader into
nothing.

Usage: scripts/checks/self_contained.py [REPO_ROOT]
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path, PurePosixPath

# `..` segments, then the path segment they lead to.
CLIMB = re.compile(r"(?<![\w.])((?:\.\./)+)([\w-][\w.-]*)")
# The hand-over folder of the team: never a dependency of the product.
HANDOVER = re.compile(r"(?:\.\./)+shared\b")


def tracked_files(root: Path) -> list[str]:
    output = subprocess.run(
        ["git", "-C", str(root), "ls-files", "-z"], check=True, capture_output=True
    ).stdout
    return [name for name in output.decode().split("\0") if name]


def crate_dir(relative: PurePosixPath, manifests: set[PurePosixPath]) -> PurePosixPath | None:
    """The nearest folder above `relative` that holds a Cargo.toml."""
    for parent in relative.parents:
        if parent / "Cargo.toml" in manifests:
            return parent
    return None


# A markdown link's target, up to a title or the closing parenthesis.
LINK = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def anchors(text: str) -> set[str]:
    """The anchors of a markdown file's headings, as GitHub and mdBook
    make them: lower case, punctuation dropped, spaces to hyphens, a
    repeated one numbered."""
    seen: dict[str, int] = {}
    fence = False
    for line in text.splitlines():
        if line.startswith("```"):
            fence = not fence
        heading = None if fence else re.match(r"^#{1,6}\s+(.*?)\s*#*$", line)
        if not heading:
            continue
        slug = re.sub(r"[^\w\- ]", "", heading.group(1).lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        yield slug if count == 0 else f"{slug}-{count}"


def dead_links(root: Path, name: str, text: str, tracked: set[PurePosixPath]) -> list[str]:
    """Relative links of a markdown file that name nothing tracked, or a
    heading their markdown file does not have."""
    folders = {parent for path in tracked for parent in path.parents}
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        for match in LINK.finditer(line):
            target, _, anchor = match.group(1).partition("#")
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("/"):
                continue
            resolved = PurePosixPath(os.path.normpath(PurePosixPath(name).parent / target)) if target else PurePosixPath(name)
            if resolved not in tracked and resolved not in folders:
                found.append(f"{name}:{number}: link to {target}, which is not in the repository")
            elif anchor and resolved.suffix == ".md" and resolved in tracked:
                if anchor not in set(anchors((root / resolved).read_text(encoding="utf-8"))):
                    found.append(f"{name}:{number}: link to {match.group(1)}, a heading {resolved} does not have")
    return found


def escapes(base: PurePosixPath, climb: str) -> bool:
    """True when `climb` (a run of `..` segments) from `base` leaves the root."""
    return climb.count("../") > len(base.parts)


def problems(root: Path) -> list[str]:
    files = tracked_files(root)
    tracked = {PurePosixPath(name) for name in files}
    manifests = {path for path in tracked if path.name == "Cargo.toml"}
    found = []
    for name in files:
        path = root / name
        if not path.is_file() or path.stat().st_size > 2_000_000:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        relative = PurePosixPath(name)
        if relative.suffix == ".md":
            found.extend(dead_links(root, name, text, tracked))
        crate = crate_dir(relative, manifests)
        if relative.suffix == ".md":
            # Markdown links are relative to the file, nothing else.
            bases = {relative.parent}
        else:
            bases = {relative.parent, crate if crate is not None else PurePosixPath("")}
        for number, line in enumerate(text.splitlines(), start=1):
            for match in CLIMB.finditer(line):
                handover = HANDOVER.match(line, match.start())
                if handover or any(escapes(base, match.group(1)) for base in bases):
                    found.append(f"{name}:{number}: {line.strip()}")
                    break
    return found


def main() -> int:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else os.getcwd()).resolve()
    found = problems(root)
    if found:
        print("These tracked files point outside the repository or at nothing in it; a clone has nothing there:", file=sys.stderr)
        for line in found:
            print(f"  {line}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
