#!/usr/bin/env bash
# An MCP server on stdio for the `todo` tool (examples/mcp, binary rpiv_todo_mcp), for
# agents that run outside the editor: Claude Code, Codex, Gemini CLI or any MCP client
# starts this script as its server command. Options go to the server (see
# `scripts/mcp.sh --help`):
#   --state-dir DIR   where lists are saved (default: Neovim's, stdpath("state")/rpiv_todo)
#   --session NAME    which list of the working directory (default: the one Neovim shows)
#   --config FILE     a Lua config run first (default: ~/.config/rpiv_todo/mcp.lua)
#   --structured      also send structuredContent, with an outputSchema
#
# It runs a binary that is already there and never compiles (an agent gives a server a few
# seconds to start; a build takes minutes):
#   - the one :TodosInstall / require("rpiv_todo.nvim.install").run() put in lib/ (named by
#     lib/mcp.txt), or
#   - a checkout's target/release/rpiv_todo_mcp (`cargo build --release -p rpiv_todo_mcp`),
# the newer of the two when both are there. With neither it prints on stderr the command
# that installs or builds one and exits with status 1. The list is keyed by the directory
# the server runs in, so start it from the project (MCP clients start servers in the
# project they work on).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# The installed binary: lib/mcp.txt's `file=` (a plain name inside lib/).
installed=
installed_version=
if [[ -f $root/lib/mcp.txt ]]; then
    file=
    while IFS='=' read -r key value || [[ -n $key ]]; do
        case "$key" in
            file) file=${value%$'\r'} ;;
            version) installed_version=${value%$'\r'} ;;
        esac
    done <"$root/lib/mcp.txt"
    if [[ -n $file && $file != */* && -x $root/lib/$file ]]; then
        installed=$root/lib/$file
    fi
fi

built="${CARGO_TARGET_DIR:-$root/target}/release/rpiv_todo_mcp"
[[ -x $built ]] || built=

bin=$installed
if [[ -n $built && (-z $installed || $built -nt $installed) ]]; then
    bin=$built
fi

install_cmd="nvim --headless -u NONE --cmd 'set rtp^=$root' -c 'lua if not require(\"rpiv_todo.nvim.install\").run() then vim.cmd(\"cquit 1\") end' -c qa"
build_cmd="cargo build --release --manifest-path '$root/Cargo.toml' -p rpiv_todo_mcp"

if [[ -z $bin ]]; then
    if ! command -v cargo >/dev/null && ! command -v nvim >/dev/null; then
        {
            echo "rpiv_todo_mcp: no server binary in $root/lib (lib/mcp.txt) or $root/target/release,"
            echo "and neither nvim (to install the prebuilt one) nor cargo (to build it) is on PATH."
            echo "What works without them: the npm package, once published (npx -y rpiv-todo-mcp),"
            echo "or its tarballs packed on a machine with Rust and Node (scripts/package.sh --npm DIR,"
            echo "then npm install -g DIR/*.tgz here); or a built rpiv_todo_mcp copied here and named"
            echo "by RPIV_TODO_MCP_BINARY for the npm launcher and the agents' plugins."
        } >&2
        exit 1
    fi
    if command -v cargo >/dev/null && ! command -v nvim >/dev/null; then
        how="build it from source (a few minutes):"
        cmd=$build_cmd
    else
        how="install the prebuilt one (what :TodosInstall does):"
        cmd=$install_cmd
    fi
    {
        echo "rpiv_todo_mcp: no server binary in $root/lib (lib/mcp.txt) or $root/target/release; $how"
        echo "  $cmd"
    } >&2
    exit 1
fi

if [[ $bin == "$installed" && -n $installed_version ]]; then
    # The Lua scripts' version (lua/rpiv_todo/installed.lua), which a release carries.
    want=$(sed -n 's/^M\.VERSION = "\(.*\)"$/\1/p' "$root/lua/rpiv_todo/installed.lua" 2>/dev/null || true)
    if [[ -n $want && $want != "$installed_version" ]]; then
        echo "rpiv_todo_mcp: the installed server is version $installed_version, the plugin $want; update it with:" >&2
        echo "  $install_cmd" >&2
    fi
fi
exec "$bin" "$@"
