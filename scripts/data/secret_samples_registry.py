"""Secret samples that other projects ship inside their registry packages
(pinned in third-party.toml), read from the packages in the cache. They
are development data only: written into the cache, never committed.

- `kingfisher` (crates.io `kingfisher-rules`, Apache-2.0): the `examples` of
  its rules are positives, the secret being the pattern's last non-empty
  capture group that is not a host name; its `negative_examples` that hold
  one of the rule's own stand-in words (`ignore_if_contains`: `${`,
  `placeholder`, `changeme` ...) are near misses (the others are real
  secrets in a shape that one rule must not match).
- `betterleaks` (Debian's `golang-github-betterleaks-betterleaks-dev`, MIT):
  the literal true and false positives its rule generators check each rule
  against (`cmd/generate/config/rules/*.go`). A true positive's secret is
  what the package's own rule file (`config/betterleaks.toml`) names as the
  secret of its match. A false positive is a near miss unless it holds a
  run of 24 token characters random enough for any key (4.5 bits a
  character): one rule's false positive may be another provider's secret.
- `ggshield` (PyPI sdist, MIT): the secrets GitGuardian's API reports in the
  recorded answers of ggshield's tests (`tests/unit/cassettes/*.yaml`), on
  the lines of the documents it was sent.
"""

import json
import math
import re
import sys
import tomllib
import warnings
from collections import Counter
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "setup"))
import third_party  # noqa: E402

# A "secret" that is a stand-in, a reference to where the secret is kept, or
# a password hash is a near miss for Lore: data, not a credential.
STAND_IN = re.compile(r"x{5}|EXAMPLE|^(?:password|SOME_[A-Z_]+|[A-Z_]+)$|^[%]|^\$[A-Za-z_{(]"
                      r"|^(?:process\.env|os\.environ|ENV\[|System\.getenv)")
HASHED = re.compile(r"^\$(?:1|2[abxy]?|5|6|7|8|9|y|gy|krb5asrep|krb5tgs)\$")
HOST = re.compile(r"^(?:localhost|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)(?::\d+)?/?$")
TOKEN_RUN = re.compile(r"[A-Za-z0-9+/=_\-.~]{24,}")


def entropy(text: str) -> float:
    counts = Counter(text)
    return -sum(count / len(text) * math.log2(count / len(text)) for count in counts.values())


def kingfisher():
    path = third_party.package_file("kingfisher-rules")
    files = third_party.read_all(path, lambda name: name.endswith(".yml") and (
        "/generated/rules/" in name or "/src/fixtures/" in name))
    positives, negatives, seen = [], [], set()
    # Kingfisher's patterns are written for Vectorscan; the few that Python
    # reads with a warning still mean what they say.
    warnings.filterwarnings("ignore", category=FutureWarning)
    for name, data in sorted(files.items()):
        document = yaml.safe_load(data)
        for rule in (document or {}).get("rules", []) if isinstance(document, dict) else []:
            try:
                pattern = re.compile(rule["pattern"])
            except (re.error, KeyError):
                continue
            family = f"kingfisher:{rule['id'].split('.')[1] if '.' in rule['id'] else rule['id']}"
            for example in rule.get("examples") or []:
                match = pattern.search(example)
                groups = [group for group in (match.groups() if match else []) if group and not HOST.match(group)]
                if not groups or (example, groups[-1]) in seen:
                    continue
                seen.add((example, groups[-1]))
                sample = {"text": example.rstrip("\n"), "family": family, "source": f"kingfisher {rule['id']}"}
                if STAND_IN.search(groups[-1]) or HASHED.match(groups[-1]):
                    negatives.append(sample)
                else:
                    positives.append({**sample, "secret": groups[-1]})
            stand_ins = [word.lower() for word in
                         (rule.get("pattern_requirements") or {}).get("ignore_if_contains") or []]
            for example in rule.get("negative_examples") or []:
                if any(word in example.lower() for word in stand_ins) and example not in seen:
                    seen.add(example)
                    negatives.append({"text": example.rstrip("\n"), "family": family,
                                      "source": f"kingfisher {rule['id']}"})
    return positives, negatives


GO_BLOCK = re.compile(r"\b(tps|fps)\s*:?=\s*(?:append\(\w+,\s*)?\[\]string\{(.*?)\n\t\}", re.S)
GO_LITERAL = re.compile(r"`([^`]*)`|\"((?:[^\"\\\n]|\\.)*)\"")


def go_strings(body: str):
    """The elements of a Go `[]string{...}` that are literals (or sums of
    literals); an element built by a call is left out."""
    for element in re.split(r",\s*\n", body):
        element = element.strip().rstrip(",")
        if not element or element.startswith("//"):
            continue
        parts = GO_LITERAL.findall(element)
        if not parts or GO_LITERAL.sub("", element).replace("+", "").strip():
            continue
        text = ""
        for raw, quoted in parts:
            text += raw if raw else json.loads(f'"{quoted}"') if is_json_string(quoted) else quoted
        yield text


def is_json_string(quoted: str) -> bool:
    try:
        json.loads(f'"{quoted}"')
        return True
    except json.JSONDecodeError:
        return False


def betterleaks():
    path = third_party.package_file("betterleaks")
    root = "usr/share/gocode/src/github.com/betterleaks/betterleaks/"
    files = third_party.read_all(path, lambda name: name.startswith(root) and (
        name.endswith(".go") and "/cmd/generate/config/rules/" in name or name.endswith("config/betterleaks.toml")))
    config = tomllib.loads(files.pop(root + "config/betterleaks.toml").decode())
    rules = []
    for rule in config["rules"]:
        try:
            rules.append((re.compile(rule["regex"]), rule.get("secretGroup", 0)))
        except (re.error, KeyError):
            continue

    def secret_of(text: str):
        found = []
        for pattern, group in rules:
            for match in pattern.finditer(text):
                if group and group <= len(match.groups()):
                    found.append(match.group(group))
                else:
                    found.append(next((value for value in match.groups() if value), match.group(0)))
        found = [value for value in found if value and len(value) >= 6]
        return max(found, key=len) if found else None

    positives, negatives, seen = [], [], set()
    for name, data in sorted(files.items()):
        family = "betterleaks:" + name.rsplit("/", 1)[1].removesuffix(".go")
        for match in GO_BLOCK.finditer(data.decode()):
            kind, body = match.groups()
            for text in go_strings(body):
                if text in seen or not text.strip():
                    continue
                seen.add(text)
                sample = {"text": text, "family": family, "source": f"betterleaks {family.split(':')[1]}"}
                if kind == "tps":
                    secret = secret_of(text)
                    if secret:
                        positives.append({**sample, "secret": secret})
                elif not any(entropy(run) >= 4.5 for run in TOKEN_RUN.findall(text)):
                    negatives.append(sample)
    return positives, negatives


def ggshield():
    path = third_party.package_file("ggshield")
    cassettes = third_party.read_all(path, lambda name: "/tests/unit/cassettes/" in name and name.endswith(".yaml"))
    positives, seen = [], set()
    for name, data in sorted(cassettes.items()):
        for interaction in (yaml.safe_load(data) or {}).get("interactions", []):
            request = interaction.get("request", {}).get("body")
            answer = interaction.get("response", {}).get("body", {}).get("string")
            try:
                documents = json.loads(request) if request else None
                results = json.loads(answer) if answer else None
            except (json.JSONDecodeError, TypeError):
                continue
            if not isinstance(documents, list) or not isinstance(results, list):
                continue
            for document, result in zip(documents, results):
                text = document.get("document", "") if isinstance(document, dict) else ""
                for breach in result.get("policy_breaks", []) if isinstance(result, dict) else []:
                    for found in breach.get("matches", []):
                        value = found.get("match", "")
                        if found.get("type") in ("host", "username", "port", "database", "client_id") \
                                or len(value) < 8 or value not in text:
                            continue
                        start = text.rfind("\n", 0, text.index(value)) + 1
                        end = text.find("\n", text.index(value) + len(value))
                        line = text[start:end if end >= 0 else len(text)].lstrip("+-")
                        secret = max(value.splitlines(), key=len)
                        if (line, secret) in seen or secret not in line:
                            continue
                        seen.add((line, secret))
                        positives.append({"text": line, "secret": secret,
                                          "family": f"ggshield:{breach.get('type', 'secret')}",
                                          "source": f"ggshield {breach.get('type', 'secret')}"})
    return positives, []


def samples():
    """(positives, negatives) of every registry source."""
    positives, negatives = [], []
    for source in (kingfisher, betterleaks, ggshield):
        found, spared = source()
        positives += found
        negatives += spared
    return positives, negatives
