#!/usr/bin/env python3
"""Fails when docs/ARCHITECTURE.md's crate table and the workspace disagree.

The table ("The crates, and what each may import") has a row per workspace
member, named `` `dir/` crate-name ``, and its "may import" cell names
exactly the Lore crates the member's Cargo.toml depends on (dev-dependencies
are the tests' own). A crate missing from the table, a row for a crate that
is gone, or a dependency the table does not name fails `make lint`, so the
map a newcomer reads is the one the compiler holds.

Usage: check-crate-table.py [REPOSITORY]   (default: this one)
"""

import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "ARCHITECTURE.md"
HEADING = "## The crates, and what each may import"
ROW = re.compile(r"^\| `([a-z0-9_-]+)/` (lore-[a-z0-9-]+) \|[^|]*\| ([^|]*) \|\s*$")
CRATE = re.compile(r"\blore-[a-z0-9]+(?:-[a-z0-9]+)*\b")


def members() -> dict[str, tuple[str, set[str]]]:
    """Each member's folder: its crate name and the Lore crates it uses."""
    workspace = tomllib.loads((ROOT / "Cargo.toml").read_text())
    found = {}
    for folder in workspace["workspace"]["members"]:
        manifest = tomllib.loads((ROOT / folder / "Cargo.toml").read_text())
        uses = {name for name in manifest.get("dependencies", {}) if name.startswith("lore-")}
        found[folder] = (manifest["package"]["name"], uses)
    return found


def table() -> dict[str, tuple[str, set[str]]]:
    """Each row of the table: its crate name and the Lore crates it names."""
    text = DOC.read_text()
    if HEADING not in text:
        sys.exit(f"{DOC.relative_to(ROOT)}: no section {HEADING!r}")
    section = text.split(HEADING, 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        matched = ROW.match(line)
        if matched:
            folder, name, may_import = matched.groups()
            rows[folder] = (name, set(CRATE.findall(may_import)))
    return rows


def main() -> int:
    actual, documented = members(), table()
    problems = []
    for folder in sorted(actual.keys() - documented.keys()):
        problems.append(f"crate {actual[folder][0]} ({folder}/) has no row in the table")
    for folder in sorted(documented.keys() - actual.keys()):
        problems.append(f"the table has a row for {folder}/, which is no workspace member")
    for folder in sorted(actual.keys() & documented.keys()):
        (name, uses), (row_name, named) = actual[folder], documented[folder]
        if name != row_name:
            problems.append(f"{folder}/ is {name}, and the table calls it {row_name}")
        for missing in sorted(uses - named):
            problems.append(f"{name} depends on {missing}, which its row's 'may import' does not name")
        for extra in sorted(named - uses):
            problems.append(f"{name}'s row names {extra}, which it does not depend on")
    if problems:
        print(f"{DOC.relative_to(ROOT)}, {HEADING!r}:", file=sys.stderr)
        for problem in problems:
            print(f"  {problem}", file=sys.stderr)
        return 1
    print(f"the crate table names all {len(actual)} crates and what each imports")
    return 0


if __name__ == "__main__":
    sys.exit(main())
