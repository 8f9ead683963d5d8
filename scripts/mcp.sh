#!/usr/bin/env bash
# An MCP server on stdio for the `todo` tool (examples/mcp, package rpiv_todo_mcp), for
# agents that run outside the editor: Claude Code, Codex, Gemini CLI or any MCP client
# starts this script as its server command. Options (see `scripts/mcp.sh --help`):
#   --state-dir DIR   where lists are saved (default: Neovim's, stdpath("state")/rpiv_todo)
#   --session NAME    which list of the working directory (default: the one Neovim shows)
#   --config FILE     a Lua config run first (default: ~/.config/rpiv_todo/mcp.lua)
# The first run builds the server in release mode, which takes a few minutes; cargo's
# output goes to stderr, so standard output carries nothing but the protocol. The list is
# keyed by the directory the server runs in, so start it from the project (MCP clients
# start servers in the project they work on).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exec cargo run --quiet --release --manifest-path "$root/Cargo.toml" -p rpiv_todo_mcp -- "$@"
