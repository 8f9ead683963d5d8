#!/usr/bin/env bash
# Build the loadable Lua module `rpiv_todo.core` for one Lua flavour and place it where
# `require("rpiv_todo.core")` finds it.
#
#   scripts/build-module.sh luajit                 # -> lua/rpiv_todo/core.so (Neovim, luajit)
#   scripts/build-module.sh lua54 /some/dir/core.so
#
# Each flavour builds in its own target dir (target/module-<flavour>): a cdylib's file
# name carries no feature hash, so flavours sharing one dir would overwrite and rebuild
# each other. Cargo decides whether anything needs rebuilding; a no-op run takes a second.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
    echo "usage: $0 <luajit|lua51|lua54> [dest, default lua/rpiv_todo/core.so]" >&2
    exit 2
}

[[ $# -ge 1 && $# -le 2 ]] || usage
flavour=$1
interp_for "$flavour" >/dev/null || usage
dest=${2:-$ROOT/lua/rpiv_todo/core.so}
# RPIV_MODULE_FEATURES adds features (for tests: `test-pause`), built in a folder of
# their own so the plain build is never replaced by a test build.
extra=${RPIV_MODULE_FEATURES:-}
target_dir="${CARGO_TARGET_DIR:-$ROOT/target}/module-$flavour${extra:+-${extra//,/-}}"

lib=librpiv_todo.so
if [[ $(uname -s) == Darwin ]]; then
    lib=librpiv_todo.dylib
    # A macOS module leaves the Lua symbols for the host process to provide.
    export RUSTFLAGS="${RUSTFLAGS:-} -C link-arg=-undefined -C link-arg=dynamic_lookup"
fi

cargo build --manifest-path "$ROOT/Cargo.toml" --release --lib \
    --no-default-features --features "module,$flavour${extra:+,$extra}" --target-dir "$target_dir"

src="$target_dir/release/$lib"
mkdir -p "$(dirname "$dest")"
if ! cmp -s "$src" "$dest"; then
    # Copy then rename: a process that has the old file mapped (a running Neovim) keeps
    # its copy intact instead of crashing on a file rewritten under it.
    tmp="$dest.tmp.$$"
    cp "$src" "$tmp"
    mv -f "$tmp" "$dest"
fi
echo "rpiv_todo.core ($flavour) -> $dest"
