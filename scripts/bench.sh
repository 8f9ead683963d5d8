#!/usr/bin/env bash
# Benchmarks (not tests): the tool-call path over ../shared/bench w1 and w2, the overlay
# render (w4) and replay (w3), each under LuaJIT and Lua 5.4 with the loadable module
# built for that interpreter. Prints figures; asserts nothing about speed.
#   scripts/bench.sh [runs]     (runs: passes per workload, median reported; default 5)
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"
runs=${1:-5}
shared=$(cd "$ROOT/../shared/bench" && pwd)
for flavour in luajit lua54; do
    dir="$ROOT/target/lua-$flavour"
    scripts/build-module.sh "$flavour" "$dir/rpiv_todo/core.so" >/dev/null
    interp=$(interp_for "$flavour")
    echo
    "$interp" -e "package.cpath='$dir/?.so;'..package.cpath" bench/bench.lua "$shared" "$runs"
    "$interp" -e "package.cpath='$dir/?.so;'..package.cpath" bench/overlay.lua "$shared"
done
