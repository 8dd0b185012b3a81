#!/usr/bin/env bash
# Runs one server benchmark on an earlier commit and on the working tree,
# one after the other on this machine, and prints both: a change that must
# not slow a call down (issue 28: Brief's p99 within 10 % of before) is
# judged on figures measured in the same run.
#
#   scripts/bench/before_after.sh <rev> <bench>     e.g. 305d86b brief
#
# The earlier commit is checked out in .cache/bench-before/ (a git
# worktree) and built into .cache/bench-before-target/, kept for the next
# run.
set -euo pipefail
rev="${1:?usage: bench-before-after.sh <rev> <bench>}"
bench="${2:?usage: bench-before-after.sh <rev> <bench>}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
before="$root/.cache/bench-before"
git -C "$root" worktree remove --force "$before" 2>/dev/null || rm -rf "$before"
git -C "$root" worktree add --detach "$before" "$rev" >/dev/null
# The earlier tree shares this one's tools, models and data caches.
ln -sfn "$root/.cache" "$before/.cache"
echo "# before: $(git -C "$before" log -1 --format='%h %s' | cut -c1-80)"
(cd "$before" && CARGO_TARGET_DIR="$root/.cache/bench-before-target" cargo bench -q -p lore-server --bench "$bench")
echo
echo "# after: the working tree at $(git -C "$root" log -1 --format='%h')"
(cd "$root" && cargo bench -q -p lore-server --bench "$bench")
git -C "$root" worktree remove --force "$before"
