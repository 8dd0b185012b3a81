"""Secrets and public key material as real tools print them (the `tools`
source of the redaction corpus): no rule of any catalog was written against
them, and they are what an agent's commands show.

Positives: private keys written by ssh-keygen (OpenSSH and PEM formats),
openssl (PKCS#8, EC, encrypted PKCS#8) and gpg (an armored secret key),
each as the file reads and as a JSON string; commands that carry a password
(keytool's -storepass, openssl's -pass and -passout); the entries git's
credential store writes; JSON Web Tokens signed with a random key; random
keys printed by `openssl rand` and Python's `secrets` after the command that
made them.

Near misses: what those tools print that is public or is no credential:
public keys (ssh-keygen, openssl, gpg), certificates and their signing
requests, fingerprints, password hashes (`openssl passwd`), digests.

Each run makes new keys: the samples differ from run to run, the kinds do
not. Needs ssh-keygen, openssl, gpg, keytool (a JDK) and git on PATH.
"""

import base64
import hashlib
import hmac
import json
import os
import random
import secrets
import string
import subprocess
import tempfile
import time
from pathlib import Path

PER_KIND = 20
SOURCE = "tools"


def run(*command, stdin=None, cwd=None, env=None) -> str:
    result = subprocess.run(command, input=stdin, capture_output=True, text=True, cwd=cwd, env=env, check=True)
    return result.stdout


def body_line(pem: str) -> str:
    """A line from the middle of a PEM body: key material, not a header
    (the first lines of an OpenSSH key are the same for every key)."""
    lines = [line for line in pem.strip().splitlines() if line and not line.startswith("-----")
             and ":" not in line]
    return lines[len(lines) // 2]


def positive(text, secret, family):
    return {"text": text, "secret": secret, "family": f"tool:{family}", "source": f"{SOURCE} {family}"}


def negative(text, family):
    return {"text": text, "family": f"tool:{family}", "source": f"{SOURCE} {family}"}


def as_json(pem: str, key: str) -> str:
    return json.dumps({"type": "service_account", key: pem}, indent=2)


def ssh_keys(work: Path, rng):
    positives, negatives = [], []
    kinds = [("ed25519", []), ("rsa", ["-b", "2048"]), ("ecdsa", ["-b", "256"]), ("rsa", ["-b", "2048", "-m", "PEM"])]
    for index in range(PER_KIND):
        kind, extra = kinds[index % len(kinds)]
        path = work / f"id_{index}"
        run("ssh-keygen", "-q", "-t", kind, *extra, "-N", "", "-C", f"agent{index}@ci", "-f", str(path))
        private, public = path.read_text(), (work / f"id_{index}.pub").read_text().strip()
        family = f"ssh-keygen-{kind}" + ("-pem" if "PEM" in extra else "")
        text = private if index % 2 == 0 else f"$ cat ~/.ssh/id_{kind}\n{private}"
        positives.append(positive(text, body_line(private), family))
        negatives.append(negative(public, "ssh-public-key"))
        fingerprint = run("ssh-keygen", "-l", "-f", str(path)).strip()
        negatives.append(negative(fingerprint, "ssh-fingerprint"))
    return positives, negatives


def openssl_keys(work: Path, rng):
    positives, negatives = [], []
    kinds = [["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"], ["-algorithm", "EC", "-pkeyopt",
             "ec_paramgen_curve:P-256"], ["-algorithm", "ED25519"]]
    for index in range(PER_KIND):
        options = kinds[index % len(kinds)]
        key = work / f"key_{index}.pem"
        password = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(14))
        if index % 4 == 3:
            command = ["openssl", "genpkey", *options, "-aes-256-cbc", "-pass", f"pass:{password}", "-out", str(key)]
            run(*command)
            positives.append(positive(" ".join(command[:-2]) + " -out key.pem", password, "openssl-pass"))
        else:
            run("openssl", "genpkey", *options, "-out", str(key))
        private = key.read_text()
        text = private if index % 2 == 0 else as_json(private, "private_key")
        positives.append(positive(text, body_line(private), "openssl-private-key"))
        pass_args = ["-passin", f"pass:{password}"] if index % 4 == 3 else []
        public = run("openssl", "pkey", "-in", str(key), *pass_args, "-pubout")
        negatives.append(negative(public.strip(), "openssl-public-key"))
        if index % 3 == 0:
            certificate = run("openssl", "req", "-new", "-x509", "-key", str(key), *pass_args, "-days", "30",
                              "-subj", f"/CN=svc{index}.example.internal")
            negatives.append(negative(certificate.strip(), "x509-certificate"))
            request = run("openssl", "req", "-new", "-key", str(key), *pass_args,
                          "-subj", f"/CN=svc{index}.example.internal")
            negatives.append(negative(request.strip(), "certificate-request"))
            fingerprint = run("openssl", "x509", "-noout", "-fingerprint", "-sha256", stdin=certificate)
            negatives.append(negative(fingerprint.strip(), "x509-fingerprint"))
    for index in range(PER_KIND):
        password = "".join(rng.choice(string.ascii_letters + string.digits + "!#%") for _ in range(12))
        command = ["openssl", "req", "-new", "-newkey", "rsa:2048", "-keyout", "tls.key", "-passout",
                   f"pass:{password}", "-subj", "/CN=api.example.internal", "-out", "tls.csr"]
        positives.append(positive(" ".join(command), password, "openssl-passout"))
        hashed = run("openssl", "passwd", "-6", password).strip()
        negatives.append(negative(f"deploy:{hashed}", "password-hash"))
    return positives, negatives


def gpg_keys(work: Path, rng):
    positives, negatives = [], []
    home = work / "gnupg"
    home.mkdir(mode=0o700)
    env = {**os.environ, "GNUPGHOME": str(home)}
    for index in range(PER_KIND // 2):
        uid = f"CI Signer {index} <ci{index}@example.com>"
        run("gpg", "--batch", "--pinentry-mode", "loopback", "--passphrase", "", "--quick-gen-key", uid,
            "ed25519", "sign", "never", env=env)
        secret_block = run("gpg", "--armor", "--export-secret-keys", "--pinentry-mode", "loopback",
                           "--passphrase", "", uid, env=env)
        positives.append(positive(secret_block, body_line(secret_block), "gpg-secret-key"))
        public_block = run("gpg", "--armor", "--export", uid, env=env)
        negatives.append(negative(public_block.strip(), "gpg-public-key"))
        fingerprint = run("gpg", "--fingerprint", uid, env=env)
        negatives.append(negative(fingerprint.strip(), "gpg-fingerprint"))
    return positives, negatives


def keytool_passwords(work: Path, rng):
    positives = []
    for index in range(PER_KIND // 2):
        password = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(10)) + "!"
        store = work / f"store_{index}.p12"
        command = ["keytool", "-genkeypair", "-alias", f"svc{index}", "-keyalg", "RSA", "-keysize", "2048",
                   "-dname", f"CN=svc{index}", "-keystore", str(store), "-storetype", "PKCS12",
                   "-storepass", password, "-keypass", password, "-validity", "30"]
        run(*command)
        shown = " ".join(command).replace(str(store), f"store_{index}.p12")
        positives.append(positive(shown, password, "keytool-storepass"))
    return positives, []


def git_credentials(work: Path, rng):
    positives = []
    store = work / "git-credentials"
    for index in range(PER_KIND):
        token = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(rng.choice([20, 32, 40])))
        host = rng.choice(["git.example.internal", "gitlab.example.com", "code.example.org"])
        request = f"protocol=https\nhost={host}\nusername=ci-bot-{index}\npassword={token}\n"
        run("git", "credential-store", "--file", str(store), "store", stdin=request)
    for line in store.read_text().splitlines():
        token = line.split(":")[2].split("@")[0]
        positives.append(positive(line, token, "git-credential-store"))
        positives.append(positive(f"$ git credential fill\nprotocol=https\nhost=x\npassword={token}",
                                  token, "git-credential-fill"))
    return positives, []


def jwts(rng):
    positives = []

    def encode(data) -> str:
        raw = json.dumps(data, separators=(",", ":")).encode()
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

    for index in range(PER_KIND):
        header = encode({"alg": "HS256", "typ": "JWT"})
        payload = encode({"sub": f"user-{rng.randint(1, 10**6)}", "iat": int(time.time()) - index * 3600,
                          "exp": int(time.time()) + 3600, "scope": "read write"})
        signature = hmac.new(secrets.token_bytes(32), f"{header}.{payload}".encode(), hashlib.sha256).digest()
        token = f"{header}.{payload}.{base64.urlsafe_b64encode(signature).rstrip(b'=').decode()}"
        text = rng.choice([f"curl -H 'Authorization: Bearer {token}' https://api.example.internal/v1/me",
                           f"jwt: {token}", f"Set-Cookie: session={token}; HttpOnly; Secure"])
        positives.append(positive(text, token, "jwt"))
    return positives, []


def random_keys(rng):
    positives = []
    for index in range(PER_KIND):
        hex_key = run("openssl", "rand", "-hex", "32").strip()
        positives.append(positive(f"$ openssl rand -hex 32\n{hex_key}", hex_key, "openssl-rand-hex"))
        b64_key = run("openssl", "rand", "-base64", "32").strip()
        positives.append(positive(f"$ openssl rand -base64 32\n{b64_key}", b64_key, "openssl-rand-base64"))
        token = secrets.token_urlsafe(32)
        positives.append(positive(f"$ python3 -c 'import secrets; print(secrets.token_urlsafe(32))'\n{token}",
                                  token, "python-secrets"))
    return positives, []


def digests(work: Path, rng):
    negatives = []
    for index in range(PER_KIND):
        path = work / f"artifact-{index}.tar.gz"
        path.write_bytes(os.urandom(256))
        for tool in ["sha256sum", "sha1sum", "md5sum"]:
            line = run(tool, path.name, cwd=work).strip()
            negatives.append(negative(line, f"digest-{tool}"))
    return negatives


def samples(seed: int):
    """(positives, negatives) from running the tools."""
    rng = random.Random(seed)
    positives, negatives = [], []
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        for make in (ssh_keys, openssl_keys, gpg_keys, keytool_passwords, git_credentials):
            found, spared = make(work, rng)
            positives += found
            negatives += spared
        for make in (jwts, random_keys):
            found, spared = make(rng)
            positives += found
            negatives += spared
        negatives += digests(work, rng)
    return positives, negatives
