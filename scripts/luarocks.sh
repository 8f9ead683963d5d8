#!/usr/bin/env bash
# The LuaRocks build of rpiv_todo (the rockspec's `command` build type calls this):
#
#   scripts/luarocks.sh build "$(LUA)"                           # core.so for that interpreter
#   scripts/luarocks.sh install "$(LUA)" "$(LUADIR)" "$(LIBDIR)"  # the Lua files and core.so
#
# `build` asks the interpreter LuaRocks installs for which Lua it is (LuaJIT, 5.1 or 5.4)
# and runs scripts/build-module.sh for that flavour (cargo, release) into
# target/luarocks/<flavour>/rpiv_todo/core.so. `install` copies every lua/rpiv_todo/*.lua
# (subfolders included; the LuaCATS declarations in meta/ stay out) into LUADIR and the
# library to LIBDIR/rpiv_todo/core.so, from where LuaRocks deploys them to the tree.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
    echo "usage: $0 build <lua interpreter> | install <lua interpreter> <luadir> <libdir>" >&2
    exit 2
}

# The flavour of the interpreter $1: luajit, lua51 or lua54.
flavour_of() {
    local version
    version=$("$1" -e 'io.write(type(jit) == "table" and "luajit" or _VERSION)') || return 1
    case "$version" in
        luajit) echo luajit ;;
        "Lua 5.1") echo lua51 ;;
        "Lua 5.4") echo lua54 ;;
        *)
            echo "rpiv_todo supports LuaJIT, Lua 5.1 and Lua 5.4; $1 is $version" >&2
            return 1
            ;;
    esac
}


case "${1:-}" in
    build)
        [[ $# -eq 2 ]] || usage
        flavour=$(flavour_of "$2")
        "$ROOT/scripts/build-module.sh" "$flavour" "$ROOT/target/luarocks/$flavour/rpiv_todo/core.so"
        ;;
    install)
        [[ $# -eq 4 ]] || usage
        flavour=$(flavour_of "$2")
        luadir=$3 libdir=$4
        (
            cd "$ROOT/lua"
            find rpiv_todo -name '*.lua' -not -path 'rpiv_todo/meta/*' | while read -r file; do
                mkdir -p "$luadir/$(dirname "$file")"
                cp "$file" "$luadir/$file"
            done
        )
        mkdir -p "$libdir/rpiv_todo"
        cp "$ROOT/target/luarocks/$flavour/rpiv_todo/core.so" "$libdir/rpiv_todo/core.so"
        ;;
    *) usage ;;
esac
