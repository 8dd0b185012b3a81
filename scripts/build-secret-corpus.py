#!/usr/bin/env python3
"""Builds Lore's development corpus for redaction (tests/data/secrets/corpus).

Two sources, each sample labelled with its family and source:

1. Nosey Parker's rule examples (Apache-2.0): every `examples` entry of its
   built-in rules in the `secret` category (not identifiers such as bucket
   names or ARNs) is a positive whose secret is the rule pattern's last
   non-empty capture group (the password of a user/password pair). (Its `negative_examples` are not used: most are other
   providers' real secrets that one rule must not match, not non-secrets.)
   Pass the
   rules folder of a Nosey Parker checkout with --noseyparker
   (crates/noseyparker/data/default/builtin/rules).
2. Lore's own generated samples: random secrets of the shapes agents leak
   (provider-prefixed tokens, hex and base62 keys, UUID-shaped tokens,
   passwords) set in the syntaxes agents' contexts hold (env files, shell
   flags, YAML, TOML, JSON, XML, HCL, Makefile, Gradle, URLs, connection
   strings), and near misses in the same syntaxes (placeholders, references,
   secret names, digests, versions, ids of non-secret fields). Seeded, so a
   rebuild gives the same files.

Usage: scripts/build-secret-corpus.py --noseyparker DIR [--out DIR]
"""

import argparse
import json
import random
import re
import string
import sys
import uuid
from pathlib import Path

import yaml

SEED = 20261124


# An example whose "secret" is a stand-in is a near miss for Lore: masked
# runs, documented examples, the word itself, names and references. Password
# hashes (crypt, bcrypt, Kerberos) are near misses too: data, not a
# credential one can present.
STAND_IN = re.compile(r"x{5}|EXAMPLE|^(?:password|SOME_[A-Z_]+|[A-Z_]+)$|^[%]|^\$[A-Za-z_]")
HASHED = re.compile(r"^\$(?:1|2[abxy]?|5|6|7|8|9|y|gy|krb5asrep|krb5tgs)\$")
HOST = re.compile(r"^(?:localhost|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)(?::\d+)?/?$")


def noseyparker(rules_dir):
    positives, negatives, skipped = [], [], 0
    for path in sorted(Path(rules_dir).glob("*.yml")):
        document = yaml.safe_load(path.read_text())
        for rule in document.get("rules", []):
            family = f"np:{path.stem}"
            if "secret" not in (rule.get("categories") or []):
                continue
            try:
                pattern = re.compile(rule["pattern"])
            except re.error:
                skipped += 1
                continue
            for example in rule.get("examples") or []:
                match = pattern.search(example)
                if not match or not match.groups():
                    skipped += 1
                    continue
                groups = [group for group in match.groups() if group and not HOST.match(group)]
                secret = groups[-1] if groups else None
                if not secret or len(secret) < 6:
                    skipped += 1
                    continue
                sample = {"text": example.rstrip("\n"), "family": family, "source": f"noseyparker {rule['id']}"}
                if (len(secret) < 100 and re.search(r"(.)\1{7}", secret)) or STAND_IN.search(secret) \
                        or HASHED.match(secret):
                    negatives.append(sample)
                else:
                    positives.append({**sample, "secret": secret})
    print(f"noseyparker: {len(positives)} positives, {len(negatives)} negatives, {skipped} skipped",
          file=sys.stderr)
    return positives, negatives


ALNUM = string.ascii_letters + string.digits


def rand(rng, alphabet, length):
    return "".join(rng.choice(alphabet) for _ in range(length))


def password(rng):
    words = ["Summer", "Winter", "Falcon", "Orange", "Tiger", "Delta", "Rocket", "Maple"]
    shapes = [
        lambda: rand(rng, ALNUM + "!@#%^*_-", rng.randint(10, 20)),
        lambda: rng.choice(words) + str(rng.randint(10, 9999)) + rng.choice("!@#$%*"),
        lambda: rand(rng, ALNUM, 12) + rng.choice("!#%") + str(rng.randint(1, 99)),
    ]
    return rng.choice(shapes)()


def secret_shapes(rng):
    """(family, secret) of the shapes that leak."""
    return [
        ("token:github", "ghp_" + rand(rng, ALNUM, 36)),
        ("token:github", "github_pat_" + rand(rng, ALNUM, 22) + "_" + rand(rng, ALNUM, 59)),
        ("token:gitlab", "glpat-" + rand(rng, ALNUM + "_-", 20)),
        ("token:slack", "xoxb-" + str(rng.randint(10**10, 10**11)) + "-" + str(rng.randint(10**10, 10**11))
         + "-" + rand(rng, ALNUM, 24)),
        ("token:stripe", "sk_live_" + rand(rng, ALNUM, 24)),
        ("token:openai", "sk-proj-" + rand(rng, ALNUM + "_-", 48)),
        ("token:anthropic", "sk-ant-api03-" + rand(rng, ALNUM + "_-", 93) + "AA"),
        ("token:aws", "AKIA" + rand(rng, string.ascii_uppercase + "234567", 16)),
        ("token:google", "AIza" + rand(rng, ALNUM + "_-", 35)),
        ("token:npm", "npm_" + rand(rng, ALNUM, 36)),
        ("token:pypi", "pypi-AgEIcHlwaS5vcmc" + rand(rng, ALNUM + "_-", 60)),
        ("token:sendgrid", "SG." + rand(rng, ALNUM + "_-", 22) + "." + rand(rng, ALNUM + "_-", 43)),
        ("token:twilio", "SK" + rand(rng, "0123456789abcdef", 32)),
        ("token:huggingface", "hf_" + rand(rng, string.ascii_letters, 34)),
        ("token:doppler", "dp.pt." + rand(rng, ALNUM, 43)),
        ("token:shopify", "shpat_" + rand(rng, "0123456789abcdef", 32)),
        ("key:hex32", rand(rng, "0123456789abcdef", 32)),
        ("key:hex40", rand(rng, "0123456789abcdef", 40)),
        ("key:base62", rand(rng, ALNUM, rng.randint(24, 48))),
        ("key:base64", rand(rng, ALNUM + "+/", 40) + "="),
        ("key:uuid", str(uuid.UUID(int=rng.getrandbits(128), version=4))),
        ("password", password(rng)),
    ]


SECRET_KEYS = ["API_KEY", "api_key", "apiKey", "SECRET_KEY", "client_secret", "AUTH_TOKEN", "access_token",
               "DEPLOY_TOKEN", "password", "DB_PASSWORD", "db_pass", "SONAR_TOKEN", "CI_JOB_TOKEN",
               "private_token", "secret", "STRIPE_SECRET_KEY", "HEROKU_API_KEY", "SENTRY_AUTH_TOKEN",
               "SLACK_WEBHOOK_SECRET", "signing_secret", "encryption_key", "MASTER_KEY", "license_key"]


def wrap_positive(rng, key, secret):
    """(syntax, text) with `secret` as the value of `key`."""
    flag = re.sub(r"_", "-", key).lower()
    yaml_key = key.lower()
    return rng.choice([
        ("env", f"{key}={secret}"),
        ("env", f"export {key}=\"{secret}\""),
        ("shell-flag", f"./deploy.sh --{flag}={secret} --region eu-west-1"),
        ("shell-flag", f"tool login --{flag} {secret}"),
        ("yaml", f"  {yaml_key}: {secret}"),
        ("yaml", f"{yaml_key}: \"{secret}\"\nregion: us-east-1"),
        ("toml", f"[service]\n{yaml_key} = \"{secret}\""),
        ("json", f"{{\"{key}\": \"{secret}\", \"timeout\": 30}}"),
        ("xml", f"<settings><{key}>{secret}</{key}></settings>"),
        ("xml", f"<add key=\"{key}\" value=\"{secret}\" />"),
        ("hcl", f"variable \"x\" {{\n  {yaml_key} = \"{secret}\"\n}}"),
        ("makefile", f"{key} ?= {secret}"),
        ("makefile", f"{key} ::= {secret}"),
        ("gradle", f"credentials {{\n    username 'deploy'\n    {key} '{secret}'\n}}"),
        ("gradle", f"{key} = \"{secret}\""),
        ("python", f"client = Client({yaml_key}=\"{secret}\")"),
        ("js", f"const {key} = '{secret}';"),
        ("docker", f"docker run -e {key}={secret} acme/app:1.4.2"),
        ("log", f"2026-11-02T10:11:12Z DEBUG loaded {key}={secret} from env"),
    ])


def url_positive(rng, secret):
    host = rng.choice(["db.internal", "git.acme.io", "redis.prod", "amqp.local"])
    scheme = rng.choice(["postgres", "mysql", "https", "redis", "amqp", "mongodb+srv"])
    return ("url", f"{scheme}://svc_user:{secret}@{host}:5432/app")


def pair_positive(rng, secret):
    return rng.choice([
        ("pair", f"requests.get(url, auth=('admin', '{secret}'))"),
        ("pair", f"mysql -u root -p{secret} shop"),
        ("pair", f"sshpass -p '{secret}' ssh deploy@10.0.0.4"),
        ("pair", f"docker login -u ci -p {secret} registry.acme.io"),
        ("pair", f"Server=db;Database=app;User Id=sa;Password={secret};"),
        ("pair", f"curl -u deploy:{secret} https://nexus.acme.io/repo"),
    ])


def generated(count):
    rng = random.Random(SEED)
    positives = []
    for _ in range(count):
        family, secret = rng.choice(secret_shapes(rng))
        roll = rng.random()
        if family == "password" and roll < 0.5:
            syntax, text = rng.choice([url_positive, pair_positive])(rng, secret)
        else:
            syntax, text = wrap_positive(rng, rng.choice(SECRET_KEYS), secret)
        positives.append({"text": text, "secret": secret, "family": f"{family}/{syntax}", "source": "lore generated"})
    return positives


NEAR_MISS_VALUES = [
    "${DB_PASSWORD}", "$API_KEY", "{{ secrets.DEPLOY_TOKEN }}", "<your-api-key>", "YOUR_API_KEY_HERE",
    "xxxxxxxxxxxxxxxxxxxxxxxx", "AKIAIOSFODNN7EXAMPLE", "sk_live_xxxxxxxxxxxxxxxxxxxxxxxx", "changeme",
    "********", "os.environ['API_KEY']", "process.env.STRIPE_KEY", "K8S_CRED", "prod-db-password",
    "vault:secret/data/app#token", "REPLACE_ME", "null", "true", "\"\"", "<redacted>", "%(password)s",
    "settings.SECRET_KEY", "SecretStr", "str", "Optional[str]",
]
NON_SECRET_KEYS = ["version", "commit", "sha", "checksum", "image", "request_id", "trace_id", "user_id",
                   "timestamp", "port", "url", "path", "build", "digest", "etag", "correlation_id"]


def near_misses(count):
    rng = random.Random(SEED + 1)
    negatives = []
    for _ in range(count):
        roll = rng.random()
        if roll < 0.45:
            key, value = rng.choice(SECRET_KEYS), rng.choice(NEAR_MISS_VALUES)
            family = "placeholder"
        else:
            key = rng.choice(NON_SECRET_KEYS)
            value = rng.choice([
                rand(rng, "0123456789abcdef", 40),
                rand(rng, "0123456789abcdef", 64),
                "sha256:" + rand(rng, "0123456789abcdef", 64),
                "sha512-" + rand(rng, ALNUM + "+/", 86) + "==",
                str(uuid.UUID(int=rng.getrandbits(128), version=4)),
                f"{rng.randint(0, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 99)}",
                f"v{rng.randint(1, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 9)}-rc.{rng.randint(1, 5)}",
                f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T10:{rng.randint(10, 59)}:00Z",
                str(rng.randint(1024, 65535)),
                f"https://git.acme.io/team/{rand(rng, string.ascii_lowercase, 6)}/-/merge_requests/{rng.randint(1, 999)}",
                f"/home/agent/work/{rand(rng, string.ascii_lowercase, 5)}/src/main.rs",
                f"ghcr.io/acme/{rand(rng, string.ascii_lowercase, 6)}:{rng.randint(1, 9)}.{rng.randint(0, 9)}.0",
            ])
            family = "data"
        syntax, text = wrap_positive(rng, key, value)
        negatives.append({"text": text, "family": f"{family}/{syntax}", "source": "lore generated"})
    for _ in range(count):
        family, text = rng.choice(bare_near_misses(rng))
        negatives.append({"text": text, "family": family, "source": "lore generated"})
    return negatives


def bare_near_misses(rng):
    """(family, text): what looks like a secret and is not, with no secret key around it."""
    word = lambda: rand(rng, string.ascii_lowercase, rng.randint(4, 9))
    b64 = __import__("base64")
    blob = b64.b64encode(json.dumps({"user": word(), "items": [word(), word()], "n": rng.randint(1, 99)}).encode())
    return [
        ("wrong-length", f"grep found ghp_{rand(rng, ALNUM, rng.randint(6, 14))} in the fixture"),
        ("wrong-length", f"AKIA{rand(rng, string.ascii_uppercase, rng.randint(4, 10))} is not a key id"),
        ("wrong-length", f"xoxb-{rng.randint(100, 999)} rejected"),
        ("stand-in", "export GITHUB_TOKEN=ghp_" + "x" * 36),
        ("stand-in", "aws_access_key_id = AKIAXXXXXXXXXXXXXXXX"),
        ("stand-in", f"STRIPE_KEY=sk_live_{'*' * 24}"),
        ("stand-in", "Set OPENAI_API_KEY=sk-...your key... before running"),
        ("reference", "password: {{ .Values.db.password }}"),
        ("reference", "token = \"<%= ENV['DEPLOY_TOKEN'] %>\""),
        ("reference", f"api_key = ${{{word().upper()}_API_KEY}}"),
        ("reference", "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n        name: db-credentials\n        key: password"),
        ("secret-name", "withCredentials([string(credentialsId: 'github-token', variable: 'TOKEN')]) {"),
        ("secret-name", f"CREDENTIALS_ID = \"{word().upper()}_CRED\""),
        ("secret-name", f"secret_name = \"prod/{word()}/db-password\""),
        ("digest", f"git checkout {rand(rng, '0123456789abcdef', 40)}"),
        ("digest", f"{rand(rng, '0123456789abcdef', 64)}  {word()}.tar.gz"),
        ("digest", f"image: ghcr.io/acme/{word()}@sha256:{rand(rng, '0123456789abcdef', 64)}"),
        ("digest", f"\"integrity\": \"sha512-{rand(rng, ALNUM + '+/', 86)}==\""),
        ("encoded-data", f"payload={blob.decode()}"),
        ("encoded-data", f"data: {blob.decode()}"),
        ("version", f"{word()} {rng.randint(0, 9)}.{rng.randint(0, 40)}.{rng.randint(0, 9)} (build {rand(rng, '0123456789abcdef', 7)})"),
        ("identifier", f"request_id={uuid.UUID(int=rng.getrandbits(128), version=4)} status=200 took={rng.randint(1, 900)}ms"),
        ("identifier", f"session {uuid.UUID(int=rng.getrandbits(128), version=4)} resumed at 2026-11-0{rng.randint(1, 9)}T08:00:00Z"),
        ("prose", "The password field must not be empty; the token expired after 3600 s."),
        ("prose", f"Rotate the {word()} API key every 90 days (see SECURITY.md)."),
        ("code", "password = request.form.get('password')"),
        ("code", "const token = await getToken(user.id);"),
        ("code", "def check_password(self, raw_password: str) -> bool:"),
    ]


def credsweeper(output_json, per_rule=30):
    """CredSweeper's expected findings on its own test samples
    (tests/data/output.json): each line it reports, with the value it
    reports as the secret; at most `per_rule` per rule, in file order, so
    that no one rule (private-key bodies) outweighs the rest."""
    with open(output_json) as file:
        findings = json.load(file)
    # Rules that report identifiers, not credentials: a bucket, a domain, an
    # app id, a UUID, a nonce or a salt is no secret Lore redacts.
    identifiers = {"AWS S3 Bucket", "Firebase Domain", "Tencent WeChat API App ID", "UUID", "Nonce", "Salt"}
    positives, seen, counts = [], set(), {}
    for finding in findings:
        rule = finding["rule"]
        if rule in identifiers:
            continue
        for line in finding["line_data_list"]:
            text, value = line["line"].strip(), line["value"]
            if len(value) < 4 or value not in text or (text, value) in seen:
                continue
            if counts.get(rule, 0) >= per_rule:
                continue
            seen.add((text, value))
            counts[rule] = counts.get(rule, 0) + 1
            family = "cs:" + re.sub(r"[^a-z0-9]+", "-", rule.lower()).strip("-")
            positives.append({"text": text, "secret": value, "family": family, "source": f"credsweeper {rule}"})
    return positives


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--noseyparker", required=True, help="Nosey Parker's built-in rules folder")
    parser.add_argument("--credsweeper", help="CredSweeper's tests/data/output.json")
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent.parent / "tests/data/secrets/corpus"))
    parser.add_argument("--generated", type=int, default=3000)
    args = parser.parse_args()
    positives, negatives = noseyparker(args.noseyparker)
    positives += generated(args.generated)
    if args.credsweeper:
        positives += credsweeper(args.credsweeper)
    negatives += near_misses(args.generated // 3)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, samples in [("positives.jsonl", positives), ("negatives.jsonl", negatives)]:
        with open(out / name, "w") as file:
            for sample in samples:
                file.write(json.dumps(sample, ensure_ascii=False) + "\n")
    print(f"{len(positives)} positives, {len(negatives)} negatives in {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
