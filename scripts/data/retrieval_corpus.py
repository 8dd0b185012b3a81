#!/usr/bin/env python3
"""Builds the retrieval development set from the Python standard library.

Real code with natural-language queries, from registry material only: the
`.py` files of Debian's libpython3.11-stdlib and libpython3.11-minimal
packages (pinned in third-party.toml), read from the packages without
installing them. The method is CodeSearchNet's (Husain et al., 2019): a
function's documentation is its query, and the function with its docstring
removed is the document the query must find.

- corpus.jsonl: `{"_id", "title", "text"}` per function: `_id` is
  `<module path>:<qualified name>`, `title` is empty (as in BEIR's code
  sets), `text` is the function's source, dedented, without its docstring.
  Every function of the library outside its test suites, of 3 to 60 lines
  once the docstring is gone, each text once.
- queries.jsonl: `{"_id", "text"}`: the first line of the docstring of 300
  functions drawn with a fixed seed among those whose first line is a
  sentence of 3 to 24 words that no other function shares.
- qrels/dev.tsv: `query-id, corpus-id, score`: the one function each query
  came from.

Written into `$LORE_CACHE_DIR/data/retrieval/python-stdlib/` (the ignored
cache, with the library's licence beside it): the set-up (`make tools`)
builds it, and the tests and benchmarks read it there. The same packages
give the same files, byte for byte.

Usage:
    python3 scripts/data/retrieval_corpus.py [--out DIR] [--queries N]
"""

import argparse
import ast
import json
import random
import re
import sys
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "setup"))
import third_party  # noqa: E402

PACKAGES = ["python3.11-minimal", "python3.11-stdlib"]
LIBRARY = "usr/lib/python3.11/"
LICENCE = ("python3.11-stdlib", "usr/lib/python3.11/LICENSE.txt")
# The library's own tests and demos are not what a project's code looks
# like, and the codec tables repeat one function hundreds of times.
EXCLUDED = re.compile(r"(^|/)(test|tests|idle_test|turtledemo|encodings|__phello__)/|^_sysconfigdata|^config-3")
SEED = 40
MIN_LINES, MAX_LINES = 3, 60
MIN_WORDS, MAX_WORDS = 3, 24


def sources() -> dict[str, str]:
    """Module path (relative to the library) -> source, from both packages."""
    found = {}
    for package_id in PACKAGES:
        path = third_party.package_file(package_id)
        wanted = lambda name: name.startswith(LIBRARY) and name.endswith(".py")  # noqa: E731
        for name, data in third_party.read_all(path, wanted).items():
            module = name[len(LIBRARY):]
            if not EXCLUDED.search(module):
                found[module] = data.decode("utf-8", errors="replace")
    return found


def functions(module: str, source: str):
    """(qualified name, code without docstring, docstring) of each function."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return
    lines = source.splitlines()

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                yield name, child
                yield from visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                yield from visit(child, f"{prefix}{child.name}.")

    for name, node in visit(tree, ""):
        docstring = ast.get_docstring(node, clean=True)
        first, last = node.lineno, node.end_lineno
        body = lines[first - 1:last]
        if docstring is not None:
            doc = node.body[0]
            body = lines[first - 1:doc.lineno - 1] + lines[doc.end_lineno:last]
            # A docstring on the `def` line itself leaves the header alone.
            if doc.lineno == first:
                continue
        code = textwrap.dedent("\n".join(body)).strip("\n")
        statements = [line for line in code.splitlines()[1:] if line.strip() and not line.strip().startswith("#")]
        if not statements or all(line.strip() in ("pass", "...") for line in statements):
            continue
        yield name, code, docstring


def first_line(docstring: str | None) -> str | None:
    """The docstring's first line when it reads as a sentence of a few words."""
    if not docstring:
        return None
    line = docstring.strip().splitlines()[0].strip()
    words = line.split()
    if not MIN_WORDS <= len(words) <= MAX_WORDS:
        return None
    # C-style signatures ("f(x) -> y") and doctest lines are not questions.
    if "->" in line or line.startswith(">>>") or re.match(r"^[\w.]+\(", line):
        return None
    return line


def build(out: Path, query_count: int) -> None:
    documents, candidates, seen_texts = [], [], set()
    for module, source in sorted(sources().items()):
        for name, code, docstring in functions(module, source):
            count = code.count("\n") + 1
            if not MIN_LINES <= count <= MAX_LINES or code in seen_texts:
                continue
            seen_texts.add(code)
            identifier = f"{module}:{name}"
            documents.append({"_id": identifier, "title": "", "text": code})
            query = first_line(docstring)
            if query:
                candidates.append((identifier, query))
    # A query two functions share has no one answer.
    uses: dict[str, int] = {}
    for _, query in candidates:
        uses[query.lower()] = uses.get(query.lower(), 0) + 1
    candidates = [(identifier, query) for identifier, query in candidates if uses[query.lower()] == 1]
    chosen = sorted(random.Random(SEED).sample(candidates, query_count))

    (out / "qrels").mkdir(parents=True, exist_ok=True)
    with open(out / "corpus.jsonl", "w", encoding="utf-8") as handle:
        for document in documents:
            handle.write(json.dumps(document, ensure_ascii=False) + "\n")
    with open(out / "queries.jsonl", "w", encoding="utf-8") as handle:
        for index, (_, query) in enumerate(chosen):
            handle.write(json.dumps({"_id": f"q{index:03d}", "text": query}, ensure_ascii=False) + "\n")
    with open(out / "qrels" / "dev.tsv", "w", encoding="utf-8") as handle:
        handle.write("query-id\tcorpus-id\tscore\n")
        for index, (identifier, _) in enumerate(chosen):
            handle.write(f"q{index:03d}\t{identifier}\t1\n")
    package_id, member = LICENCE
    (out / "LICENSE.txt").write_bytes(third_party.read_member(third_party.package_file(package_id), member))
    print(f"{out}: {len(documents)} functions, {len(chosen)} queries of {len(candidates)} candidates")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=third_party.cache_dir() / "data" / "retrieval" / "python-stdlib")
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()
    try:
        build(args.out, args.queries)
    except third_party.FetchError as error:
        print(error, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
