#!/usr/bin/env bash
# Builds the OCI image archives of `make image` from the release binaries:
#   target/images/lore-server.tar   ghcr.io/lore-dev/lore-server:<version>
#   target/images/lore-sidecar.tar  ghcr.io/lore-dev/lore-sidecar:<version>
# with buildah (Debian's package), from scratch: no registry is needed. Each
# image holds its binary, the shared libraries `ldd` names, CA certificates,
# a passwd with the non-root user lore (10001) and nothing else: no shell, no
# package manager. The server's image also holds the embedding model under
# /opt/lore/cache (the chart's image.cacheDir).
#
# Reproducible: buildah commit --timestamp sets every file's time and the
# image's creation time to the commit's time (SOURCE_DATE_EPOCH when set),
# so two builds of one commit give the same layer digests.
#
# Usage: scripts/packaging/images.sh [BINARY_DIR [OUT_DIR]]
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
binaries="${1:-$root/target/release}"
out="${2:-$root/target/images}"
cache_dir="${LORE_CACHE_DIR:-$root/.cache}"
model="$cache_dir/models/all-MiniLM-L6-v2"
registry="${LORE_IMAGE_REGISTRY:-ghcr.io/lore-dev}"

for tool in buildah ldd; do
    command -v "$tool" >/dev/null || { echo "$tool is missing: apt-get install buildah (scripts/setup/fetch_tools.sh image)" >&2; exit 1; }
done
for binary in lore-server lore-sidecar; do
    [ -x "$binaries/$binary" ] || { echo "$binaries/$binary is missing: cargo build --release --bin $binary" >&2; exit 1; }
done
[ -f "$model/model.safetensors" ] || { echo "the embedding model is missing from $model: scripts/setup/fetch_tools.sh run" >&2; exit 1; }

version="$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -n 1)"
revision="$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)"
if ! git -C "$root" diff --quiet HEAD -- 2>/dev/null; then revision="$revision-dirty"; fi
epoch="${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct 2>/dev/null || echo 0)}"
created="$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)"
source_url="$(git -C "$root" config --get remote.origin.url 2>/dev/null || true)"

scratch="$(mktemp -d)"
containers=()
cleanup() {
    for container in "${containers[@]}"; do buildah rm "$container" >/dev/null 2>&1 || true; done
    rm -rf "$scratch"
}
trap cleanup EXIT
mkdir -p "$out"

# The root filesystem of one image, staged in a folder: the binary at
# /usr/bin, its libraries where the dynamic loader looks for them, the
# certificates, the user, and the folders the binary writes to.
stage() {
    local binary="$1" rootfs="$2"
    mkdir -p "$rootfs/usr/bin" "$rootfs/etc/ssl/certs" "$rootfs/tmp"
    chmod 1777 "$rootfs/tmp"
    install -m 0755 "$binaries/$binary" "$rootfs/usr/bin/$binary"
    # ldd prints "name => /path (address)" or "/path (address)".
    ldd "$binaries/$binary" | awk '/=> \// { print $3 } /^\t\// { print $1 }' | while read -r library; do
        mkdir -p "$rootfs$(dirname "$library")"
        cp -L "$library" "$rootfs$library"
    done
    cp -L /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"
    printf 'root:x:0:0:root:/root:/usr/sbin/nologin\nlore:x:10001:10001:lore:/nonexistent:/usr/sbin/nologin\n' >"$rootfs/etc/passwd"
    printf 'root:x:0:\nlore:x:10001:\n' >"$rootfs/etc/group"
    printf 'hosts: files dns\n' >"$rootfs/etc/nsswitch.conf"
    printf '127.0.0.1 localhost\n::1 localhost\n' >"$rootfs/etc/hosts"
}

# Commits a staged root filesystem as NAME with the entrypoint and the rest
# of the configuration given, and writes it to OUT/NAME.tar.
commit() {
    local name="$1" rootfs="$2"
    shift 2
    local image="$registry/$name:$version"
    local container
    container="$(buildah from --quiet scratch)"
    containers+=("$container")
    # Copied through the mount (as root) rather than `buildah copy`, which
    # would make root own everything, the spool folder included.
    local mountpoint
    mountpoint="$(buildah mount "$container")"
    cp -a "$rootfs/." "$mountpoint/"
    buildah umount "$container" >/dev/null
    buildah config \
        --user 10001:10001 \
        --workingdir / \
        --env PATH=/usr/bin \
        --env SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
        --label org.opencontainers.image.title="$name" \
        --label org.opencontainers.image.version="$version" \
        --label org.opencontainers.image.revision="$revision" \
        --label org.opencontainers.image.created="$created" \
        --label org.opencontainers.image.licenses=Apache-2.0 \
        ${source_url:+--label org.opencontainers.image.source="$source_url"} \
        "$@" "$container"
    buildah commit --quiet --timestamp "$epoch" --identity-label=false --omit-history "$container" "$image" >/dev/null
    rm -f "$out/$name.tar"
    buildah push --quiet "$image" "oci-archive:$out/$name.tar:$image"
    echo "$out/$name.tar: $image, $(du -k "$out/$name.tar" | cut -f1) KiB"
}

started=$(date +%s)

server_root="$scratch/lore-server"
stage lore-server "$server_root"
mkdir -p "$server_root/opt/lore/cache/models"
cp -r "$model" "$server_root/opt/lore/cache/models/all-MiniLM-L6-v2"
# `serve` by default; the chart's migration Job runs `migrate`.
commit lore-server "$server_root" \
    --entrypoint '["/usr/bin/lore-server"]' \
    --cmd serve \
    --env LORE_CACHE_DIR=/opt/lore/cache \
    --port 50051 --port 8080

sidecar_root="$scratch/lore-sidecar"
stage lore-sidecar "$sidecar_root"
mkdir -p "$sidecar_root/var/spool/lore"
chown 10001:10001 "$sidecar_root/var/spool/lore"
commit lore-sidecar "$sidecar_root" \
    --entrypoint '["/usr/bin/lore-sidecar"]' \
    --env LORE_SIDECAR_SPOOL_DIR=/var/spool/lore \
    --env LORE_SIDECAR_LISTEN=127.0.0.1:50052 \
    --port 50052

echo "built in $(( $(date +%s) - started )) s"
