#!/usr/bin/env bash
# Benchmarks (not tests): every row of bench/README.md's table -- w1 and w2 tool calls (JSON text
# and tables), replay from tables, the replay walk, the overlay at budget 11 from a list
# handle (and, drawn every time, with the budget changing between renders), the live paint
# per tool call -- under LuaJIT and Lua 5.4, each with the loadable
# module built for that interpreter, side by side with the plain-Lua anchor measured in
# the same process (interleaved repetitions, best and median of each); then one tool call
# through the Neovim front end with the panel painted, normal and codecompanion strict form
# (bench/front_end_nvim.lua; RPIV_BENCH_BASE=<git revision> runs it against that revision
# too); the shared list file's rows; the co-owned list's note and checklist line in bytes
# (bench/sizes.lua); then Neovim's startup with and without the plugin
# (scripts/bench-startup.sh). Prints figures; asserts nothing.
#
#   scripts/bench.sh [runs]     (runs: interleaved repetitions per row; default 5)
#   RPIV_BENCH_FLAVOURS=luajit scripts/bench.sh    (one interpreter only)
#   RPIV_BENCH_BASE=main scripts/bench.sh          (the front-end rows against main too)
#   scripts/bench.sh --front-end                  (those rows only)
#   scripts/bench.sh --instructions               (bench.lua's rows in instructions, callgrind;
#                                                  with RPIV_BENCH_BASE, against that revision)
#   scripts/bench.sh --floor [runs]               (the replayed snapshot's copy under LuaJIT beside
#                                                  the least the C API can do: bench/floor/)
#   scripts/bench.sh --tokens                     (the tool's text, replies and re-injected text
#                                                  in tokens, before and after; token_counts below)
#   scripts/bench.sh --hooks [runs]               (the terminal agents' hooks, ms a run: bench/hook.py)
#   scripts/bench.sh --own-lists [options]        (issue 39's session done by Claude Code, Codex and
#                                                  Gemini CLI with their own lists and with ours,
#                                                  the bodies in tokens, as sent and cached: own_lists.py,
#                                                  whose --agents and --claude-model it passes on)
#   scripts/bench.sh --own-lists-long [options]   (the same list work in a long session by the same
#                                                  agents: resumes, idle turns, a compaction; the
#                                                  reminders and the list put back, in tokens:
#                                                  own_lists.py --session long)
#   scripts/bench.sh --tokens-agents              (the request bodies of the real terminal agents
#                                                  in tokens; agent_token_counts below)
#
# The anchor (todo.lua, overlay.lua) is read from $RPIV_ANCHOR, default ../shared/bench/anchor
# beside the repository; without it the comparison is skipped (said so) and the module's
# own figures are still printed. Workloads: bench/workloads (see its README). Needs lua-cjson.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"
# One tool call through the Neovim front end, panel painted: `require("rpiv_todo.nvim")
# .execute` and the codecompanion adapter's strict form (bench/front_end_nvim.lua). With
# RPIV_BENCH_BASE=<git revision> the same rows run against that revision's Lua (exported to a
# scratch folder, with this build's core), interleaved in this run, best median of 5 each.
front_end_rows() {
    local nvim=$1 base_dir="" root label out rounds=5 i
    if [[ -n ${RPIV_BENCH_BASE:-} ]]; then
        base_dir=$(mktemp -d)
        git -C "$ROOT" archive "$RPIV_BENCH_BASE" lua plugin | tar -x -C "$base_dir"
        cp "$ROOT/target/lua-luajit/rpiv_todo/core.so" "$base_dir/lua/rpiv_todo/core.so"
    fi
    out=$(mktemp)
    for ((i = 0; i < rounds; i++)); do
        for root in ${base_dir:+"$base_dir"} "$ROOT"; do
            label=this
            [[ $root == "$base_dir" ]] && label="$RPIV_BENCH_BASE"
            RPIV_BENCH_LABEL=$label XDG_STATE_HOME=$(mktemp -d) "$nvim" --headless -u NONE -i NONE \
                --noplugin -c "set rtp^=$root" -c "luafile $ROOT/bench/front_end_nvim.lua" >>"$out" 2>&1
        done
    done
    echo "$(nvim_version "$nvim"): one tool call, panel painted (best of $rounds runs, µs; the mean counts garbage collection):"
    awk '$1 == "front_end" {
            split($4, m, "="); split($5, a, "="); key = $3 " " $2
            if (!(key in med) || m[2] + 0 < med[key]) med[key] = m[2] + 0
            if (!(key in mean) || a[2] + 0 < mean[key]) mean[key] = a[2] + 0
        }
        END { for (k in med) printf "  %-40s median %8.1f   mean %8.1f\n", k, med[k], mean[k] }' "$out" | sort
    rm -f "$out"
    [[ -n $base_dir ]] && rm -rf "$base_dir"
    return 0
}

# The copy of a replayed snapshot under LuaJIT beside bench/floor/floor.c, built with cc
# against the LuaJIT headers the vendored build left in target/ (mlua-sys's luajit-build).
floor_rows() {
    local runs=$1 dir="$ROOT/target/lua-luajit" headers out anchor=${RPIV_ANCHOR:-$ROOT/../shared/bench/anchor}
    [[ -f $anchor/todo.lua ]] || { echo "no anchor todo.lua in $anchor (set RPIV_ANCHOR)" >&2; return 1; }
    scripts/build-module.sh luajit "$dir/rpiv_todo/core.so" >/dev/null
    headers=$(find "$ROOT/target" -path '*mlua-sys-*/out/luajit-build/src/lua.h' -print -quit)
    if [[ -z $headers ]]; then
        cargo test --manifest-path "$ROOT/Cargo.toml" --no-default-features --features luajit,vendored --no-run >/dev/null 2>&1
        headers=$(find "$ROOT/target" -path '*mlua-sys-*/out/luajit-build/src/lua.h' -print -quit)
    fi
    [[ -n $headers ]] || { echo "no LuaJIT headers under target/ (a vendored luajit build leaves them)" >&2; return 1; }
    out=$(mktemp -d)
    cc -O2 -shared -fPIC -I"$(dirname "$headers")" "$ROOT/bench/floor/floor.c" -o "$out/floor.so"
    luajit -e "package.cpath='$out/?.so;$dir/?.so;'..package.cpath; package.path='$ROOT/lua/?.lua;$ROOT/lua/?/init.lua;'..package.path" \
        "$ROOT/bench/floor/floor.lua" "$ROOT/bench/workloads" "$anchor" "$runs"
    rm -rf "$out"
}

nvim_version() {
    "$1" --version | head -n 1
}

# Every Neovim's front-end rows, with the LuaJIT build in place for them.
front_end_all() {
    local nvim
    scripts/build-module.sh luajit "$ROOT/target/lua-luajit/rpiv_todo/core.so" >/dev/null
    cp "$ROOT/target/lua-luajit/rpiv_todo/core.so" "$ROOT/lua/rpiv_todo/core.so"
    for nvim in /usr/bin/nvim ${NVIM_NEW:-}; do
        [[ -x $nvim ]] || continue
        front_end_rows "$nvim"
    done
}

# bench.lua's rows (the module's side) in machine instructions per unit, counted by
# callgrind (bench/instructions.lua), for each flavour; with RPIV_BENCH_BASE=<revision> that
# revision too, built in a scratch worktree, and the ratio this / base. Counts barely move
# between runs where times move by up to 2x, so an A/B reads row by row.
instruction_counts() {
    local flavour=$1 root=$2 cpath=$3 out interp
    interp=$(interp_for "$flavour")
    out=$(mktemp -d)
    (cd "$out" && valgrind --tool=callgrind --dump-before=remove --callgrind-out-file="$out/cg.%p" \
        "$interp" -e "package.cpath='$cpath/?.so;'..package.cpath; package.path='$root/lua/?.lua;$root/lua/?/init.lua;'..package.path" \
        "$ROOT/bench/instructions.lua" "$ROOT/bench/workloads" >"$out/labels" 2>"$out/log")
    # Part 1 is the set-up; part k+1 is row k; the first row is the collection alone.
    find "$out" -name 'cg.*.*' -printf '%f\n' | sort -t. -k3 -n | tail -n +2 |
        head -n "$(wc -l <"$out/labels")" | (cd "$out" && xargs -r -n1 awk '/^summary:/ { print $2 }') |
        paste "$out/labels" - |
        awk -F'\t' 'NR == 1 { gc = $3 } NR > 1 { printf "%s\t%.0f\n", $1, ($3 - gc) / $2 }'
    rm -rf "$out"
}

instructions_all() {
    local flavour base_dir="" base_target="$ROOT/target/bench-base"
    command -v valgrind >/dev/null || { echo "valgrind is not installed"; return 1; }
    if [[ -n ${RPIV_BENCH_BASE:-} ]]; then
        base_dir=$(mktemp -d)
        git -C "$ROOT" worktree add --detach "$base_dir" "$RPIV_BENCH_BASE" >/dev/null
    fi
    for flavour in ${RPIV_BENCH_FLAVOURS:-luajit lua54}; do
        scripts/build-module.sh "$flavour" "$ROOT/target/lua-$flavour/rpiv_todo/core.so" >/dev/null
        echo
        echo "$(interp_for "$flavour"): instructions per unit (bench.lua's units)${base_dir:+, this and $RPIV_BENCH_BASE}"
        if [[ -z $base_dir ]]; then
            instruction_counts "$flavour" "$ROOT" "$ROOT/target/lua-$flavour" |
                awk -F'\t' '{ printf "  %-58s %12s\n", $1, $2 }'
            continue
        fi
        (cd "$base_dir" && CARGO_TARGET_DIR=$base_target scripts/build-module.sh "$flavour" \
            "$base_dir/target/lua-$flavour/rpiv_todo/core.so" >"$base_dir/build.log" 2>&1) ||
            { cat "$base_dir/build.log"; return 1; }
        paste <(instruction_counts "$flavour" "$ROOT" "$ROOT/target/lua-$flavour") \
            <(instruction_counts "$flavour" "$base_dir" "$base_dir/target/lua-$flavour" | cut -f2) |
            awk -F'\t' '{ printf "  %-58s %12s %12s %6.2f\n", $1, $2, $3, $2 / $3 }'
    done
    if [[ -n $base_dir ]]; then
        git -C "$ROOT" worktree remove --force "$base_dir"
    fi
    return 0
}

# The token bench (bench/tokens.mjs): what the tool's definition, a scripted session's
# calls and replies, and the re-injected texts cost in tokens, counted offline with
# @anthropic-ai/tokenizer and o200k_base (gpt-tokenizer), installed from npm into
# $RPIV_BENCH_NPM (default ~/.cache/rpiv_todo/bench-npm) on first use; ours at
# RPIV_BENCH_BASE (default acfa93d, before issue 39) and in this tree, beside the agents' own
# lists read out of the pinned agents in $RPIV_CLI_CACHE (scripts/setup-dev.sh installs them).
token_counts() {
    local npm_dir=${RPIV_BENCH_NPM:-$HOME/.cache/rpiv_todo/bench-npm} base=${RPIV_BENCH_BASE:-acfa93d}
    local module_dir="${CARGO_TARGET_DIR:-$ROOT/target}/bench-tokens" work
    if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
        echo "token bench skipped: node and npm are needed (scripts/setup-dev.sh installs them)"
        return 0
    fi
    if [[ ! -d $npm_dir/node_modules/@anthropic-ai/tokenizer || ! -d $npm_dir/node_modules/gpt-tokenizer ]]; then
        echo "token bench: installing @anthropic-ai/tokenizer@0.0.4 and gpt-tokenizer@4.0.0 into $npm_dir"
        mkdir -p "$npm_dir"
        npm install --no-audit --no-fund --prefix "$npm_dir" @anthropic-ai/tokenizer@0.0.4 gpt-tokenizer@4.0.0 >/dev/null
    fi
    scripts/build-module.sh lua54 "$module_dir/rpiv_todo/core.so" >/dev/null
    work=$(mktemp -d)
    mkdir -p "$work/base"
    git -C "$ROOT" archive "$base" lua | tar -x -C "$work/base"
    for tree in base this; do
        local lua_dir="$ROOT/lua"
        [[ $tree == base ]] && lua_dir="$work/base/lua"
        LUA_PATH="$lua_dir/?.lua;$lua_dir/?/init.lua;;" LUA_CPATH="$module_dir/?.so;;" \
            lua5.4 "$ROOT/bench/tokens.lua" >"$work/$tree.json"
    done
    node "$ROOT/bench/tokens_builtin.mjs" "${RPIV_CLI_CACHE:-$HOME/.cache/rpiv_todo/terminal-clis}" >"$work/builtin.json"
    node "$ROOT/bench/tokens.mjs" "$npm_dir" "$base" "$work/base.json" "$work/this.json" "$work/builtin.json"
    rm -rf "$work"
}

# The same counted in what the real agents send: tests/terminal/run.py runs each of
# ${RPIV_BENCH_AGENTS:-claude codex gemini} against the scripted model with this checkout's
# MCP server (scripts/mcp.sh; built here when missing) and keeps the request bodies;
# bench/tokens_agents.mjs counts them (the whole bodies, the todo tool in them, and the
# agent's own list tools in the run that offers them).
agent_token_counts() {
    local npm_dir=${RPIV_BENCH_NPM:-$HOME/.cache/rpiv_todo/bench-npm} agent kept args=()
    token_counts >/dev/null # the tokenizers, installed on first use
    cargo build --release -p rpiv_todo_mcp >/dev/null 2>&1
    for agent in ${RPIV_BENCH_AGENTS:-claude codex gemini qwen opencode}; do
        kept=$(python3 tests/terminal/run.py "$agent" --server script --keep 2>&1 | sed -n 's/^# kept //p')
        if [[ -z $kept ]]; then
            echo "$agent: no recording (tests/terminal/run.py $agent says why)"
            continue
        fi
        # shellcheck disable=SC2012 # the largest recording is the session's
        args+=("$agent-ours=$(ls -S "$kept"/requests-*.json | head -n 1)")
        if compgen -G "$kept/first/requests-*.json" >/dev/null; then
            # shellcheck disable=SC2012
            args+=("$agent-own-list-one-turn=$(ls -S "$kept"/first/requests-*.json | head -n 1)")
        fi
    done
    [[ ${#args[@]} -gt 0 ]] && node "$ROOT/bench/tokens_agents.mjs" "$npm_dir" "${args[@]}"
    return 0
}

# Issue 39's scripted session, done by each real agent with its own list and with rpiv_todo
# (bench/own_lists.py, the release server, in a network namespace of loopback only when
# unshare allows), counted by bench/tokens_agents.mjs. $1: the session, short (default) or
# long; the rest go to own_lists.py (--agents, --claude-model).
own_list_counts() {
    local npm_dir=${RPIV_BENCH_NPM:-$HOME/.cache/rpiv_todo/bench-npm} out recordings session=${1:-short}
    shift || true
    token_counts >/dev/null # the tokenizers, installed on first use
    cargo build --release -p rpiv_todo_mcp >/dev/null 2>&1
    out=$(mktemp -d)
    local run=(python3 "$ROOT/bench/own_lists.py" "$out" --session "$session" "$@")
    if unshare -n true 2>/dev/null; then
        run=(unshare -n sh -c 'ip link set lo up && exec "$@"' sh "${run[@]}")
    fi
    mapfile -t recordings < <("${run[@]}")
    [[ ${#recordings[@]} -gt 0 ]] && node "$ROOT/bench/tokens_agents.mjs" "$npm_dir" "${recordings[@]}"
    rm -rf "$out"
    return 0
}

if [[ ${1:-} == --tokens ]]; then
    token_counts
    exit 0
fi
if [[ ${1:-} == --own-lists ]]; then
    own_list_counts short "${@:2}"
    exit 0
fi
if [[ ${1:-} == --own-lists-long ]]; then
    own_list_counts long "${@:2}"
    exit 0
fi
if [[ ${1:-} == --tokens-agents ]]; then
    agent_token_counts
    exit 0
fi
if [[ ${1:-} == --hooks ]]; then
    # The terminal agents' hooks (rpiv_todo_mcp hook EVENT), wall time per run, goal < 50 ms.
    cargo build --release -q -p rpiv_todo_mcp
    python3 "$ROOT/bench/hook.py" "${CARGO_TARGET_DIR:-$ROOT/target}/release/rpiv_todo_mcp" "${2:-50}"
    exit 0
fi
if [[ ${1:-} == --instructions ]]; then
    instructions_all
    exit 0
fi
if [[ ${1:-} == --floor ]]; then
    floor_rows "${2:-15}"
    exit 0
fi
if [[ ${1:-} == --front-end ]]; then
    front_end_all
    exit 0
fi
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

# The co-owned list: the note that ends a reply when others changed the list, and a line of
# the Markdown checklist, in bytes (bench/sizes.lua).
echo
luajit -e "package.cpath='$ROOT/target/lua-luajit/?.so;'..package.cpath; package.path='$ROOT/lua/?.lua;$ROOT/lua/?/init.lua;'..package.path" \
    bench/sizes.lua

# A persisted call through the Neovim front end on 1,000 tasks, beside its bare write.
for nvim in /usr/bin/nvim ${NVIM_NEW:-}; do
    [[ -x $nvim ]] || continue
    XDG_STATE_HOME=$(mktemp -d) "$nvim" --headless -u NONE -i NONE --noplugin \
        -c "set rtp^=$ROOT" -c "luafile $ROOT/bench/shared_nvim.lua"
done

front_end_all

# The MCP server on a shared list of 10,000 tasks, as an agent calls it (stdio JSON-RPC).
if cargo build --quiet --release -p rpiv_todo_mcp; then
    python3 bench/shared_server.py "$ROOT/target/release/rpiv_todo_mcp" 10000 60
fi

# Startup: `nvim --startuptime`, best of 10, with and without the plugin (README's setup({})).
scripts/bench-startup.sh 10

# The token bench (token_counts above).
token_counts
