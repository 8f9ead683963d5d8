#!/usr/bin/env bash
# Benchmarks (not tests): every row of bench/README.md's table -- w1 and w2 tool calls (JSON text
# and tables), replay from tables, the replay walk, the overlay at budget 11 from a list
# handle (and, drawn every time, with the budget changing between renders), the live paint
# per tool call -- under LuaJIT and Lua 5.4, each with the loadable
# module built for that interpreter, side by side with the plain-Lua anchor measured in
# the same process (interleaved repetitions, best and median of each); then Neovim's startup with and
# without the plugin (scripts/bench-startup.sh). Prints figures; asserts nothing.
#
#   scripts/bench.sh [runs]     (runs: interleaved repetitions per row; default 5)
#   RPIV_BENCH_FLAVOURS=luajit scripts/bench.sh    (one interpreter only)
#
# The anchor (todo.lua, overlay.lua) is read from $RPIV_ANCHOR, default ../shared/bench/anchor
# beside the repository; without it the comparison is skipped (said so) and the module's
# own figures are still printed. Workloads: bench/workloads (see its README). Needs lua-cjson.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"
runs=${1:-5}
anchor=${RPIV_ANCHOR:-$ROOT/../shared/bench/anchor}
if [[ -f $anchor/todo.lua && -f $anchor/overlay.lua ]]; then
    anchor=$(cd "$anchor" && pwd)
else
    echo "anchor comparison skipped: no todo.lua and overlay.lua in $anchor (set RPIV_ANCHOR to the anchor folder)"
    anchor=""
fi
for flavour in ${RPIV_BENCH_FLAVOURS:-luajit lua54}; do
    dir="$ROOT/target/lua-$flavour"
    scripts/build-module.sh "$flavour" "$dir/rpiv_todo/core.so" >/dev/null
    interp=$(interp_for "$flavour")
    echo
    "$interp" -e "package.cpath='$dir/?.so;'..package.cpath; package.path='$ROOT/lua/?.lua;$ROOT/lua/?/init.lua;'..package.path" \
        bench/bench.lua "$ROOT/bench/workloads" "$anchor" "$runs"
    # A shared list file: a persisted call beside a plain call plus a bare atomic write.
    "$interp" -e "package.cpath='$dir/?.so;'..package.cpath; package.path='$ROOT/lua/?.lua;$ROOT/lua/?/init.lua;'..package.path" \
        bench/shared.lua 40
done

# A persisted call through the Neovim front end on 1,000 tasks, beside its bare write.
for nvim in /usr/bin/nvim ${NVIM_NEW:-}; do
    [[ -x $nvim ]] || continue
    XDG_STATE_HOME=$(mktemp -d) "$nvim" --headless -u NONE -i NONE --noplugin \
        -c "set rtp^=$ROOT" -c "luafile $ROOT/bench/shared_nvim.lua"
done

# The MCP server on a shared list of 10,000 tasks, as an agent calls it (stdio JSON-RPC).
if cargo build --quiet --release -p rpiv_todo_mcp; then
    python3 bench/shared_server.py "$ROOT/target/release/rpiv_todo_mcp" 10000 60
fi

# Startup: `nvim --startuptime`, best of 10, with and without the plugin (README's setup({})).
scripts/bench-startup.sh 10
