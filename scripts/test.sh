#!/usr/bin/env bash
# The project's test command: installs what the tests need when it is missing
# (scripts/setup-dev.sh), then runs every check and prints one summary. Exits non-zero
# when anything failed.
#
#   1. scripts/setup-dev.sh: the tools (apt-get, pip, cargo install, and the pinned
#      terminal agents from npm), each only when missing; a failed install fails this step,
#      and the checks that need the tool fail too (never a silent skip). A terminal agent
#      that cannot be installed has its cases listed as skipped with the reason
#   2. cargo fmt --check, cargo clippy -D warnings; stylua --check and luacheck over the
#      Lua files (.stylua.toml, .luacheckrc); cargo doc with warnings as errors; cargo
#      package --list without warnings, build outputs or missing sources; the help
#      generated and fresh (scripts/gen-help.lua --check); emmylua_check over the
#      repository and the README's configuration blocks (scripts/emmylua-check.sh); every
#      relative link and #anchor in the Markdown docs resolves (scripts/check-links.py)
#   3. scripts/features.sh: cargo test for every embedded flavour, the three loadable
#      builds (target/lua-<flavour>/rpiv_todo/core.so), the refused combinations
#   4. tests/lua/*_spec.lua in luajit, lua5.1 and lua5.4, each against its own build;
#      tests/hostile/hostile.lua and finalizers.lua in each, stderr captured and required empty;
#      the Lua 5.4 specs again under Debian's valgrind (memcheck): no error, nothing
#      definitely lost (every spec; RPIV_VALGRIND makes the slowest loops shorter there)
#   5. tests/loader/*: require("rpiv_todo.core") from the interpreters and both Neovims,
#      wrong-flavour and missing-module cases
#   6. tests/nvim/*_spec.lua in both Neovims (plugin on 'runtimepath', LuaJIT build at
#      lua/rpiv_todo/core.so); tests/agents/*_spec.lua: the adapters inside the real agent
#      plugins, each spec found by its name and run as its header says (see agent_specs;
#      pinned in $RPIV_DEPS, default ../shared/deps; listed as skipped without them), and
#      their recorded request bodies checked with Python jsonschema (pip, when missing);
#      the README's codecompanion and avante blocks against tests/agents/server.py (a
#      scripted OpenAI-compatible server on 127.0.0.1) over the plugins' own HTTP client
#      tests/screen/*_spec.lua: the current Neovim in a tmux pane (Debian's tmux), keys
#      through send-keys, what a person sees through capture-pane
#   6b. the MCP server (examples/mcp, scripts/mcp.sh): cargo test -p rpiv_todo_mcp, its
#      release build staying fresh when lua/rpiv_todo/core.so is written, the official
#      Python SDK (pip `mcp`, when missing) as its client with every message checked
#      against the published schema, by default and with --structured, and scripts/mcp.sh
#      answering initialize in under 100 ms (tests/mcp/client_test.py), and the server
#      beside a Neovim (tests/mcp/editor_spec.lua)
#   6b'. several programs on one persisted list (tests/shared/writers.py): forced
#      interleavings, odd states, SIGKILL, two MCP servers, the server and a Neovim, two Neovims
#   6c. the README's blocks for the terminal agents (tests/terminal/run.py): Claude Code,
#      Codex CLI, Gemini CLI and Qwen Code, pinned, run headless against a scripted model on
#      127.0.0.1 (in a network namespace of their own when unshare allows), the server
#      started by npx -y from a local registry (npm tarballs packed from the built server) and by
#      scripts/mcp.sh: the tool offered, each reply text as the model sees it, the list in
#      Neovim, the agent's own todo tool off; then Claude Code and Codex on one list
#   7. the example host (examples/host, the package scripts/run.sh runs): its CLI tests
#      (cargo test -p rpiv_todo_host: piped output without escape codes, --help, exit
#      codes; its session output is asserted by the contract tests), and that running it
#      builds none of the crate's dev-dependencies
#   8. the rockspec: `luarocks make` into a temporary tree for Lua 5.4 and for Lua 5.1,
#      then tests/luarocks/rock_spec.lua loads rpiv_todo from that tree and runs a call
#   9. install without Rust (tests/install/install.sh): scripts/package.sh (cargo-zigbuild
#      from crates.io and zig from PyPI's ziglang, installed by step 1 when missing) and its
#      glibc 2.17 check with objdump -T, for the module and the MCP server; a fresh clone
#      without cargo installs both from a local release on 127.0.0.1 and scripts/mcp.sh
#      starts the server; refused downloads; the npm tarballs installed offline and run
#      through npx; lazy.nvim ($RPIV_DEPS) and vim.pack
#
# `scripts/test.sh STAGE...` runs only those stages (`scripts/test.sh --help` lists them);
# `scripts/test.sh --install-only` does step 1 alone (as scripts/setup-dev.sh does);
# NVIM_NEW=<path> picks the current Neovim instead of the one pip installs.
# The benchmark is not a test and is not run here. Every step runs even after an
# earlier one failed, so one run reports everything; steps that need a build that
# failed are reported as not run.
set -uo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$ROOT/scripts/features.sh"
# shellcheck source=tests/install/install.sh
source "$ROOT/tests/install/install.sh"
cd "$ROOT" || exit 1

NVIM_OLD=/usr/bin/nvim
NVIM_NEW=${NVIM_NEW:-}
# The folders StyLua formats (`stylua lua tests scripts examples plugin` fixes them).
STYLUA_DIRS=(lua tests scripts examples plugin)
SPEC_TIMEOUT=300
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/rpiv-test.XXXXXX")
trap 'rm -rf "$SCRATCH"' EXIT

stylua_check() {
    local bin
    bin=$(find_stylua) || { echo "stylua is not installed (cargo install stylua --locked)"; return 1; }
    "$bin" --check "${STYLUA_DIRS[@]}"
}

lua_lint() {
    command -v luacheck >/dev/null || { echo "luacheck is not installed (apt-get install lua-check)"; return 1; }
    luacheck --no-color --quiet .
}

# doc/rpiv_todo.txt is generated whole from the annotations in lua/; fail when
# it is stale (regenerate with `luajit scripts/gen-help.lua`).
help_fresh() {
    luajit scripts/gen-help.lua --check
}

# Run "$@" with a hang guard; say so plainly when the process died of a signal.
guarded() {
    local rc=0
    timeout "$SPEC_TIMEOUT" "$@" || rc=$?
    if [[ $rc -eq 124 ]]; then
        echo "timed out after ${SPEC_TIMEOUT}s: $*"
    elif [[ $rc -gt 128 ]]; then
        echo "CRASHED with signal $((rc - 128)): $*"
    fi
    return "$rc"
}

# run_lua FLAVOUR CPATH_DIR FILE [VAR=VALUE...]: FILE in the flavour's interpreter, with
# the Lua search paths set for the project: scripts from lua/, test helpers from
# tests/lua/, the native module from CPATH_DIR (then the interpreter's defaults, for
# cjson). The VAR=VALUE pairs go to its environment.
run_lua() {
    local flavour=$1 cpath_dir=$2 file=$3
    shift 3
    local path="$ROOT/lua/?.lua;$ROOT/lua/?/init.lua;$ROOT/tests/lua/?.lua;;"
    local cpath="$cpath_dir/?.so;;"
    guarded env -u LUA_INIT -u LUA_INIT_5_4 \
        LUA_PATH="$path" LUA_PATH_5_4="$path" LUA_CPATH="$cpath" LUA_CPATH_5_4="$cpath" \
        RPIV_ROOT="$ROOT" RPIV_FLAVOUR="$flavour" "$@" \
        "$(interp_for "$flavour")" "$file"
}

# run_nvim NVIM FILE: FILE through scripts/nvim-runner.lua in a clean headless Neovim
# (no user config, no shada, state and logs in a scratch folder, no LUA_PATH leaking in).
run_nvim() {
    local nvim=$1 file=$2 home="$SCRATCH/nvim-home"
    shift 2
    mkdir -p "$home"
    guarded env -u LUA_PATH -u LUA_CPATH -u LUA_PATH_5_4 -u LUA_CPATH_5_4 -u VIMINIT -u MYVIMRC \
        XDG_STATE_HOME="$home/state" XDG_DATA_HOME="$home/data" XDG_CACHE_HOME="$home/cache" \
        RPIV_ROOT="$ROOT" RPIV_FLAVOUR=luajit RPIV_SPEC="$file" "$@" \
        "$nvim" --headless -u NONE -i NONE --noplugin \
        -c "luafile $ROOT/scripts/nvim-runner.lua" </dev/null
}

nvim_label() {
    "$1" --version 2>/dev/null | head -n 1 | sed 's/^NVIM v/nvim /'
}

# A spec's path relative to the repository, for step names.
rel() {
    echo "${1#"$ROOT"/}"
}

# Each flavour's specs run with that flavour's build on package.cpath and also placed
# at lua/rpiv_todo/core.so (a spec run by hand from the repository finds it there); the
# LuaJIT build is put back there afterwards, for Neovim.
lua_specs() {
    local spec f
    local specs=("$ROOT"/tests/lua/*_spec.lua)
    if [[ ! -e ${specs[0]} ]]; then
        absent "Lua specs" "no tests/lua/*_spec.lua"
        return
    fi
    for f in "${FLAVOURS[@]}"; do
        for spec in "${specs[@]}"; do
            if steps_passed "module build ($f)" &&
                place_build "$ROOT/target/lua-$f/rpiv_todo/core.so"; then
                step "$(rel "$spec") ($(interp_for "$f"))" run_lua "$f" "$ROOT/target/lua-$f" "$spec"
            else
                skip "$(rel "$spec") ($(interp_for "$f"))" "module build ($f) failed"
            fi
        done
    done
}

# valgrind_specs: tests/lua/*_spec.lua in lua5.4 under valgrind's memcheck, against the
# Lua 5.4 build: any invalid read or write, use of uninitialised memory, or block
# definitely lost at exit fails the step (the boundary's raw C code).
valgrind_specs() {
    local spec
    if ! steps_passed "module build (lua54)"; then
        skip "Lua specs under valgrind (lua5.4)" "module build (lua54) failed"
        return
    fi
    # Every spec, overlay_spec.lua included: specs whose loops repeat the same work run
    # them fewer times when RPIV_VALGRIND is set (valgrind_one sets it).
    for spec in "$ROOT"/tests/lua/*_spec.lua; do
        step "valgrind: $(rel "$spec") (lua5.4)" valgrind_one "$spec"
    done
}

valgrind_one() {
    command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)"; return 1; }
    place_build "$ROOT/target/lua-lua54/rpiv_todo/core.so" || return 1
    local path="$ROOT/lua/?.lua;$ROOT/lua/?/init.lua;$ROOT/tests/lua/?.lua;;"
    local cpath="$ROOT/target/lua-lua54/?.so;;"
    # Valgrind runs programs 20-50 times slower: a longer hang guard than SPEC_TIMEOUT.
    local rc=0
    timeout $((SPEC_TIMEOUT * 4)) env -u LUA_INIT -u LUA_INIT_5_4 \
        LUA_PATH="$path" LUA_PATH_5_4="$path" LUA_CPATH="$cpath" LUA_CPATH_5_4="$cpath" \
        RPIV_ROOT="$ROOT" RPIV_FLAVOUR=lua54 RPIV_VALGRIND=1 \
        valgrind --quiet --tool=memcheck --error-exitcode=99 --leak-check=full \
        --show-leak-kinds=definite --errors-for-leak-kinds=definite --keep-debuginfo=yes \
        --suppressions="$ROOT/tests/valgrind.supp" \
        "$(interp_for lua54)" "$1" || rc=$?
    [[ $rc -eq 99 ]] && echo "valgrind reported errors (above)"
    return "$rc"
}

# Put a built module at lua/rpiv_todo/core.so (copy, then rename over the old one).
place_build() {
    local dest="$ROOT/lua/rpiv_todo/core.so"
    cmp -s "$1" "$dest" && return 0
    cp "$1" "$dest.tmp.$$" && mv -f "$dest.tmp.$$" "$dest"
}

# hostile_tests: seeded hostile tool arguments through every call path of the native
# module, in each interpreter with its own build; stderr is captured and must stay empty
# (no panic message, no warning: model input never reaches the terminal).
hostile_tests() {
    local f err
    for f in "${FLAVOURS[@]}"; do
        if ! steps_passed "module build ($f)"; then
            skip "hostile input ($(interp_for "$f"))" "module build ($f) failed"
            continue
        fi
        err="$SCRATCH/hostile-$f.stderr"
        step "hostile input, nothing on stderr ($(interp_for "$f"))" hostile_one "$f" "$err"
        # Other libraries' finalizers that raise or call the tool.
        step "finalizers, nothing on stderr ($(interp_for "$f"))" \
            hostile_one "$f" "$SCRATCH/finalizers-$f.stderr" finalizers.lua
    done
}

hostile_one() {
    local f=$1 err=$2 file=${3:-hostile.lua}
    run_lua "$f" "$ROOT/target/lua-$f" "$ROOT/tests/hostile/$file" 2>"$err" || return 1
    if [[ -s $err ]]; then
        echo "stderr was not empty:"
        head -c 2000 "$err"
        return 1
    fi
}

loader_tests() {
    local f b empty="$SCRATCH/empty-cpath"
    mkdir -p "$empty"
    for f in "${FLAVOURS[@]}"; do
        if steps_passed "module build ($f)"; then
            step "loader: $(interp_for "$f") loads the $f build" \
                run_lua "$f" "$ROOT/target/lua-$f" tests/loader/load_spec.lua
        else
            skip "loader: $(interp_for "$f") loads the $f build" "module build ($f) failed"
        fi
    done
    for f in "${FLAVOURS[@]}"; do
        for b in "${FLAVOURS[@]}"; do
            [[ $f == "$b" ]] && continue
            # LuaJIT implements the Lua 5.1 C API: those two may load each other's build.
            local what="refuses the $b build"
            [[ $f != lua54 && $b != lua54 ]] && what="loads or refuses the $b build"
            if steps_passed "module build ($b)"; then
                step "loader: $(interp_for "$f") $what, without crashing" \
                    run_lua "$f" "$ROOT/target/lua-$b" tests/loader/wrong_flavour_spec.lua \
                    RPIV_BUILD_FLAVOUR="$b"
            else
                skip "loader: $(interp_for "$f") $what" "module build ($b) failed"
            fi
        done
    done
    for f in "${FLAVOURS[@]}"; do
        step "loader: $(interp_for "$f") without a build says what it tried and how to build it" \
            run_lua "$f" "$empty" tests/loader/missing_spec.lua
    done
    local nvim
    for nvim in "$NVIM_OLD" "$NVIM_NEW"; do
        if [[ -z $nvim || ! -x $nvim ]]; then
            skip "loader: nvim ${nvim:-(current)}" "not installed"
        elif ! steps_passed "place the luajit build"; then
            skip "loader: $(nvim_label "$nvim")" "no luajit build at lua/rpiv_todo/core.so"
        else
            step "loader: $(nvim_label "$nvim") loads lua/rpiv_todo/core.so from 'runtimepath'" \
                run_nvim "$nvim" "$ROOT/tests/loader/load_spec.lua"
        fi
    done
}

nvim_specs() {
    local nvim spec
    local specs=("$ROOT"/tests/nvim/*_spec.lua)
    if [[ ! -e ${specs[0]} ]]; then
        absent "Neovim specs" "no tests/nvim/*_spec.lua"
        return
    fi
    for nvim in "$NVIM_OLD" "$NVIM_NEW"; do
        for spec in "${specs[@]}"; do
            if [[ -z $nvim || ! -x $nvim ]]; then
                skip "$(rel "$spec") (nvim ${nvim:-current})" "not installed"
            elif ! steps_passed "place the luajit build"; then
                skip "$(rel "$spec") ($(nvim_label "$nvim"))" "no luajit build at lua/rpiv_todo/core.so"
            else
                step "$(rel "$spec") ($(nvim_label "$nvim"))" run_nvim "$nvim" "$spec"
            fi
        done
    done
}

# screen_specs: the current Neovim in a 100x30 tmux pane (tests/screen/), driven by keys
# and read off the screen, from luajit with the harness.
screen_specs() {
    local spec
    for spec in "$ROOT"/tests/screen/*_spec.lua; do
        [[ -e $spec ]] || continue
        if [[ -z $NVIM_NEW || ! -x $NVIM_NEW ]]; then
            skip "$(rel "$spec") (nvim current, tmux)" "the current Neovim is not installed"
        elif ! steps_passed "place the luajit build"; then
            skip "$(rel "$spec") (nvim current, tmux)" "no luajit build at lua/rpiv_todo/core.so"
        else
            step "$(rel "$spec") ($(nvim_label "$NVIM_NEW"), tmux)" \
                run_lua luajit "$ROOT/target/lua-luajit" "$spec" RPIV_NVIM="$NVIM_NEW"
        fi
    done
}

# agent_specs: every tests/agents/*_spec.lua, the adapters inside the real agent plugins
# (pinned copies in $RPIV_DEPS, default ../shared/deps), in the current Neovim; then every
# request body they recorded and the ACP plan updates checked against the JSON Schema
# meta-schemas, OpenAI's strict rules and ACP's schema. A spec states what it needs in its
# header, so a new front end is its adapter and its spec, with no line to add here:
#   -- test.sh needs: <folder> ...         pinned plugins; without one: listed as skipped
#   -- test.sh each: <VAR>=<folder> ...    one run per folder (a pinned version), VAR set to it
#   -- test.sh capture: yes                RPIV_CAPTURE set: its bodies go to check_requests.py
spec_header() {
    sed -n "s/^-- test\.sh $2: *//p" "$1" | head -n 1
}

agent_specs() {
    local deps=$(deps_dir) capture="$SCRATCH/agents" captured=0 unpinned=0
    local spec needs each var values value dir missing env name
    [[ -d $deps ]] && deps=$(cd "$deps" && pwd)
    rm -rf "$capture"
    for spec in "$ROOT"/tests/agents/*_spec.lua; do
        needs=$(spec_header "$spec" needs)
        each=$(spec_header "$spec" each)
        var=${each%%=*}
        values=${each#*=}
        [[ -n $each ]] || values="-"
        for value in $values; do
            [[ $value != - ]] || value=""
            missing=""
            for dir in $needs $value; do
                [[ -d $deps/$dir ]] || missing="$missing $dir"
            done
            env=(RPIV_DEPS="$deps")
            [[ -n $value ]] && env+=("$var=$value")
            if [[ $(spec_header "$spec" capture) == yes ]]; then
                env+=(RPIV_CAPTURE="$capture")
            fi
            name="$(rel "$spec") (${value:-${needs%% *}}, $(nvim_label "$NVIM_NEW"))"
            if [[ -n $missing ]]; then
                absent "$name" "skipped: no pinned${missing} in $deps (set RPIV_DEPS)"
                [[ $(spec_header "$spec" capture) == yes ]] && unpinned=1
            elif [[ -z $NVIM_NEW || ! -x $NVIM_NEW ]]; then
                skip "$name" "no current Neovim"
            elif ! steps_passed "place the luajit build"; then
                skip "$name" "no luajit build at lua/rpiv_todo/core.so"
            else
                [[ $(spec_header "$spec" capture) == yes ]] && captured=1
                step "$name" run_nvim "$NVIM_NEW" "$spec" "${env[@]}"
            fi
        done
    done
    if ((captured)); then
        step "agent request bodies: draft 2020-12, draft-07, OpenAI strict; ACP plan updates" \
            python3 "$ROOT/tests/agents/check_requests.py" "$capture" "$deps"
    elif ((unpinned)); then
        absent "agent request bodies (tests/agents/check_requests.py)" \
            "skipped: the specs that record them need pinned plugins missing from $deps (set RPIV_DEPS)"
    else
        skip "agent request bodies (tests/agents/check_requests.py)" "no agent spec recorded any"
    fi
}

# Writing lua/rpiv_todo/core.so (what scripts/build-module.sh and :TodosInstall's build
# do: a new file, copied then renamed) leaves the server's release build fresh: build.rs
# watches the files it embeds, not the folder. `cargo build -v` then says Fresh for both
# packages and neither compiles nor runs a build script.
mcp_fresh_after_module() {
    local so=$ROOT/lua/rpiv_todo/core.so placed= out rc=0
    cargo build --quiet --release -p rpiv_todo_mcp || return 1
    if [[ -e $so ]]; then
        cp "$so" "$so.tmp.$$"
    else
        printf 'a stand-in for the module\n' >"$so.tmp.$$"
        placed=1
    fi
    mv -f "$so.tmp.$$" "$so"
    out=$(cargo build -v --release -p rpiv_todo_mcp 2>&1) || rc=$?
    [[ -n $placed ]] && rm -f "$so"
    grep -E '^ *(Fresh|Compiling|Running|Dirty) .*rpiv_todo' <<<"$out"
    ((rc == 0)) || { echo "$out"; return 1; }
    if grep -qE '^ *(Compiling|Running|Dirty) ' <<<"$out"; then
        echo "writing $so made the server's build stale"
        return 1
    fi
    grep -qE '^ *Fresh rpiv_todo v' <<<"$out" && grep -qE '^ *Fresh rpiv_todo_mcp v' <<<"$out"
}

# mcp_tests: the MCP server (examples/mcp, scripts/mcp.sh): its unit tests, then the
# official Python SDK as the client, every message checked against the published schema
# (MCP 2025-11-25, from $RPIV_DEPS/model-context-protocol), by default and with
# --structured, then the server beside a headless Neovim with persist = true.
mcp_tests() {
    local deps=$(deps_dir)
    step "MCP server: cargo test -p rpiv_todo_mcp" cargo test -q -p rpiv_todo_mcp
    step "MCP server: build (cargo build --release -p rpiv_todo_mcp)" cargo build --quiet --release -p rpiv_todo_mcp
    step "MCP server: writing lua/rpiv_todo/core.so leaves its build fresh (cargo build -v says Fresh)" \
        mcp_fresh_after_module
    if [[ ! -f $deps/model-context-protocol/schema-2025-11-25.json ]]; then
        absent "MCP server against the Python SDK (tests/mcp/client_test.py)" \
            "skipped: no MCP schema in $deps/model-context-protocol (set RPIV_DEPS)"
    elif ! steps_passed "MCP server: build"; then
        skip "MCP server against the Python SDK (tests/mcp/client_test.py)" "the server did not build"
    else
        step "MCP server against the Python SDK (tests/mcp/client_test.py)" \
            guarded python3 "$ROOT/tests/mcp/client_test.py" "$deps/model-context-protocol"
    fi
    if steps_passed "MCP server: build"; then
        step "MCP server: the list as a resource, its updates, export (tests/mcp/resource_test.py)" \
            guarded python3 "$ROOT/tests/mcp/resource_test.py" "$ROOT/target/release/rpiv_todo_mcp"
    else
        skip "MCP server: the list as a resource, its updates, export (tests/mcp/resource_test.py)" "the server did not build"
    fi
    # The editor and the server on one list: a headless Neovim with persist = true starts
    # scripts/mcp.sh in its directory.
    if [[ -z $NVIM_NEW || ! -x $NVIM_NEW ]]; then
        skip "tests/mcp/editor_spec.lua (editor and MCP server)" "no current Neovim"
    elif ! steps_passed "place the luajit build" || ! steps_passed "MCP server: build"; then
        skip "tests/mcp/editor_spec.lua (editor and MCP server)" "no luajit build or no server build"
    else
        step "tests/mcp/editor_spec.lua (editor and MCP server, $(nvim_label "$NVIM_NEW"))" \
            run_nvim "$NVIM_NEW" "$ROOT/tests/mcp/editor_spec.lua"
    fi
}

# shared_tests: several programs on one persisted list (tests/shared/writers.py), counted
# from their replies against the final file: forced interleavings through the core's
# test-only pause, odd states (read-only directory, a hung lock holder, a same-size change),
# SIGKILL of a writer 50 times, two MCP servers (10 runs), the server and a Neovim, two
# Neovims. Plain-Lua writers use the luajit build; Neovims the current one.
shared_tests() {
    local args=(--root "$ROOT" --lua luajit --cpath "$ROOT/target/lua-luajit"
        --mcp "$ROOT/target/release/rpiv_todo_mcp" --nvim "${NVIM_NEW:-/usr/bin/nvim}")
    # The forced interleavings need the core's test-only pause: a build of its own.
    if steps_passed "module build (luajit)"; then
        step "module build (luajit, test-pause)" env RPIV_MODULE_FEATURES=test-pause \
            "$ROOT/scripts/build-module.sh" luajit "$ROOT/target/lua-luajit-pause/rpiv_todo/core.so"
    fi
    local case
    for case in interleave odd hostile kill9 mcp-pair mcp-nvim nvim-pair notes; do
        if ! steps_passed "module build (luajit)"; then
            skip "shared list: $case" "the luajit module did not build"
        elif [[ $case == mcp-* || $case == kill9 || $case == notes ]] && ! steps_passed "MCP server: build"; then
            skip "shared list: $case" "the server did not build"
        elif [[ $case == *nvim* || $case == notes ]] && ! steps_passed "place the luajit build"; then
            skip "shared list: $case" "no luajit build at lua/rpiv_todo/core.so"
        else
            step "shared list: $case (tests/shared/writers.py)" \
                guarded python3 "$ROOT/tests/shared/writers.py" "$case" "${args[@]}" \
                --pause-cpath "$ROOT/target/lua-luajit-pause"
        fi
    done
    # Each system call of the save path failed in turn (strace's fault injection).
    if steps_passed "module build (luajit)"; then
        step "shared list: each save syscall failed in turn (tests/shared/faults.py)" \
            guarded python3 "$ROOT/tests/shared/faults.py" --root "$ROOT" --lua luajit \
            --cpath "$ROOT/target/lua-luajit"
    fi
}

# terminal_tests: the README's blocks for Claude Code, Codex CLI, Gemini CLI and Qwen Code
# run as written against the real agents (tests/terminal/pins.txt, installed by
# setup-dev.sh) and a scripted model on 127.0.0.1 (tests/terminal/run.py): through
# npx -y rpiv-todo-mcp from a local registry serving the npm tarballs packed from the built
# server, and through scripts/mcp.sh; then Claude Code and Codex on one list at once.
# agent_case LABEL DIR COMMAND ARGS...: tests/terminal/run.py ARGS for an agent installed in
# DIR (run is terminal_tests' command), or why it cannot run. The step reads no stdin
# (</dev/null): an agent that does would eat the pins terminal_tests reads, and the agents
# after it would silently not run.
agent_case() {
    local label=$1 dir=$2 command=$3
    shift 3
    if [[ ! -x $dir/node_modules/.bin/$command ]]; then
        absent "$label" "skipped: $(cat "$dir/install.failed" 2>/dev/null || echo "not installed in $dir")"
    elif [[ -z $NVIM_NEW || ! -x $NVIM_NEW ]]; then
        skip "$label" "no current Neovim"
    elif ! steps_passed "place the luajit build" || ! steps_passed "MCP server: build"; then
        skip "$label" "no luajit build or no server build"
    else
        step "$label" guarded "${run[@]}" "$@" </dev/null
    fi
}

terminal_tests() {
    local name package version command dir label npm_dir="$SCRATCH/npm" server servers=(script)
    local run=(python3 "$ROOT/tests/terminal/run.py" --clis "$TERMINAL_CLIS" --nvim "$NVIM_NEW")
    local missing=()
    if [[ -f $ROOT/npm/pack.js ]] && steps_passed "MCP server: build"; then
        step "npm tarballs of the built server for the terminal agents (node npm/pack.js)" pack_npm "$npm_dir"
        steps_passed "npm tarballs of the built server" && servers=(npx script)
    fi
    while read -r name package version command; do
        dir="$TERMINAL_CLIS/$name@$version"
        for server in "${servers[@]}"; do
            agent_case "tests/terminal/run.py $name ($package $version, $server)" "$dir" "$command" \
                "$name" --server "$server" --npm-dir "$npm_dir"
        done
        # The agent's plugin or extension (tests/terminal/plugin_cases.py), installed as the
        # README says, with the first server form.
        if [[ $name == claude || $name == codex || $name == gemini || $name == qwen || $name == opencode || $name == copilot ]]; then
            agent_case "tests/terminal/run.py $name-plugin ($package $version, ${servers[0]})" "$dir" \
                "$command" "$name-plugin" --server "${servers[0]}" --npm-dir "$npm_dir"
        fi
        if [[ ! -x $dir/node_modules/.bin/$command && ($name == claude || $name == codex) ]]; then
            missing+=("$package@$version")
        fi
    done < <(terminal_pins)
    label="tests/terminal/run.py pair (Claude Code and Codex on one list, ${servers[0]})"
    if [[ ${#missing[@]} -gt 0 ]]; then
        absent "$label" "skipped: ${missing[*]} not installed (the reason is on its own cases)"
    elif ! steps_passed "MCP server: build"; then
        skip "$label" "no server build"
    else
        step "$label" guarded "${run[@]}" pair --server "${servers[0]}" --npm-dir "$npm_dir"
    fi
}

# pack_npm DIR: the launcher's and this platform's npm tarballs, around the built server.
pack_npm() {
    local host
    host=$(rustc -vV | sed -n 's/^host: //p') || return 1
    rm -rf "$1" && mkdir -p "$1" &&
        node "$ROOT/npm/pack.js" --out "$1" --version "$(crate_version)" \
            --target "$host" --binary "$ROOT/target/release/rpiv_todo_mcp"
}

# rock_test LUA_VERSION FLAVOUR: install the rockspec into a fresh tree for that Lua with
# `luarocks make`, then run tests/luarocks/rock_spec.lua with only that tree's paths.
rock_test() {
    local version=$1 flavour=$2 tree="$SCRATCH/rocks-$1" rockspec
    # The versioned rockspec (rpiv_todo-scm-1.rockspec beside it is the plugin managers').
    rockspec=$(ls "$ROOT"/rpiv_todo-*.rockspec | grep -v -- '-scm-1\.rockspec$') || return 1
    if [[ $(basename "$rockspec") != "rpiv_todo-$(crate_version)-"*.rockspec ]]; then
        echo "$(basename "$rockspec") does not carry the crate version $(crate_version)"
        return 1
    fi
    command -v luarocks >/dev/null || { echo "luarocks is not installed (apt-get install luarocks)"; return 1; }
    luarocks --lua-version "$version" --tree "$tree" make "$rockspec" || return 1
    local paths
    paths=$(luarocks --lua-version "$version" --tree "$tree" path) || return 1
    (
        unset LUA_INIT LUA_PATH LUA_CPATH LUA_PATH_5_4 LUA_CPATH_5_4
        eval "$paths"
        RPIV_ROOT="$ROOT" RPIV_ROCK_TREE="$tree" RPIV_FLAVOUR="$flavour" \
            guarded "$(interp_for "$flavour")" "$ROOT/tests/luarocks/rock_spec.lua"
    )
}

luarocks_tests() {
    step "luarocks make (Lua 5.4) and a tool call from the installed rock" rock_test 5.4 lua54
    step "luarocks make (Lua 5.1) and a tool call from the installed rock" rock_test 5.1 lua51
}

# The crate's dev-dependencies (test-only) must not be in what `cargo run -p
# rpiv_todo_host` builds (its normal and build dependencies).
host_deps_check() {
    local dev tree name found=()
    dev=$(cargo tree -p rpiv_todo -e dev --depth 1 --prefix none | tail -n +2 | awk '{print $1}') || return 1
    tree=$(cargo tree -p rpiv_todo_host -e normal,build --prefix none | awk '{print $1}' | sort -u) || return 1
    if [[ -z $dev ]]; then
        echo "no dev-dependencies found: nothing to check"
        return 1
    fi
    for name in $dev; do
        grep -qx "$name" <<<"$tree" && found+=("$name")
    done
    if [[ ${#found[@]} -gt 0 ]]; then
        echo "scripts/run.sh would build test-only crates: ${found[*]}"
        return 1
    fi
    echo "none of $(echo $dev) among the $(wc -l <<<"$tree") crates the host builds"
}

doc_check() {
    RUSTDOCFLAGS="${RUSTDOCFLAGS:-} -D warnings" cargo doc --no-deps --quiet
}

# What crates.io would get: no warning from cargo, no build output, every source the
# build reads.
package_check() {
    local list err="$SCRATCH/package.stderr" bad file
    list=$(cargo package --list --allow-dirty 2>"$err") || { cat "$err"; return 1; }
    if [[ -s $err ]]; then
        echo "cargo package --list warned:"
        cat "$err"
        return 1
    fi
    bad=$(grep -E '(^|/)target/|\.(so|dylib|dll|rlib|rock)$' <<<"$list")
    if [[ -n $bad ]]; then
        echo "build outputs in the package:"
        echo "$bad"
        return 1
    fi
    for file in Cargo.toml build.rs src/lib.rs lua/rpiv_todo/init.lua locales/en/todo.ftl README.md docs/rust.md LICENSE; do
        grep -qx "$file" <<<"$list" || { echo "missing from the package: $file"; return 1; }
    done
    echo "$(wc -l <<<"$list") files, none of them a build output"
}

fmt_check() {
    if ! cargo fmt --version >/dev/null 2>&1; then
        echo "rustfmt is not installed (rustup component add rustfmt): the format is not checked"
        return 1
    fi
    cargo fmt --check
}

clippy() {
    if ! cargo clippy --version >/dev/null 2>&1; then
        echo "clippy is not installed (rustup component add clippy): nothing is linted"
        return 1
    fi
    cargo clippy --workspace --all-targets -- -D warnings &&
        cargo clippy --lib --no-default-features --features module,luajit -- -D warnings
}

# The stages `scripts/test.sh STAGE...` runs; no stage: all of them, in this order.
STAGES=(lint rust lua nvim agents mcp shared terminal host install)
usage() {
    cat <<USAGE
usage: scripts/test.sh [STAGE...]      run the stages named (default: all), then the summary
       scripts/test.sh --install-only  install what the tests need (scripts/setup-dev.sh)
       scripts/test.sh --help

stages: ${STAGES[*]}
  lint      cargo fmt, clippy, stylua, luacheck, the help, emmylua_check, links, cargo doc,
            cargo package
  rust      cargo test on each embedded flavour; the refused feature combinations
  lua       tests/lua specs, the hostile calls and finalizers in luajit, lua5.1, lua5.4;
            the Lua 5.4 specs under valgrind
  nvim      the loader, tests/nvim specs in both Neovims, the on-screen specs (tmux)
  agents    the adapters inside the pinned agent plugins, their request bodies
  mcp       the MCP server: its tests, the Python SDK as its client, beside a Neovim
  shared    several programs on one list file; each save syscall failed in turn
  terminal  the README's blocks for the terminal agents, against the pinned agents
  host      the example host, the rockspec
  install   release assets, install without Rust, npm tarballs, lazy.nvim and vim.pack
Every stage but lint and rust first builds the loadable modules it needs. Setup
(scripts/setup-dev.sh) always runs first.
USAGE
}
WANT=()
INSTALL_ONLY=0
for arg in "$@"; do
    case $arg in
    --install-only) INSTALL_ONLY=1 ;;
    -h | --help)
        usage
        exit 0
        ;;
    *)
        if [[ " ${STAGES[*]} " != *" $arg "* ]]; then
            echo "scripts/test.sh: unknown stage or option \"$arg\"" >&2
            usage >&2
            exit 2
        fi
        WANT+=("$arg")
        ;;
    esac
done

# wanted STAGE...: true when one of them was asked for (or none was named at all).
wanted() {
    local s
    [[ ${#WANT[@]} -eq 0 ]] && return 0
    for s in "$@"; do
        [[ " ${WANT[*]} " == *" $s "* ]] && return 0
    done
    return 1
}

step "install test tools" env NVIM_NEW="$NVIM_NEW" "$ROOT/scripts/setup-dev.sh"
[[ -n $NVIM_NEW ]] || NVIM_NEW=$(find_new_nvim) || NVIM_NEW=
if ((INSTALL_ONLY)); then
    summary
    exit
fi
if wanted lint; then
    step "cargo fmt --check" fmt_check
    step "cargo clippy -D warnings (default; module,luajit)" clippy
    step "stylua --check ${STYLUA_DIRS[*]}" stylua_check
    step "luacheck (.luacheckrc)" lua_lint
    step "help generated from the annotations (scripts/gen-help.lua --check)" help_fresh
    step "emmylua_check . and the README's config blocks (scripts/emmylua-check.sh)" \
        scripts/emmylua-check.sh "$NVIM_NEW"
    step "links and anchors in README.md, docs/, CONTRIBUTING.md, bench/README.md (scripts/check-links.py)" \
        python3 scripts/check-links.py
    step "cargo doc (warnings are errors)" doc_check
    step "cargo package --list" package_check
fi
wanted rust && rust_tests
if wanted lua nvim agents mcp shared terminal host install; then
    module_builds
fi
if wanted lua; then
    lua_specs
    hostile_tests
    valgrind_specs
fi
if wanted nvim agents mcp shared terminal install; then
    if steps_passed "module build (luajit)"; then
        step "place the luajit build at lua/rpiv_todo/core.so" \
            place_build "$ROOT/target/lua-luajit/rpiv_todo/core.so"
    else
        skip "place the luajit build at lua/rpiv_todo/core.so" "module build (luajit) failed"
    fi
fi
if wanted nvim; then
    loader_tests
    nvim_specs
    screen_specs
fi
wanted agents && agent_specs
wanted mcp && mcp_tests
if wanted shared terminal && ! wanted mcp; then
    step "MCP server: build (cargo build --release -p rpiv_todo_mcp)" cargo build --quiet --release -p rpiv_todo_mcp
fi
wanted shared && shared_tests
wanted terminal && terminal_tests
if wanted host; then
    step "example host (cargo test -p rpiv_todo_host)" cargo test -q -p rpiv_todo_host
    step "scripts/run.sh builds no test-only dependency" host_deps_check
    luarocks_tests
fi
wanted install && install_steps
summary
