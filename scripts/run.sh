#!/usr/bin/env bash
# The project's run command: the example Rust host (examples/host, package rpiv_todo_host)
# on the embedded default build (Lua 5.4, vendored). With no arguments it plays the
# recorded agent session shipped in examples/host/; arguments go to the host (a session
# file and a config of your own, see `scripts/run.sh --help`). The first run builds the
# crate in release mode, which takes a couple of minutes; it builds none of the test-only
# dependencies.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec cargo run --quiet --release -p rpiv_todo_host -- "$@"
