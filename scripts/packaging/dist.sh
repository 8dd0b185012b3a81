#!/usr/bin/env bash
# Writes the tarball of `make dist` for agent machines:
#   target/dist/lore-<version>-<arch>-linux.tar.gz        lore, lore-sidecar,
#                                                         the sidecar's systemd
#                                                         unit and SHA256SUMS
#   target/dist/lore-<version>-<arch>-linux.tar.gz.sha256 the tarball's own sum
# from the agent profile's binaries (Cargo.toml). Reproducible like the
# images: names sorted, times the commit's, owners 0, gzip without a name
# or time.
#
# Usage: scripts/packaging/dist.sh [BINARY_DIR [OUT_DIR]]
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
binaries="${1:-$root/target/agent}"
out="${2:-$root/target/dist}"
for binary in lore lore-sidecar; do
    [ -x "$binaries/$binary" ] || { echo "$binaries/$binary is missing: cargo build --profile agent --bin $binary" >&2; exit 1; }
done

version="$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -n 1)"
epoch="${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct 2>/dev/null || echo 0)}"
name="lore-$version-$(uname -m)-linux"

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
folder="$scratch/$name"
mkdir -p "$folder" "$out"
install -m 0755 "$binaries/lore" "$binaries/lore-sidecar" "$folder/"
install -m 0644 "$root/deploy/systemd/lore-sidecar.service" "$folder/"
(cd "$folder" && sha256sum lore lore-sidecar lore-sidecar.service >SHA256SUMS)

tarball="$out/$name.tar.gz"
tar --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner \
    -C "$scratch" -cf - "$name" | gzip -n -9 >"$tarball.tmp"
mv "$tarball.tmp" "$tarball"
(cd "$out" && sha256sum "$name.tar.gz" >"$name.tar.gz.sha256")
echo "$tarball: $(du -k "$tarball" | cut -f1) KiB"
cat "$out/$name.tar.gz.sha256"
