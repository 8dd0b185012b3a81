#!/usr/bin/env python3
"""Fails when a crate's top-level modules import each other in a circle.

Within a crate, each top-level module (a file `src/x.rs` or a folder
`src/x/`) is a room; a reference `crate::y` (in a `use` or a path) from
anywhere in room x is an arrow x -> y. Rooms must form layers: no arrow may
lead back to a room that reaches it. The compiler allows such circles, and
they make a crate impossible to read from the bottom up
(docs/ARCHITECTURE.md), so `make lint` runs this over the crates listed.

Usage: check-module-circles.py [CRATE_DIR...]   (default: every workspace member)
"""

import re
import sys
import tomllib
from pathlib import Path

REFERENCE = re.compile(r"\bcrate::([a-z_][a-z0-9_]*)")
# A grouped import, `use crate::{a, b::{c, d}}`: each first segment at the
# group's own level is an arrow.
GROUPED = re.compile(r"\bcrate::\{")
COMMENT = re.compile(r"//[^\n]*")


def room_of(source: Path, root: Path) -> str | None:
    parts = source.relative_to(root).parts
    if parts in (("lib.rs",), ("main.rs",)):
        return None
    # A module's tests may use what stands above it (a rehearsal to score
    # what the module plans); they are not part of the layering.
    if "tests" in parts[:-1] or parts[-1] == "tests.rs":
        return None
    return parts[0].removesuffix(".rs")


def first_segments(text: str, start: int) -> set[str]:
    """The first path segment of each item of the group opening at `start`
    (just after its `{`), nested groups skipped."""
    segments, item, depth = set(), "", 0
    for character in text[start:]:
        if character == "{":
            depth += 1
        elif character == "}":
            if depth == 0:
                break
            depth -= 1
        elif character == "," and depth == 0:
            segments.add(item.strip().split("::")[0])
            item = ""
        elif depth == 0:
            item += character
    segments.add(item.strip().split("::")[0])
    return {segment for segment in segments if segment}


def arrows(root: Path) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for source in sorted(root.rglob("*.rs")):
        room = room_of(source, root)
        if room is None:
            continue
        text = COMMENT.sub("", source.read_text())
        targets = set(REFERENCE.findall(text))
        for opening in GROUPED.finditer(text):
            targets.update(first_segments(text, opening.end()))
        graph.setdefault(room, set()).update(target for target in targets if target != room)
    rooms = set(graph)
    return {room: {target for target in targets if target in rooms} for room, targets in graph.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one room (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(room: str) -> None:
        index[room] = low[room] = len(index)
        stack.append(room)
        on_stack.add(room)
        for target in sorted(graph.get(room, ())):
            if target not in index:
                visit(target)
                low[room] = min(low[room], low[target])
            elif target in on_stack:
                low[room] = min(low[room], index[target])
        if low[room] == index[room]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == room:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for room in sorted(graph):
        if room not in index:
            visit(room)
    return found


def main() -> int:
    failed = False
    crates = sys.argv[1:] or tomllib.loads(Path("Cargo.toml").read_text())["workspace"]["members"]
    for crate in crates:
        root = Path(crate) / "src"
        if not root.is_dir():
            print(f"{crate}: no src folder; name each crate's folder")
            return 2
        graph = arrows(root)
        for circle in circles(graph):
            failed = True
            ties = [f"{a} -> {b}" for a in circle for b in sorted(graph[a]) if b in circle]
            print(f"{crate}: modules {', '.join(circle)} import each other in a circle ({'; '.join(ties)})")
    if not failed:
        print(f"no module circle in {len(crates)} crates")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
