#!/usr/bin/env bash
# The project's run command: the example Rust host (examples/host) on the embedded
# default build (Lua 5.4, vendored). With no arguments it plays the recorded agent
# session shipped in examples/; arguments go to the host (a session file and a config of
# your own, see `scripts/run.sh --help`).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec cargo run --release --example host -- "$@"
