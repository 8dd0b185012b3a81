#!/usr/bin/env bash
# Checks the chart the way a cluster would see it, without a cluster:
# `helm lint` and `helm template` for the default values and for every
# values example, each rendered manifest validated (strictly: no unknown
# fields) against the Kubernetes 1.35 schemas, the documented sidecar pod
# too; and the chart must refuse to render without a database or with a
# guessable admin token.
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
cache_dir="${LORE_CACHE_DIR:-$root/.cache}"
helm="$cache_dir/bin/helm"
validate="$cache_dir/venv/bin/kubernetes-validate"
chart="$root/helm/lore"
kubernetes=1.35.0
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

check() {
    local name="$1"
    shift
    "$helm" lint --strict "$chart" "$@" >"$out/lint.txt" || { cat "$out/lint.txt"; exit 1; }
    "$helm" template lore "$chart" --namespace lore "$@" >"$out/$name.yaml"
    "$validate" --kubernetes-version "$kubernetes" --strict --quiet "$out/$name.yaml"
    echo "chart ok: $name ($(grep -c '^kind:' "$out/$name.yaml") manifests valid for Kubernetes $kubernetes)"
}

check defaults
# A bootstrap admin token from the chart's own Secret.
check admin-token --set auth.adminToken=lore_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG
grep -q 'LORE_AUTH__BOOTSTRAP_ADMIN_TOKEN' "$out/admin-token.yaml" || { echo "admin token not wired" >&2; exit 1; }
# Read replicas, kept in the chart's Secret as a JSON list.
check read-replicas --set 'database.readUrls[0]=postgres://lore@replica-1:5432/lore'
grep -q 'read-urls: "\[\\"postgres://lore@replica-1:5432/lore\\"\]"' "$out/read-replicas.yaml" \
    && grep -q 'LORE_DATABASE__READ_URLS' "$out/read-replicas.yaml" \
    || { echo "read replicas not wired" >&2; exit 1; }
for example in "$chart"/examples/*.yaml; do
    [ "$(basename "$example")" = agent-pod-with-sidecar.yaml ] && continue
    check "$(basename "$example" .yaml)" --values "$example"
done
grep -q 'LORE_TLS__CLIENT_CA_FILE' "$out/tls.yaml" && grep -q 'tcpSocket' "$out/tls.yaml" \
    || { echo "TLS not wired (certificate files, probes)" >&2; exit 1; }
"$validate" --kubernetes-version "$kubernetes" --strict --quiet "$chart/examples/agent-pod-with-sidecar.yaml"
echo "chart ok: agent-pod-with-sidecar.yaml valid for Kubernetes $kubernetes"

# The images are those `make image` names (scripts/packaging/images.sh): the
# workspace's version as the chart's appVersion and the sidecar's tag, and the
# migration Job runs the server image's `migrate`.
version="$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -n 1)"
grep -q "^appVersion: \"$version\"" "$chart/Chart.yaml" \
    || { echo "Chart.yaml's appVersion is not the workspace's version $version" >&2; exit 1; }
grep -q "image: ghcr.io/lore-dev/lore-server:$version" "$out/defaults.yaml" \
    || { echo "the chart does not run ghcr.io/lore-dev/lore-server:$version" >&2; exit 1; }
grep -q 'args: \["migrate"\]' "$out/defaults.yaml" || { echo "the migration Job does not run migrate" >&2; exit 1; }
grep -q "image: ghcr.io/lore-dev/lore-sidecar:$version" "$chart/examples/agent-pod-with-sidecar.yaml" \
    || { echo "the sidecar example does not run ghcr.io/lore-dev/lore-sidecar:$version" >&2; exit 1; }
grep -q 'ghcr.io/lore-dev' "$root/scripts/packaging/images.sh" || { echo "build-images.sh names another registry" >&2; exit 1; }
echo "chart ok: the server, migration Job and sidecar example run the images of make image ($version)"

if "$helm" template lore "$chart" --set database.url= >"$out/refused.txt" 2>&1; then
    echo "the chart rendered without a database URL or secret" >&2
    exit 1
fi
grep -q 'set database.url' "$out/refused.txt" || { cat "$out/refused.txt"; exit 1; }
echo "chart ok: refuses to render without a database"

if "$helm" template lore "$chart" --set auth.adminToken=short >"$out/refused.txt" 2>&1; then
    echo "the chart rendered with a short admin token" >&2
    exit 1
fi
grep -q 'at least 32 characters' "$out/refused.txt" || { cat "$out/refused.txt"; exit 1; }
echo "chart ok: refuses a short admin token"

grep -q 'kind: Ingress' "$out/console-ingress.yaml" && grep -q 'LORE_WEB__SECURE_COOKIE' "$out/console-ingress.yaml" \
    || { echo "the console's Ingress and cookie are not wired" >&2; exit 1; }
grep -q 'name: console' "$out/defaults.yaml" || { echo "the console port is not on the Service" >&2; exit 1; }
echo "chart ok: the console has its Service port and an optional Ingress"
