#!/usr/bin/env bash
# Build the LuaJIT module (what Neovim loads) and the MCP server (rpiv_todo_mcp, what
# terminal agents start) for release, each as one asset and its checksum:
#
#   scripts/package.sh [--out DIR] [--target TRIPLE] [--npm NPMDIR]
#     -> DIR/rpiv_todo_core-<triple>.<ext>  and  DIR/rpiv_todo_core-<triple>.<ext>.sha256
#        DIR/rpiv_todo_mcp-<triple>[.exe]   and  DIR/rpiv_todo_mcp-<triple>[.exe].sha256
#     with --npm: NPMDIR/rpiv-todo-mcp-<version>.tgz (the launcher package) and
#        NPMDIR/rpiv-todo-mcp-<os>-<cpu>[-<libc>]-<version>.tgz (the server for <triple>)
#
# DIR defaults to dist/; TRIPLE to the host's (rustc -vV). <ext> is so, dylib or dll; .exe
# only on Windows. The .sha256 is in `sha256sum` format ("<hash>  <file name>"). A release
# puts these files at <base_url>/v<version>/, where require("rpiv_todo.nvim.install").run()
# looks for them. The npm tarballs are made by npm/pack.js (needs node and npm).
#
# Linux gnu targets are linked by cargo-zigbuild against glibc 2.17 (zig from PyPI's
# `ziglang`, found by cargo-zigbuild through `python3 -m ziglang`), and both results are
# checked with `objdump -T`: no symbol may need a GLIBC_ version above 2.17. Linux musl
# targets go through cargo-zigbuild too: the module linked dynamically against musl (a
# module cannot carry its own static C runtime), the server statically (it runs on any
# Linux). macOS and Windows targets build with plain cargo on their own runners
# (MACOSX_DEPLOYMENT_TARGET defaults to 11.0).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
    echo "usage: $0 [--out DIR] [--target TRIPLE] [--npm NPMDIR]" >&2
    exit 2
}

out=$ROOT/dist
target=
npm_out=
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
        --npm)
            [[ $# -ge 2 ]] || usage
            npm_out=$2
            shift 2
            ;;
        *) usage ;;
    esac
done
if [[ -z $target ]]; then
    target=$(rustc -vV | sed -n 's/^host: //p')
fi

# The newest glibc symbol version the gnu builds may need.
GLIBC_MAX=2.17
target_dir="${CARGO_TARGET_DIR:-$ROOT/target}/package"
# The server in a folder of its own: it builds the crate with other features (Lua 5.4
# compiled in) than the module.
server_target_dir="${CARGO_TARGET_DIR:-$ROOT/target}/package-mcp"
features=(--release --lib --no-default-features --features module,luajit --target-dir "$target_dir")
server=(--release -p rpiv_todo_mcp --target-dir "$server_target_dir")

need_zigbuild() {
    command -v cargo-zigbuild >/dev/null || {
        echo "cargo-zigbuild is not installed (cargo install cargo-zigbuild --locked; zig from pip install ziglang)" >&2
        exit 1
    }
}

exe=
case "$target" in
    *-linux-gnu*)
        ext=so lib=librpiv_todo.so
        need_zigbuild
        # The module unwinds with the system's libgcc_s (what LuaJIT raises errors with),
        # not zig's own libunwind: linked against a stand-in (scripts/unwind/libgcc_s.c).
        stub_dir="$target_dir/unwind-$target"
        mkdir -p "$stub_dir"
        zig_cc=(python3 -m ziglang cc)
        python3 -m ziglang version >/dev/null 2>&1 || zig_cc=(zig cc)
        "${zig_cc[@]}" -target "${target%%-*}-linux-gnu.$GLIBC_MAX" -shared -nostdlib \
            -o "$stub_dir/libgcc_s.so.1" "$ROOT/scripts/unwind/libgcc_s.c" \
            -Wl,--version-script="$ROOT/scripts/unwind/libgcc_s.map" -Wl,-soname,libgcc_s.so.1
        RUSTFLAGS="${RUSTFLAGS:-} -C link-arg=$stub_dir/libgcc_s.so.1" \
            cargo zigbuild --manifest-path "$ROOT/Cargo.toml" --target "$target.$GLIBC_MAX" "${features[@]}"
        cargo zigbuild --manifest-path "$ROOT/Cargo.toml" --target "$target.$GLIBC_MAX" "${server[@]}"
        ;;
    *-linux-musl*)
        ext=so lib=librpiv_todo.so
        need_zigbuild
        RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=-crt-static" \
            cargo zigbuild --manifest-path "$ROOT/Cargo.toml" --target "$target" "${features[@]}"
        RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static" \
            cargo zigbuild --manifest-path "$ROOT/Cargo.toml" --target "$target" "${server[@]}"
        ;;
    *-apple-darwin)
        ext=dylib lib=librpiv_todo.dylib
        # A macOS module leaves the Lua symbols for the host process (Neovim) to provide.
        MACOSX_DEPLOYMENT_TARGET=${MACOSX_DEPLOYMENT_TARGET:-11.0} \
            RUSTFLAGS="${RUSTFLAGS:-} -C link-arg=-undefined -C link-arg=dynamic_lookup" \
            cargo build --manifest-path "$ROOT/Cargo.toml" --target "$target" "${features[@]}"
        MACOSX_DEPLOYMENT_TARGET=${MACOSX_DEPLOYMENT_TARGET:-11.0} \
            cargo build --manifest-path "$ROOT/Cargo.toml" --target "$target" "${server[@]}"
        ;;
    *-windows-*)
        ext=dll lib=rpiv_todo.dll exe=.exe
        cargo build --manifest-path "$ROOT/Cargo.toml" --target "$target" "${features[@]}"
        cargo build --manifest-path "$ROOT/Cargo.toml" --target "$target" "${server[@]}"
        ;;
    *)
        echo "no packaging rule for target $target" >&2
        exit 1
        ;;
esac

# glibc_check FILE: no dynamic symbol of FILE needs a GLIBC_ version above GLIBC_MAX.
glibc_check() {
    local file=$1 newest
    # Every GLIBC_x.y the file's dynamic symbols need, newest last.
    newest=$(objdump -T "$file" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -n 1)
    if [[ -n $newest && $(printf '%s\n%s\n' "$newest" "$GLIBC_MAX" | sort -V | tail -n 1) != "$GLIBC_MAX" ]]; then
        echo "$file needs GLIBC_$newest, newer than GLIBC_$GLIBC_MAX:" >&2
        objdump -T "$file" | grep "GLIBC_$newest" >&2
        exit 1
    fi
    echo "$(basename "$file"): newest glibc symbol version needed: GLIBC_${newest:-none} (at most $GLIBC_MAX)"
}

# publish SRC ASSET: copy SRC to $out/ASSET (through a temporary name) and write its .sha256.
publish() {
    local src=$1 asset=$2
    cp "$src" "$out/$asset.tmp.$$"
    mv -f "$out/$asset.tmp.$$" "$out/$asset"
    if command -v sha256sum >/dev/null; then
        (cd "$out" && sha256sum "$asset" >"$asset.sha256")
    else
        (cd "$out" && shasum -a 256 "$asset" >"$asset.sha256")
    fi
    echo "$(crate_version) $target -> $out/$asset"
    cat "$out/$asset.sha256"
}

src=$target_dir/$target/release/$lib
asset=rpiv_todo_core-$target.$ext
server_src=$server_target_dir/$target/release/rpiv_todo_mcp$exe
server_asset=rpiv_todo_mcp-$target$exe

if [[ $target == *-linux-gnu* ]]; then
    glibc_check "$src"
    glibc_check "$server_src"
fi

mkdir -p "$out"
publish "$src" "$asset"
publish "$server_src" "$server_asset"

if [[ -n $npm_out ]]; then
    command -v node >/dev/null && command -v npm >/dev/null || {
        echo "--npm needs node and npm on PATH" >&2
        exit 1
    }
    node "$ROOT/npm/pack.js" --out "$npm_out" --version "$(crate_version)" \
        --target "$target" --binary "$out/$server_asset"
fi
