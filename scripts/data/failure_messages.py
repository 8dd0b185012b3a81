#!/usr/bin/env python3
"""Builds Lore's development set for failure grouping (tests/data/failures).

Failure messages of the kinds agents' checks print: test runners (pytest,
jest, go test, cargo test), compilers and type checkers (rustc, tsc, mypy, go,
javac), linters (eslint, ruff, clippy), package managers (npm, pip, cargo),
builds (make, docker), stack traces and connection errors. Each template is
one true group (EventId); its variables are drawn at random, and many change
the message's token count (lists of files or versions, test names with
spaces, shell commands, qualified names), which is what a grouping that
compares position by position gets wrong.

Written in LogHub's structured format (LineId, Content, EventId,
EventTemplate), so `lore eval grouping` reads it as it reads LogHub.
Seeded: a rebuild writes the same file.

Usage: scripts/data/failure_messages.py [--out FILE] [--lines N]
"""

import argparse
import csv
import random
import string
from pathlib import Path

SEED = 20261124

WORDS = ["user", "order", "cart", "invoice", "session", "token", "payment", "report", "queue", "cache", "index",
         "parser", "router", "client", "server", "schema", "config", "worker", "export", "import", "search"]
TYPES = ["string", "number", "boolean", "undefined", "null", "User", "Order[]", "Promise<void>", "Record<string, any>",
         "i32", "u64", "String", "&str", "Vec<u8>", "Option<String>", "int", "str", "list[str]", "dict[str, int]"]
PACKAGES = ["requests", "numpy", "pandas", "flask", "django", "pydantic", "left-pad", "react", "lodash", "express",
            "serde", "tokio", "axum", "typescript", "eslint", "webpack", "jest", "pytest", "sqlalchemy"]


def ident(rng):
    return rng.choice(WORDS) + rng.choice(["", "_" + rng.choice(WORDS), rng.choice(WORDS).capitalize()])


def path(rng, ext):
    depth = rng.randint(1, 4)
    parts = [rng.choice(["src", "lib", "app", "pkg", "internal", "components", "tests", "server"]) for _ in range(depth)]
    return "/".join(parts + [ident(rng) + ext])


def sentence(rng, low, high):
    return " ".join(rng.choice(WORDS + ["returns", "when", "the", "is", "empty", "with", "a", "valid", "handles",
                                        "rejects", "after", "retry"]) for _ in range(rng.randint(low, high)))


def version(rng):
    return f"{rng.randint(0, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 20)}"


def templates():
    """(event id, template text, generator)."""
    return [
        ("pytest-assert", "FAILED <*> - AssertionError: assert <*> == <*>",
         lambda r: f"FAILED tests/test_{ident(r)}.py::test_{ident(r)} - AssertionError: assert {r.randint(0, 999)} == {r.randint(0, 999)}"),
        ("pytest-keyerror", "E KeyError: <*>",
         lambda r: f"E       KeyError: '{ident(r)}'"),
        ("py-module", "ModuleNotFoundError: No module named <*>",
         lambda r: f"ModuleNotFoundError: No module named '{r.choice(PACKAGES)}'"),
        ("py-attr", "AttributeError: <*> object has no attribute <*>",
         lambda r: f"AttributeError: '{r.choice(['NoneType', 'dict', 'list', 'str', ident(r).capitalize()])}' object has no attribute '{ident(r)}'"),
        ("py-typeerror-args", "TypeError: <*> takes <*> positional arguments but <*> were given",
         lambda r: f"TypeError: {ident(r)}() takes {r.randint(1, 4)} positional arguments but {r.randint(5, 8)} were given"),
        ("pip-version", "ERROR: Could not find a version that satisfies the requirement <*> (from versions: <*>)",
         lambda r: f"ERROR: Could not find a version that satisfies the requirement {r.choice(PACKAGES)}=={version(r)} (from versions: "
                   + ", ".join(version(r) for _ in range(r.randint(0, 9))) + ")"),
        ("pip-conflict", "ERROR: Cannot install <*> because these package versions have conflicting dependencies.",
         lambda r: "ERROR: Cannot install " + " and ".join(f"{p}=={version(r)}" for p in r.sample(PACKAGES, r.randint(1, 3)))
                   + " because these package versions have conflicting dependencies."),
        ("jest-fail", "● <*> › <*>",
         lambda r: f"● {ident(r).capitalize()} › {sentence(r, 2, 8)}"),
        ("jest-expect", "expect(received).toBe(expected) // Object.is equality Expected: <*> Received: <*>",
         lambda r: f"expect(received).toBe(expected) // Object.is equality Expected: {r.randint(0, 99)} Received: {r.randint(100, 999)}"),
        ("go-test-fail", "--- FAIL: <*> (<*>)",
         lambda r: f"--- FAIL: Test{ident(r).capitalize()} ({r.random() * 3:.2f}s)"),
        ("go-undefined", "<*> undefined: <*>",
         lambda r: f"./{path(r, '.go')}:{r.randint(1, 400)}:{r.randint(1, 80)}: undefined: {ident(r)}"),
        ("cargo-test-panic", "thread <*> panicked at <*>",
         lambda r: f"thread '{ident(r)}::tests::{ident(r)}' panicked at {path(r, '.rs')}:{r.randint(1, 900)}:{r.randint(1, 80)}:"),
        ("rustc-mismatch", "error[E0308]: mismatched types expected <*> found <*>",
         lambda r: f"error[E0308]: mismatched types expected `{r.choice(TYPES)}`, found `{r.choice(TYPES)}`"),
        ("rustc-borrow", "error[E0502]: cannot borrow <*> as mutable because it is also borrowed as immutable",
         lambda r: f"error[E0502]: cannot borrow `{r.choice(['self', ''])}{'.' if r.random() < 0.5 else ''}{ident(r)}` as mutable because it is also borrowed as immutable"),
        ("cargo-compile", "error: could not compile <*> (<*>) due to <*> previous errors",
         lambda r: f"error: could not compile `{ident(r).replace('_', '-')}` ({r.choice(['lib', 'bin', 'lib test', 'test'])}) due to {r.randint(2, 40)} previous errors"),
        ("clippy-unused", "warning: unused variable: <*>",
         lambda r: f"warning: unused variable: `{ident(r)}`"),
        ("tsc-assign", "error TS2322: Type <*> is not assignable to type <*>.",
         lambda r: f"{path(r, '.ts')}({r.randint(1, 300)},{r.randint(1, 60)}): error TS2322: Type '{r.choice(TYPES)}' is not assignable to type '{r.choice(TYPES)}'."),
        ("tsc-property", "error TS2339: Property <*> does not exist on type <*>.",
         lambda r: f"{path(r, '.tsx')}({r.randint(1, 300)},{r.randint(1, 60)}): error TS2339: Property '{ident(r)}' does not exist on type '{r.choice(TYPES)}'."),
        ("mypy-arg", "error: Argument <*> to <*> has incompatible type <*>; expected <*> [arg-type]",
         lambda r: f"{path(r, '.py')}:{r.randint(1, 400)}: error: Argument {r.randint(1, 4)} to \"{ident(r)}\" has incompatible type \"{r.choice(TYPES)}\"; expected \"{r.choice(TYPES)}\"  [arg-type]"),
        ("eslint-unused", "error <*> is defined but never used no-unused-vars",
         lambda r: f"{path(r, '.js')}:{r.randint(1, 300)}:{r.randint(1, 60)}  error  '{ident(r)}' is defined but never used  no-unused-vars"),
        ("ruff", "<*> F401 <*> imported but unused",
         lambda r: f"{path(r, '.py')}:{r.randint(1, 40)}:{r.randint(1, 8)}: F401 [*] `{r.choice(PACKAGES)}.{ident(r)}` imported but unused"),
        ("npm-404", "npm ERR! 404 Not Found - GET <*> - Not found",
         lambda r: f"npm ERR! 404 Not Found - GET https://registry.npmjs.org/{r.choice(PACKAGES)}-{ident(r)} - Not found"),
        ("npm-eresolve", "npm ERR! ERESOLVE unable to resolve dependency tree",
         lambda r: "npm ERR! ERESOLVE unable to resolve dependency tree"),
        ("npm-peer", "npm ERR! Could not resolve dependency: npm ERR! peer <*> from <*>",
         lambda r: f"npm ERR! Could not resolve dependency: npm ERR! peer {r.choice(PACKAGES)}@\"^{version(r)}\" from {r.choice(PACKAGES)}@{version(r)}"),
        ("make-error", "make: *** [<*>] Error <*>",
         lambda r: f"make: *** [{r.choice(['Makefile', 'build.mk'])}:{r.randint(1, 90)}: {r.choice(['test', 'build', 'lint', 'all', 'check'])}] Error {r.randint(1, 2)}"),
        ("docker-solve", "ERROR: failed to solve: process <*> did not complete successfully: exit code: <*>",
         lambda r: "ERROR: failed to solve: process \"/bin/sh -c " + " ".join(r.choice(["apt-get", "install", "-y", "npm", "ci", "pip", "install", "--no-cache-dir", "-r", "requirements.txt", "make", "build"]) for _ in range(r.randint(1, 7)))
                   + f"\" did not complete successfully: exit code: {r.randint(1, 127)}"),
        ("java-npe", "Exception in thread <*> java.lang.NullPointerException: Cannot invoke <*> because <*> is null",
         lambda r: f"Exception in thread \"{r.choice(['main', 'pool-1-thread-3', 'http-nio-8080-exec-2'])}\" java.lang.NullPointerException: Cannot invoke \"{ident(r).capitalize()}.{ident(r)}()\" because \"{ident(r)}\" is null"),
        ("java-at", "at <*>",
         lambda r: f"\tat com.acme.{ident(r)}.{ident(r).capitalize()}.{ident(r)}({ident(r).capitalize()}.java:{r.randint(1, 900)})"),
        ("javac-symbol", "error: cannot find symbol",
         lambda r: f"{path(r, '.java')}:{r.randint(1, 400)}: error: cannot find symbol"),
        ("conn-refused", "Error: connect ECONNREFUSED <*>",
         lambda r: f"Error: connect ECONNREFUSED 127.0.0.1:{r.choice([5432, 6379, 3000, 8080, 27017])}"),
        ("pg-connect", "psycopg2.OperationalError: could not connect to server: Connection refused Is the server running on host <*> (<*>) and accepting TCP/IP connections on port <*>?",
         lambda r: f"psycopg2.OperationalError: could not connect to server: Connection refused Is the server running on host \"{r.choice(['localhost', 'db', 'postgres.internal'])}\" ({r.choice(['127.0.0.1', '::1', '10.0.3.7'])}) and accepting TCP/IP connections on port {r.choice([5432, 5433])}?"),
        ("timeout", "TimeoutError: <*> timed out after <*>",
         lambda r: f"TimeoutError: {r.choice(['Navigation', 'Request', 'waitForSelector'])} timed out after {r.randint(1, 60) * 1000}ms"),
        ("missing-files", "error: these files are missing from the build: <*>",
         lambda r: "error: these files are missing from the build: " + " ".join(path(r, r.choice(['.rs', '.ts', '.py'])) for _ in range(r.randint(1, 5)))),
        ("git-conflict", "CONFLICT (content): Merge conflict in <*>",
         lambda r: f"CONFLICT (content): Merge conflict in {path(r, r.choice(['.rs', '.ts', '.py', '.md']))}"),
        ("oom", "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory",
         lambda r: "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory"),
        ("permission", "PermissionError: [Errno 13] Permission denied: <*>",
         lambda r: f"PermissionError: [Errno 13] Permission denied: '/{path(r, r.choice(['.log', '.lock', '']))}'"),
        ("assert-msg", "AssertionError: <*>",
         lambda r: f"AssertionError: {sentence(r, 3, 10)}"),
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(Path(__file__).resolve().parents[2]
                                             / "tests/data/failures/failures_2k.log_structured.csv"))
    parser.add_argument("--lines", type=int, default=2000)
    args = parser.parse_args()
    rng = random.Random(SEED)
    kinds = templates()
    # Uneven sizes, as in real logs: a few kinds are most of the lines.
    weights = [rng.choice([1, 1, 2, 3, 5, 8]) for _ in kinds]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["LineId", "Content", "EventId", "EventTemplate"])
        for line in range(1, args.lines + 1):
            event, template, make = rng.choices(kinds, weights)[0]
            writer.writerow([line, make(rng), event, template])
    print(f"{args.lines} lines of {len(kinds)} kinds in {out}")


if __name__ == "__main__":
    main()
