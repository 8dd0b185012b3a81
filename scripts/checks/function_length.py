#!/usr/bin/env python3
"""Fails on a production Rust function longer than 80 lines.

A reader should hold a function whole. A function may be longer only when
a comment in the six lines above it begins `One piece:` and says why it
must stay whole, or while it is listed in `scripts/checks/long_functions.txt`
(`path name lines`): functions written before this check, each to be
split, none allowed to grow. Tests, benches and examples are not
production code: files under `tests/`, `benches/`, `examples/`, files
named `tests.rs` and `#[cfg(test)]` modules are skipped.

The reading is by lines and braces (strings, characters and line comments
set aside), which is enough for rustfmt's layout.

Usage: scripts/checks/function_length.py [REPO_ROOT]
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path, PurePosixPath

LIMIT = 80
FN = re.compile(
    r'^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?(?:extern\s+"[^"]*"\s+)?fn\s+(\w+)'
)
TEST_MODULE = re.compile(r"\s*#\[cfg\(test\)\]")
NOT_PRODUCTION = {"tests", "benches", "examples", "fuzz"}


def code(line: str) -> str:
    """The line without its strings, characters and line comment."""
    line = re.sub(r'"(?:\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(?:\\.|[^'\\])'", "''", line)
    return re.sub(r"//.*$", "", line)


def body_end(lines: list[str], start: int) -> int | None:
    """The line that closes the function starting at `start`; None for a
    declaration without a body."""
    depth = 0
    opened = False
    for index in range(start, len(lines)):
        text = code(lines[index])
        if not opened and ";" in text and "{" not in text:
            return None
        for character in text:
            if character == "{":
                depth += 1
                opened = True
            elif character == "}":
                depth -= 1
        if opened and depth == 0:
            return index
    return None


def long_functions(path: Path) -> list[tuple[str, int, int, bool]]:
    """(name, first line, length, has a reason) of each long function."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found = []
    depth = 0
    test_depth = None
    pending_test = False
    for index, line in enumerate(lines):
        if test_depth is None and TEST_MODULE.match(line):
            pending_test = True
        match = FN.match(line)
        if match and test_depth is None and not pending_test:
            end = body_end(lines, index)
            if end is not None and end - index + 1 > LIMIT:
                above = "\n".join(lines[max(0, index - 6) : index])
                found.append((match.group(1), index + 1, end - index + 1, "One piece:" in above))
        opened_here = False
        for character in code(line):
            if character == "{":
                if pending_test and not opened_here:
                    test_depth = depth
                    pending_test = False
                opened_here = True
                depth += 1
            elif character == "}":
                depth -= 1
                if test_depth is not None and depth == test_depth:
                    test_depth = None
        if pending_test and re.match(r"\s*(?:pub\s+)?mod\s+\w+\s*;", line):
            pending_test = False
    return found


def main() -> int:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[2])
    files = subprocess.run(["git", "ls-files", "*.rs"], cwd=root, capture_output=True, text=True, check=True)
    listed: dict[tuple[str, str], int] = {}
    allowlist = root / "scripts" / "checks" / "long_functions.txt"
    if allowlist.exists():
        for line in allowlist.read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.startswith("#"):
                path, name, lines = line.split()
                listed[(path, name)] = int(lines)
    problems = []
    seen = set()
    for name in files.stdout.split():
        relative = PurePosixPath(name)
        if NOT_PRODUCTION & set(relative.parts) or relative.name in ("tests.rs", "build.rs"):
            continue
        for function, line, length, reason in long_functions(root / name):
            seen.add((name, function))
            if reason:
                continue
            ceiling = listed.get((name, function))
            if ceiling is None:
                problems.append(
                    f"{name}:{line}: {function} is {length} lines (at most {LIMIT}); split it, or say above it "
                    f"why it is `One piece:`"
                )
            elif length > ceiling:
                problems.append(
                    f"{name}:{line}: {function} grew to {length} lines; scripts/checks/long_functions.txt lets it keep "
                    f"{ceiling} until it is split"
                )
    stale = sorted(f"{path} {function}" for path, function in listed if (path, function) not in seen)
    problems.extend(f"scripts/checks/long_functions.txt lists {entry}, which is no longer long: remove the line" for entry in stale)
    if problems:
        print("Functions a reader cannot hold whole:", file=sys.stderr)
        for problem in problems:
            print(f"  {problem}", file=sys.stderr)
        return 1
    if listed:
        print(f"no production function over {LIMIT} lines but the {len(listed)} listed to be split")
    else:
        print(f"no production function over {LIMIT} lines without a reason")
    return 0


if __name__ == "__main__":
    sys.exit(main())
