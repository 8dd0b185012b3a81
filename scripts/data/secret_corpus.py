#!/usr/bin/env python3
"""Builds the redaction development corpus: secrets in the contexts agents
log, and near misses that must stay as they are.

Two parts, each sample labelled with its family and source (the source is
what `lore eval redaction --leave-one-out` leaves out in turn):

- `own`: the project's own samples, committed in tests/data/secrets/corpus:
  - `lore`: Lore's generator (scripts/data/secret_samples_generated.py), seeded;
  - `tools`: secrets and public key material as real tools print them
    (scripts/data/secret_samples_tools.py; needs ssh-keygen, openssl, gpg,
    keytool and git): new keys on every run.
- `registry`: samples other projects ship in their registry packages
  (scripts/data/secret_samples_registry.py: kingfisher, betterleaks, ggshield,
  pinned in third-party.toml), written into the ignored cache,
  `$LORE_CACHE_DIR/data/secrets/registry/`, never committed. `make tools`
  builds this part.

A positive is `{"text", "secret", "family", "source"}`: it is redacted when
`secret` no longer appears in what Lore stored. A negative is `{"text",
"family", "source"}`: it is over-redacted when anything in it changed.

Usage:
    python3 scripts/data/secret_corpus.py own [--out DIR]
    python3 scripts/data/secret_corpus.py registry [--out DIR]
"""

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "setup"))
import third_party  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
GENERATED = 3000
TOOLS_SEED = 20261127


def write(out: Path, positives, negatives) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, samples in [("positives.jsonl", positives), ("negatives.jsonl", negatives)]:
        with open(out / name, "w", encoding="utf-8") as handle:
            for sample in samples:
                handle.write(json.dumps(sample, ensure_ascii=False) + "\n")
    print(f"{out}: {len(positives)} positives, {len(negatives)} negatives")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("part", choices=["own", "registry"])
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.part == "own":
        import secret_samples_generated as generated
        import secret_samples_tools as tools

        positives = generated.generated(GENERATED) + generated.prose_positives(GENERATED // 10)
        negatives = generated.near_misses(GENERATED // 3) + generated.prose_near_misses(GENERATED // 20)
        found, spared = tools.samples(TOOLS_SEED)
        write(args.out or ROOT / "tests/data/secrets/corpus", positives + found, negatives + spared)
        return 0
    import secret_samples_registry as registry

    try:
        positives, negatives = registry.samples()
    except third_party.FetchError as error:
        print(error, file=sys.stderr)
        return 1
    write(args.out or third_party.cache_dir() / "data/secrets/registry", positives, negatives)
    return 0


if __name__ == "__main__":
    sys.exit(main())
