#!/usr/bin/env bash
# Every feature combination the crate supports, and the ones it must refuse.
#
#   embedded (`vendored` + one flavour): `cargo test`, for lua54 (the default), luajit, lua51
#   loadable (`module` + one flavour):  built and placed at target/lua-<flavour>/rpiv_todo/core.so,
#                                       where scripts/test.sh loads it from the real interpreters
#   refused: `module` with `vendored`, two flavours, no flavour: the build must stop
#            with a compile error that says why
#
# Run alone (`scripts/features.sh`) or sourced by scripts/test.sh, which adds its steps
# to its own summary.
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
    set -euo pipefail
fi
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

cargo_in_root() {
    cargo "$1" --manifest-path "$ROOT/Cargo.toml" "${@:2}"
}

# The build with features $1 must fail, and its output must match $2 (the message of
# a compile_error!, ours or mlua's).
expect_compile_error() {
    local out
    if out=$(cargo_in_root check --lib --no-default-features --features "$1" 2>&1); then
        echo "features '$1' built, but this combination cannot work and must be refused"
        return 1
    fi
    if ! grep -E "^error.*($2)" <<<"$out"; then
        tail -n 30 <<<"$out"
        echo "features '$1' failed, but not with the expected compile error /$2/"
        return 1
    fi
}

# The three loadable builds, placed at target/lua-<flavour>/rpiv_todo/core.so.
module_builds() {
    local f
    for f in "${FLAVOURS[@]}"; do
        step "module build ($f)" \
            "$ROOT/scripts/build-module.sh" "$f" "$ROOT/target/lua-$f/rpiv_todo/core.so"
    done
}

features_steps() {
    rust_tests
    module_builds
}

# cargo test on each embedded flavour, and the feature combinations that must not build.
rust_tests() {
    step "cargo test (lua54, vendored: the default)" cargo_in_root test --no-fail-fast
    step "cargo test (luajit, vendored)" \
        cargo_in_root test --no-fail-fast --no-default-features --features luajit,vendored
    step "cargo test (lua51, vendored)" \
        cargo_in_root test --no-fail-fast --no-default-features --features lua51,vendored
    # mlua-sys's own compile_error! usually stops these before the crate's (src/lib.rs)
    # can fire; either message says why. A flavour with no link mode is not checked: it
    # links the system Lua through pkg-config, so whether it gets as far as the crate's
    # "pick a link mode" error depends on which -dev packages the machine has.
    local exclusive='mutually exclusive|cannot be combined'
    local one_flavour='only one of the features|No Lua feature enabled|exactly one Lua flavour|pick a Lua flavour'
    step "refused: module + vendored" expect_compile_error module,vendored,lua54 "$exclusive"
    step "refused: two flavours (lua54 + luajit)" expect_compile_error lua54,luajit,vendored "$one_flavour"
    step "refused: two flavours as a module (lua51 + luajit)" expect_compile_error module,lua51,luajit "$one_flavour"
    # mlua-sys 0.13 (mlua 0.12) words it "No Lua feature enabled. Please enable one of: ...".
    step "refused: no flavour" expect_compile_error vendored "$one_flavour|No Lua feature enabled"
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
    features_steps
    summary
fi
