#!/usr/bin/env bash
# Build the LuaJIT module (what Neovim loads) for release, as one asset and its checksum:
#
#   scripts/package.sh [--out DIR] [--target TRIPLE]
#     -> DIR/rpiv_todo_core-<triple>.<ext>  and  DIR/rpiv_todo_core-<triple>.<ext>.sha256
#
# DIR defaults to dist/; TRIPLE to the host's (rustc -vV). <ext> is so, dylib or dll. The
# .sha256 is in `sha256sum` format ("<hash>  <file name>"). A release puts both files at
# <base_url>/v<version>/, where require("rpiv_todo.install").run() looks for them.
#
# Linux gnu targets are linked by cargo-zigbuild against glibc 2.17 (zig from PyPI's
# `ziglang`, found by cargo-zigbuild through `python3 -m ziglang`), and the result is
# checked with `objdump -T`: no symbol may need a GLIBC_ version above 2.17. Linux musl
# targets go through cargo-zigbuild too, linked dynamically against musl (a module cannot
# carry its own static C runtime). macOS and Windows targets build with plain cargo on
# their own runners (MACOSX_DEPLOYMENT_TARGET defaults to 11.0).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
    echo "usage: $0 [--out DIR] [--target TRIPLE]" >&2
    exit 2
}

out=$ROOT/dist
target=
while [[ $# -gt 0 ]]; do
    case "$1" in
        --out)
            [[ $# -ge 2 ]] || usage
            out=$2
            shift 2
            ;;
        --target)
            [[ $# -ge 2 ]] || usage
            target=$2
            shift 2
            ;;
        *) usage ;;
    esac
done
if [[ -z $target ]]; then
    target=$(rustc -vV | sed -n 's/^host: //p')
fi

# The newest glibc symbol version the gnu modules may need.
GLIBC_MAX=2.17
target_dir="${CARGO_TARGET_DIR:-$ROOT/target}/package"
features=(--release --lib --no-default-features --features module,luajit --target-dir "$target_dir")

case "$target" in
    *-linux-gnu*)
        ext=so lib=librpiv_todo.so
        command -v cargo-zigbuild >/dev/null || {
            echo "cargo-zigbuild is not installed (cargo install cargo-zigbuild --locked; zig from pip install ziglang)" >&2
            exit 1
        }
        cargo zigbuild --manifest-path "$ROOT/Cargo.toml" --target "$target.$GLIBC_MAX" "${features[@]}"
        ;;
    *-linux-musl*)
        ext=so lib=librpiv_todo.so
        command -v cargo-zigbuild >/dev/null || {
            echo "cargo-zigbuild is not installed (cargo install cargo-zigbuild --locked; zig from pip install ziglang)" >&2
            exit 1
        }
        RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=-crt-static" \
            cargo zigbuild --manifest-path "$ROOT/Cargo.toml" --target "$target" "${features[@]}"
        ;;
    *-apple-darwin)
        ext=dylib lib=librpiv_todo.dylib
        # A macOS module leaves the Lua symbols for the host process (Neovim) to provide.
        MACOSX_DEPLOYMENT_TARGET=${MACOSX_DEPLOYMENT_TARGET:-11.0} \
            RUSTFLAGS="${RUSTFLAGS:-} -C link-arg=-undefined -C link-arg=dynamic_lookup" \
            cargo build --manifest-path "$ROOT/Cargo.toml" --target "$target" "${features[@]}"
        ;;
    *-windows-*)
        ext=dll lib=rpiv_todo.dll
        cargo build --manifest-path "$ROOT/Cargo.toml" --target "$target" "${features[@]}"
        ;;
    *)
        echo "no packaging rule for target $target" >&2
        exit 1
        ;;
esac

src=$target_dir/$target/release/$lib
asset=rpiv_todo_core-$target.$ext

if [[ $target == *-linux-gnu* ]]; then
    # Every GLIBC_x.y the module's dynamic symbols need, newest last.
    newest=$(objdump -T "$src" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -n 1)
    if [[ -n $newest && $(printf '%s\n%s\n' "$newest" "$GLIBC_MAX" | sort -V | tail -n 1) != "$GLIBC_MAX" ]]; then
        echo "$src needs GLIBC_$newest, newer than GLIBC_$GLIBC_MAX:" >&2
        objdump -T "$src" | grep "GLIBC_$newest" >&2
        exit 1
    fi
    echo "newest glibc symbol version needed: GLIBC_${newest:-none} (at most $GLIBC_MAX)"
fi

mkdir -p "$out"
cp "$src" "$out/$asset.tmp.$$"
mv -f "$out/$asset.tmp.$$" "$out/$asset"
if command -v sha256sum >/dev/null; then
    (cd "$out" && sha256sum "$asset" >"$asset.sha256")
else
    (cd "$out" && shasum -a 256 "$asset" >"$asset.sha256")
fi
echo "$(crate_version) $target -> $out/$asset"
cat "$out/$asset.sha256"
