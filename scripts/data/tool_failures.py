#!/usr/bin/env python3
"""Builds a development set of real tool failures for grouping
(tests/data/tool-failures): real compilers, test runners, interpreters,
shells, git and make, run on broken inputs, and the error lines they print.

Each kind of broken input (an undeclared variable for cc, a missing key for
Python, a failing assertion for cargo test, ...) is written many times with
identifiers, files, numbers and values drawn at random, and the tool is run
on it for real. The lines it prints that report the failure (found by the
tool's own markers: `error:`, `Error:`, `FAILED`, `fatal:`, `panicked at`,
`*** `, ...) become messages; a message's true group is its kind and the
marker that found it, so every line of one kind and one marker is one
template, whatever the values in it.

Written in LogHub's structured format (LineId, Content, EventId,
EventTemplate = the group's name), so `lore eval grouping` reads it as it
reads LogHub. Seeded: with the same tool versions, a rebuild writes the same
file (the versions used are recorded in tests/data/tool-failures/README.md).

Needs: rustc, cc, python3 with pytest, node, bash, git, make, javac.

Usage: scripts/data/tool_failures.py [--out FILE] [--runs N]
"""

import argparse
import csv
import os
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path

SEED = 20261125

WORDS = ["user", "order", "cart", "invoice", "session", "payment", "report", "queue", "cache", "index", "parser",
         "router", "client", "server", "schema", "config", "worker", "export", "ledger", "budget", "widget", "token",
         "price", "total", "count", "limit", "offset", "buffer", "stream", "record"]


def ident(rng, style="snake"):
    first, second = rng.choice(WORDS), rng.choice(WORDS)
    if style == "camel":
        return first + second.capitalize()
    if style == "pascal":
        return first.capitalize() + second.capitalize()
    return f"{first}_{second}" if rng.random() < 0.7 else first


def run(command, cwd, stdin=None, timeout=60):
    done = subprocess.run(command, cwd=cwd, input=stdin, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "LC_ALL": "C", "NO_COLOR": "1", "TERM": "dumb"})
    return done.stdout + "\n" + done.stderr


# Each kind: (name, function that writes the input in `dir` and returns the
# command to run, markers: list of (marker name, regex)). A line matching a
# marker's regex is a message of group `<kind>/<marker>`, or of the group a
# marker named `/group` names.

def rust_unknown_value(rng, dir):
    name = ident(rng)
    Path(dir, "main.rs").write_text(f"fn main() {{\n    let {ident(rng)} = {rng.randint(1, 999)};\n    println!(\"{{}}\", {name});\n}}\n")
    return ["rustc", "--edition", "2021", "main.rs", "-o", "main"]


def rust_mismatched(rng, dir):
    kind = rng.choice(["u32", "i64", "usize", "bool", "f64"])
    Path(dir, "lib.rs").write_text(f"pub fn {ident(rng)}() -> {kind} {{\n    \"{rng.choice(WORDS)}\"\n}}\n")
    return ["rustc", "--edition", "2021", "--crate-type", "lib", "lib.rs"]


def rust_panic(rng, dir):
    test = ident(rng)
    left, right = rng.randint(0, 99), rng.randint(100, 999)
    pad = "\n" * rng.randint(0, 20)
    Path(dir, "t.rs").write_text(
        f"#[cfg(test)]\nmod tests {{{pad}\n    #[test]\n    fn {test}() {{\n        assert_eq!({left}, {right});\n    }}\n}}\n")
    run(["rustc", "--edition", "2021", "--test", "t.rs", "-o", "t"], dir)
    return ["./t"] if Path(dir, "t").exists() else ["false"]


def c_undeclared(rng, dir):
    name = ident(rng)
    pad = "\n" * rng.randint(0, 30)
    Path(dir, f"{rng.choice(WORDS)}.c").write_text(f"{pad}int main(void) {{\n    return {name} + {rng.randint(1, 9)};\n}}\n")
    return ["sh", "-c", "cc -c *.c"]


def c_missing_header(rng, dir):
    Path(dir, "main.c").write_text(f"#include \"{rng.choice(WORDS)}_{rng.choice(WORDS)}.h\"\nint main(void) {{ return 0; }}\n")
    return ["cc", "-c", "main.c"]


def python_key(rng, dir):
    key = ident(rng)
    Path(dir, f"{rng.choice(WORDS)}.py").write_text(f"data = {{'{rng.choice(WORDS)}': 1}}\nprint(data['{key}'])\n")
    return ["sh", "-c", "python3 *.py"]


def python_name(rng, dir):
    Path(dir, "job.py").write_text(f"def run():\n    return {ident(rng)} * {rng.randint(2, 9)}\n\nrun()\n")
    return ["python3", "job.py"]


def python_import(rng, dir):
    Path(dir, "app.py").write_text(f"import {rng.choice(WORDS)}{rng.choice(['_utils', 'lib', '_client', 'x'])}\n")
    return ["python3", "app.py"]


def python_attribute(rng, dir):
    attr = ident(rng)
    Path(dir, "app.py").write_text(f"value = None\nvalue.{attr}()\n")
    return ["python3", "app.py"]


def pytest_assert(rng, dir):
    test = "test_" + ident(rng)
    left, right = rng.randint(0, 50), rng.randint(51, 500)
    Path(dir, f"test_{rng.choice(WORDS)}.py").write_text(f"def {test}():\n    assert {left} == {right}\n")
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rf"]


def node_reference(rng, dir):
    Path(dir, "index.js").write_text(f"const x = {rng.randint(1, 99)};\nconsole.log({ident(rng, 'camel')}(x));\n")
    return ["node", "index.js"]


def node_undefined_property(rng, dir):
    name = ident(rng, "camel")
    Path(dir, "index.js").write_text(f"const {name} = undefined;\nconsole.log({name}.{ident(rng, 'camel')});\n")
    return ["node", "index.js"]


def node_type(rng, dir):
    obj = ident(rng, "camel")
    Path(dir, "index.js").write_text(f"const {obj} = {{}};\n{obj}.{ident(rng, 'camel')}();\n")
    return ["node", "index.js"]


def bash_not_found(rng, dir):
    return ["bash", "-c", f"{rng.choice(WORDS)}{rng.choice(['ctl', '-cli', 'd', 'x'])} --{rng.choice(WORDS)}"]


def bash_no_file(rng, dir):
    return ["bash", "-c", f"cat {rng.choice(WORDS)}/{rng.choice(WORDS)}.{rng.choice(['txt', 'json', 'yaml', 'log'])}"]


def bash_syntax(rng, dir):
    lines = [f"echo {rng.choice(WORDS)}" for _ in range(rng.randint(1, 12))]
    Path(dir, "run.sh").write_text("\n".join(lines) + "\nif true; then\n  echo x\n")
    return ["bash", "-n", "run.sh"]


def git_pathspec(rng, dir):
    run(["git", "init", "-q"], dir)
    return ["git", "checkout", f"{rng.choice(['feature', 'fix', 'chore'])}/{rng.choice(WORDS)}-{rng.randint(1, 999)}"]


def git_not_repo(rng, dir):
    return ["git", "-C", dir, "log", "-n", str(rng.randint(1, 20))]


def git_revision(rng, dir):
    run(["git", "init", "-q"], dir)
    return ["git", "show", f"v{rng.randint(0, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 9)}"]


def make_no_rule(rng, dir):
    Path(dir, "Makefile").write_text("all:\n\t@true\n")
    return ["make", f"{rng.choice(WORDS)}{rng.choice(['', '-all', '-test'])}"]


def make_recipe(rng, dir):
    target = rng.choice(["test", "build", "lint", "check", "deploy"])
    pad = "".join(f"# {rng.choice(WORDS)}\n" for _ in range(rng.randint(0, 8)))
    Path(dir, "Makefile").write_text(f"{pad}{target}:\n\t@exit {rng.randint(1, 3)}\n")
    return ["make", target]


def javac_symbol(rng, dir):
    name = ident(rng, "pascal")
    Path(dir, f"{name}.java").write_text(f"public class {name} {{\n  int f() {{ return {ident(rng, 'camel')}; }}\n}}\n")
    return ["sh", "-c", "javac *.java"]


KINDS = [
    ("rustc-unknown-value", rust_unknown_value, [("error", r"^error\[E\d+\]: .*"), ("/rustc/location", r"^\s*--> .*")]),
    ("rustc-mismatched", rust_mismatched, [("error", r"^error\[E\d+\]: .*"), ("/rustc/location", r"^\s*--> .*")]),
    ("cargo-test-panic", rust_panic, [("panicked", r"^thread '.*' panicked at .*"), ("failed", r"^test .* \.\.\. FAILED$")]),
    ("cc-undeclared", c_undeclared, [("error", r"^.*\.c:\d+:\d+: error: .*")]),
    ("cc-missing-header", c_missing_header, [("error", r"^.*\.c:\d+:\d+: fatal error: .*")]),
    ("python-keyerror", python_key, [("error", r"^KeyError: .*"), ("frame", r'^\s*File ".*", line \d+, in .*')]),
    ("python-nameerror", python_name, [("error", r"^NameError: .*")]),
    ("python-import", python_import, [("error", r"^ModuleNotFoundError: .*")]),
    ("python-attribute", python_attribute, [("error", r"^AttributeError: .*")]),
    ("pytest-assert", pytest_assert, [("failed", r"^FAILED .*"), ("assert", r"^E\s+assert .*")]),
    ("node-reference", node_reference, [("error", r"^ReferenceError: .*")]),
    ("node-undefined", node_undefined_property, [("error", r"^TypeError: Cannot read properties of undefined .*")]),
    ("node-type", node_type, [("error", r"^TypeError: .* is not a function")]),
    ("bash-not-found", bash_not_found, [("error", r"^bash: .*command not found$")]),
    ("bash-no-file", bash_no_file, [("error", r"^cat: .*No such file or directory$")]),
    ("bash-syntax", bash_syntax, [("error", r"^run\.sh: line \d+: syntax error.*")]),
    ("git-pathspec", git_pathspec, [("error", r"^error: pathspec .*")]),
    ("git-not-repo", git_not_repo, [("fatal", r"^fatal: not a git repository.*")]),
    ("git-revision", git_revision, [("fatal", r"^fatal: ambiguous argument .*")]),
    ("make-no-rule", make_no_rule, [("error", r"^make: \*\*\* No rule to make target .*")]),
    ("make-recipe", make_recipe, [("error", r"^make: \*\*\* \[.*\] Error \d+$")]),
    ("javac-symbol", javac_symbol, [("error", r"^.*\.java:\d+: error: .*"), ("symbol", r"^\s*symbol:\s+.*")]),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(Path(__file__).resolve().parents[2]
                                             / "tests/data/tool-failures/tool_failures.log_structured.csv"))
    parser.add_argument("--runs", type=int, default=60, help="runs of each kind")
    args = parser.parse_args()
    rng = random.Random(SEED)
    rows = []
    for kind, write, markers in KINDS:
        compiled = [(name, re.compile(pattern)) for name, pattern in markers]
        found = 0
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory() as dir:
                command = write(rng, dir)
                output = run(command, dir)
            for line in output.splitlines():
                line = line.rstrip()
                for name, pattern in compiled:
                    if pattern.match(line):
                        # A marker named "/group" names a group shared by
                        # kinds: rustc's `--> file:line:col` is one line
                        # whatever the error above it.
                        group = name[1:] if name.startswith("/") else f"{kind}/{name}"
                        rows.append((line.strip(), group))
                        found += 1
                        break
        print(f"{kind}: {found} lines from {args.runs} runs", file=sys.stderr)
        if found == 0:
            sys.exit(f"{kind}: the tool printed no line its markers know; is it installed?")
    rng.shuffle(rows)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["LineId", "Content", "EventId", "EventTemplate"])
        for number, (content, group) in enumerate(rows, 1):
            writer.writerow([number, content, group, group])
    print(f"{len(rows)} messages of {len({group for _, group in rows})} groups in {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
