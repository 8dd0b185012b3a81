"""Lore's own generated secrets and near misses (the `lore` source of the
redaction corpus): random secrets of the shapes that leak (provider-prefixed
tokens, hex and base62 keys, UUID-shaped tokens, passwords) set in the
syntaxes agents' contexts hold (env files, shell flags, YAML, TOML, JSON,
XML, HCL, Makefile, Gradle, URLs, connection strings), and near misses in
the same syntaxes (placeholders, references, secret names, digests,
versions, ids of non-secret fields). Seeded: the same samples every time.
"""

import json
import random
import re
import string
import uuid

SEED = 20261124
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




def prose_positives(count):
    """Secrets after a secret word in free text, with no key/value syntax
    around them: what people and tools write in chat, logs and prompts."""
    rng = random.Random(SEED + 2)
    frames = [
        "the password is {secret}",
        "PW: {secret}",
        "pass: {secret} (rotate after the demo)",
        "login: admin / password: {secret}",
        "Use token {secret} for the staging API.",
        "api key {secret} was pasted in the channel",
        "Password for deploy@10.0.3.7: {secret}",
        "Enter passphrase for key '/home/ci/.ssh/id_ed25519': {secret}",
        "creds are ci-bot / {secret}",
        "secret={secret} (from the vault, do not commit)",
        "Your new access token: {secret}",
        "DB password changed to {secret} by ops",
    ]
    positives = []
    for _ in range(count):
        family, secret = rng.choice([shape for shape in secret_shapes(rng)
                                     if shape[0] in ("password", "key:base62", "key:hex32", "key:base64")])
        frame = rng.choice(frames)
        syntax = "prose-" + str(frames.index(frame))
        positives.append({"text": frame.format(secret=secret), "secret": secret, "family": f"{family}/{syntax}",
                          "source": "lore generated"})
    return positives


def prose_near_misses(count):
    """Free text about passwords and tokens that holds none."""
    rng = random.Random(SEED + 3)
    word = lambda: rand(rng, string.ascii_lowercase, rng.randint(4, 9))  # noqa: E731
    frames = [
        lambda: "the password must be at least 12 characters long",
        lambda: f"token expired after {rng.randint(60, 86400)} s, refreshing",
        lambda: f"PW: see 1Password item '{word()} staging'",
        lambda: "password: <hidden>",
        lambda: f"Use token ${{{word().upper()}_TOKEN}} for the staging API.",
        lambda: f"api key for {word()} lives in Vault at secret/data/{word()}",
        lambda: f"Password for deploy@10.0.3.{rng.randint(2, 250)}: ",
        lambda: "Enter passphrase for key '/home/ci/.ssh/id_ed25519': ",
        lambda: f"creds are in the {word()}-credentials secret",
        lambda: f"secret rotated at 2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T08:00:00Z",
        lambda: "Your new access token has been emailed to you.",
        lambda: f"DB password changed by {word()} (ticket OPS-{rng.randint(100, 9999)})",
    ]
    negatives = []
    for _ in range(count):
        index = rng.randrange(len(frames))
        negatives.append({"text": frames[index](), "family": f"prose/prose-{index}", "source": "lore generated"})
    return negatives
