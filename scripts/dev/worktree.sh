#!/usr/bin/env bash
# Make a git worktree with its own target dir whose dependency artifacts are hard links to the
# main checkout's (never the workspace crates': those are rebuilt in place and a hard link
# would let one tree's build overwrite the other's). Build with the same package selection as
# main's build (`cargo test --workspace ...`): `cargo test -p X` resolves other features for
# the dependencies and so rebuilds them.
#   scripts/dev/worktree.sh NAME [BASE]   -> ../wt-NAME on a new branch NAME (from BASE, default HEAD)
#   scripts/dev/worktree.sh --link NAME   -> (again) links main's dependency artifacts into ../wt-NAME/target
#   scripts/dev/worktree.sh --remove NAME -> removes the worktree and its target dir
set -euo pipefail
cd "$(dirname "$0")/../.."
main=$(pwd)
if [ "${1:-}" = "--remove" ]; then
  wt="$main/../wt-$2"
  git worktree remove --force "$wt"
  exit 0
fi
link_only=0
[ "${1:-}" = "--link" ] && { link_only=1; shift; }
name=${1:?usage: worktree.sh NAME [BASE]}
base=${2:-HEAD}
wt="$main/../wt-$name"
if [ $link_only = 0 ]; then
  [ -e "$wt" ] && { echo "error: $wt exists" >&2; exit 1; }
  git worktree add -q -b "$name" "$wt" "$base"
fi
# every target name of the workspace (crates, tests, benches, binaries), as cargo names files
ours=$(cargo metadata --no-deps --format-version 1 | python3 -c '
import json, sys
for p in json.load(sys.stdin)["packages"]:
    for n in [p["name"]] + [t["name"] for t in p["targets"]]:
        print(n.replace("-", "_")); print(n)')
is_ours() { # file name
  local b=${1#lib} n
  for n in $ours; do case "$b" in "$n"|"$n"-*|"$n".*) return 0 ;; esac; done
  return 1
}
for profile in debug release; do
  src="$main/target/$profile"
  [ -d "$src" ] || continue
  dst="$wt/target/$profile"
  mkdir -p "$dst/deps" "$dst/build" "$dst/.fingerprint"
  for sub in deps build .fingerprint; do
    for f in "$src/$sub"/*; do
      [ -e "$f" ] || continue
      b=$(basename "$f")
      is_ours "$b" && continue
      [ -e "$dst/$sub/$b" ] && continue
      # Only compiled artifacts are hard links (rustc and the linker replace them, never
      # write into them). Fingerprints and build-script records are rewritten in place by
      # cargo: a hard link there would let one tree's rebuild touch the other's mtimes and
      # cascade rebuilds through every tree, so they are copied.
      if [ "$sub" = deps ]; then cp -al "$f" "$dst/$sub/"; else cp -a "$f" "$dst/$sub/"; fi
    done
  done
done
echo "$wt"
