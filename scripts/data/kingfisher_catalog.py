"""Kingfisher's rules, from its crates.io package, in the form Lore reads.

`third_party.py extract` calls `convert` for `sanitize/rules/kingfisher.jsonl`
(third-party.toml, `convert = "kingfisher_catalog"`); `check --rebuild`
calls it again and compares byte for byte.

The crate ships its rules as generated YAML (`generated/rules/*.yml`): its own
rules, those it imports from betterleaks, and those it imports from Google's
Veles. The betterleaks part is 3.7 MB, because every rule's filter repeats the
same global allowlist as an expression tree, and more than a third of it is
network validation Lore never runs. This script keeps what redaction reads,
unchanged in content:

- per rule: its id, pattern, keywords, capture group, filter expression (the
  tree as Kingfisher parsed it from betterleaks' CEL), entropy floor,
  `ignore_if_contains` words, whether it is reported alone (`visible`), the
  file paths it is limited to, and its examples and negative examples;
- the global allowlist once, as `global_filter` in the first line; a rule
  whose filter held it has `{"kind": "global_filter"}` in its place.

Dropped: validation, revocation, references, names, tags and the path
prefilter (an action has no file path). One JSON object a line, so an update
reads as a diff of rules.
"""

import json

import yaml

PREFIX = "kingfisher-rules-3.0.1/generated/rules/"
MEMBERS = [PREFIX + name for name in ("kingfisher.yml", "betterleaks.yml", "veles.yml")]
GLOBAL = {"kind": "global_filter"}


def _strip(node):
    """An expression tree without the parser's bookkeeping flags."""
    if isinstance(node, dict):
        return {key: _strip(value) for key, value in node.items() if key not in ("optional", "method")}
    if isinstance(node, list):
        return [_strip(value) for value in node]
    return node


def _factor(node, shared):
    """`node` with every subtree equal to `shared` replaced by GLOBAL."""
    if node == shared:
        return GLOBAL
    if isinstance(node, dict):
        return {key: _factor(value, shared) for key, value in node.items()}
    if isinstance(node, list):
        return [_factor(value, shared) for value in node]
    return node


def _global_filter(rules):
    """The allowlist every betterleaks rule's filter holds: the first rule's
    filter is `global || its own`."""
    shared = _strip(rules[0]["betterleaks_filter"]["left"])
    holding = sum(_factor(_strip(rule["betterleaks_filter"]), shared) != _strip(rule["betterleaks_filter"])
                  for rule in rules if "betterleaks_filter" in rule)
    if holding < len(rules) * 0.9:
        raise SystemExit("betterleaks' rules no longer share one global filter; read the update before converting")
    return shared


def _rule(source, rule, shared):
    out = {"id": rule["id"], "source": source, "pattern": rule["pattern"]}
    if rule.get("keywords"):
        out["keywords"] = rule["keywords"]
    if rule.get("betterleaks_secret_group"):
        out["secret_group"] = rule["betterleaks_secret_group"]
    if "betterleaks_filter" in rule:
        out["filter"] = _factor(_strip(rule["betterleaks_filter"]), shared)
    if rule.get("min_entropy"):
        out["min_entropy"] = rule["min_entropy"]
    ignore = (rule.get("pattern_requirements") or {}).get("ignore_if_contains")
    if ignore:
        out["ignore_if_contains"] = ignore
    if rule.get("visible") is False:
        out["visible"] = False
    if rule.get("path"):
        out["path"] = rule["path"]
    if rule.get("depends_on_rule"):
        out["depends_on"] = [dependency["rule_id"] for dependency in rule["depends_on_rule"]]
    for key in ("examples", "negative_examples"):
        if rule.get(key):
            out[key] = rule[key]
    return out


def convert(read) -> bytes:
    """The catalog file, from `read(member) -> bytes` over the crate."""
    files = {member: yaml.safe_load(read(member)) for member in MEMBERS}
    betterleaks = files[PREFIX + "betterleaks.yml"]["rules"]
    shared = _global_filter(betterleaks)
    header = {
        "catalog": "kingfisher-rules 3.0.1 (crates.io), generated/rules/: kingfisher.yml, betterleaks.yml, veles.yml",
        "converted_by": "scripts/data/kingfisher_catalog.py",
        "global_filter": shared,
    }
    lines = [header]
    for member in MEMBERS:
        source = member.removeprefix(PREFIX).removesuffix(".yml")
        lines.extend(_rule(source, rule, shared) for rule in files[member]["rules"])
    text = "".join(json.dumps(line, ensure_ascii=False, separators=(",", ":"), default=str) + "\n" for line in lines)
    return text.encode()
