# shellcheck shell=bash
# tests/install/install.sh: the install tests (issue "install in one step, without a Rust
# toolchain"), sourced by scripts/test.sh, which calls install_steps. Offline: the release
# is served from 127.0.0.1 by tests/install/server.py, started and stopped here and bounded
# in time by itself and by `timeout`.
#
#   1. scripts/package.sh writes the LuaJIT module, the MCP server and their .sha256 files
#      for the host triple into a local release folder (<release>/good/v<version>/), and
#      the npm tarballs into <release>/npm; objdump -T shows no GLIBC_ version above 2.17
#      in the module or the server;
#   2. a fresh clone of the repository (the working tree as it is, without build outputs),
#      with no lua/rpiv_todo/core.so and no cargo on PATH, installs through
#      require("rpiv_todo.nvim.install").run({ base_url = ... }); a new Neovim makes a tool call,
#      and the installed server, started by the clone's scripts/mcp.sh, answers initialize
#      in under 100 ms and tool calls (tests/install/fresh_spec.lua), in both Neovims;
#   3. tampered asset, wrong .sha256, truncated download, server down, unloadable asset,
#      tampered or broken MCP server: each refused, the earlier module and server still
#      there (tests/install/refuse_spec.lua); then, in the current Neovim, the same
#      through start(), which does not block (tests/install/async_spec.lua);
#   4. the real lazy.nvim ($RPIV_DEPS/lazy.nvim) installs the plugin from a file:// remote
#      with the README's build function and RPIV_TODO_BASE_URL; then the tool works in a
#      new Neovim (tests/install/lazy_spec.lua); vim.pack with a PackChanged autocommand
#      does the same (tests/install/pack_spec.lua, Neovim 0.12);
#   5. every target the installer can choose is built by .github/workflows/release.yml
#      and has an npm package (tests/install/targets_spec.lua);
#   6. the npm tarballs install into a temporary prefix with the registry unreachable, and
#      the server runs as an agent runs it: the installed bin and `npx -y rpiv-todo-mcp`
#      (tests/install/npm_test.py).

# Set by install_steps.
INSTALL_REL=
INSTALL_SERVER_PID=
INSTALL_PORT=
INSTALL_DEAD_PORT=

install_asset() {
    local triple
    triple=$(rustc -vV | sed -n 's/^host: //p')
    echo "rpiv_todo_core-$triple.so"
}

install_server_asset() {
    local triple
    triple=$(rustc -vV | sed -n 's/^host: //p')
    echo "rpiv_todo_mcp-$triple"
}

# The packaged module: the newest GLIBC_ version its dynamic symbols need is at most 2.17.
install_glibc_check() {
    local file=$1 newest
    command -v objdump >/dev/null || { echo "objdump is not installed (apt-get install binutils)"; return 1; }
    newest=$(objdump -T "$file" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/^GLIBC_//' | sort -V | tail -n 1)
    if [[ -z $newest ]]; then
        echo "objdump -T found no GLIBC_ version in $file"
        return 1
    fi
    echo "newest GLIBC_ version needed: $newest"
    [[ $(printf '%s\n2.17\n' "$newest" | sort -V | tail -n 1) == 2.17 ]] || {
        objdump -T "$file" | grep "GLIBC_$newest"
        return 1
    }
}

# The broken releases beside the good one (the server serves /truncated/good itself).
# Each has the good MCP server, but for badserver (one byte changed, the good .sha256) and
# deadserver (a file with a matching checksum that does not run), which have the good
# module, and noserver (the good module and no server).
install_bad_releases() {
    local version=$1 asset=$2 server good="$INSTALL_REL/good/v$1" dir
    server=$(install_server_asset)
    for dir in tampered badsum unloadable notasum newer badserver deadserver noserver; do
        mkdir -p "$INSTALL_REL/$dir/v$version"
        if [[ $dir != badserver && $dir != deadserver && $dir != noserver ]]; then
            cp "$good/$server" "$good/$server.sha256" "$INSTALL_REL/$dir/v$version/"
        else
            cp "$good/$asset" "$good/$asset.sha256" "$INSTALL_REL/$dir/v$version/"
        fi
    done
    cp "$good/$server" "$INSTALL_REL/badserver/v$version/$server"
    python3 - "$INSTALL_REL/badserver/v$version/$server" <<'EOF' || return 1
import sys
path = sys.argv[1]
data = bytearray(open(path, "rb").read())
data[len(data) // 2] ^= 0xFF
open(path, "wb").write(bytes(data))
EOF
    cp "$good/$server.sha256" "$INSTALL_REL/badserver/v$version/"
    printf '#!/bin/sh\necho "not the server" >&2\nexit 3\n' >"$INSTALL_REL/deadserver/v$version/$server"
    (cd "$INSTALL_REL/deadserver/v$version" && sha256sum "$server" >"$server.sha256")
    # One byte changed in the middle; the .sha256 is the good one.
    cp "$good/$asset" "$INSTALL_REL/tampered/v$version/$asset"
    python3 - "$INSTALL_REL/tampered/v$version/$asset" <<'EOF' || return 1
import sys
path = sys.argv[1]
data = bytearray(open(path, "rb").read())
data[len(data) // 2] ^= 0xFF
open(path, "wb").write(bytes(data))
EOF
    cp "$good/$asset.sha256" "$INSTALL_REL/tampered/v$version/"
    # The good asset with the checksum of something else.
    cp "$good/$asset" "$INSTALL_REL/badsum/v$version/$asset"
    echo "0000000000000000000000000000000000000000000000000000000000000000  $asset" \
        >"$INSTALL_REL/badsum/v$version/$asset.sha256"
    # A file with a matching checksum that is no shared library.
    printf 'this is not a shared library\n' >"$INSTALL_REL/unloadable/v$version/$asset"
    (cd "$INSTALL_REL/unloadable/v$version" && sha256sum "$asset" >"$asset.sha256")
    # A .sha256 that holds no checksum (an HTML error page, say).
    cp "$good/$asset" "$INSTALL_REL/notasum/v$version/$asset"
    echo "<html>rate limited</html>" >"$INSTALL_REL/notasum/v$version/$asset.sha256"
    # A later build of the same version: other bytes that load the same (a trailing byte
    # past the end of the ELF file), with its own checksum.
    { cat "$good/$asset" && echo; } >"$INSTALL_REL/newer/v$version/$asset"
    (cd "$INSTALL_REL/newer/v$version" && sha256sum "$asset" >"$asset.sha256")
}

install_start_server() {
    local port_file="$SCRATCH/install-port" i
    rm -f "$port_file" "$SCRATCH/install-server.log"
    timeout 1200 python3 "$ROOT/tests/install/server.py" "$INSTALL_REL" "$port_file" \
        --seconds 1100 --log "$SCRATCH/install-server.log" &
    INSTALL_SERVER_PID=$!
    for i in $(seq 1 100); do
        [[ -s $port_file ]] && break
        sleep 0.1
    done
    [[ -s $port_file ]] || { echo "the release server did not start"; return 1; }
    INSTALL_PORT=$(cat "$port_file")
    # A port nothing listens on: bound once by the OS, then released.
    INSTALL_DEAD_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
    echo "release server on 127.0.0.1:$INSTALL_PORT (pid $INSTALL_SERVER_PID); nothing on $INSTALL_DEAD_PORT"
}

install_stop_server() {
    if [[ -n $INSTALL_SERVER_PID ]]; then
        kill "$INSTALL_SERVER_PID" 2>/dev/null
        wait "$INSTALL_SERVER_PID" 2>/dev/null
        INSTALL_SERVER_PID=
    fi
}

# A fresh clone of the repository as the working tree has it (committed files plus the
# uncommitted and untracked ones git does not ignore; never build outputs), committed, so
# a plugin manager can clone it in turn.
install_clone() {
    local dest=$1 file
    rm -rf "$dest"
    git clone --quiet --no-hardlinks "$ROOT" "$dest" || return 1
    (
        cd "$ROOT" || exit 1
        git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' file; do
            if [[ -e $file ]]; then
                mkdir -p "$dest/$(dirname "$file")" && cp -p "$file" "$dest/$file"
            else
                rm -f "$dest/$file"
            fi
        done
    ) || return 1
    (
        cd "$dest" || exit 1
        git add -A && git -c user.name=test -c user.email=test@localhost commit --quiet -m "working tree" --allow-empty
    ) || return 1
    [[ ! -e $dest/lua/rpiv_todo/core.so && ! -e $dest/lib ]] || { echo "the clone has a build output"; return 1; }
}

# PATH without cargo: the folders of curl and git, and the system's.
install_path() {
    local path dir
    path=/usr/bin:/bin
    for dir in "$(dirname "$(command -v curl)")" "$(dirname "$(command -v git)")"; do
        [[ :$path: == *:$dir:* ]] || path=$dir:$path
    done
    if PATH=$path command -v cargo >/dev/null; then
        echo "cargo is in $(PATH=$path command -v cargo), on the PATH without Rust" >&2
        return 1
    fi
    echo "$path"
}

# install_spec NVIM CLONE SPEC [VAR=VALUE...]: one tests/install spec in NVIM, with
# RPIV_ROOT at the clone and the release's addresses in the environment.
install_spec() {
    local nvim=$1 clone=$2 spec=$3 path
    shift 3
    path=$(install_path) || return 1
    run_nvim "$nvim" "$ROOT/tests/install/$spec" RPIV_ROOT="$clone" PATH="$path" \
        RPIV_VERSION="$(crate_version)" RPIV_ASSET="$(install_asset)" RPIV_SERVER_ASSET="$(install_server_asset)" \
        RPIV_RELEASE_URL="http://127.0.0.1:$INSTALL_PORT/good" \
        RPIV_DEAD_URL="http://127.0.0.1:$INSTALL_DEAD_PORT" \
        RPIV_DIST="$INSTALL_REL/good/v$(crate_version)" \
        RPIV_SERVER_LOG="$SCRATCH/install-server.log" "$@"
}

# fresh_then_refused NVIM: a new clone installs, then the refused cases, in one Neovim.
install_fresh() {
    local nvim=$1 clone=$2
    install_clone "$clone" || return 1
    : >"$SCRATCH/install-server.log"
    install_spec "$nvim" "$clone" fresh_spec.lua
}

install_steps() {
    local version asset nvim label clone deps
    version=$(crate_version)
    asset=$(install_asset)
    INSTALL_REL="$SCRATCH/release"
    mkdir -p "$INSTALL_REL"
    step "install: scripts/package.sh writes $asset, $(install_server_asset), their .sha256 and the npm tarballs" \
        scripts/package.sh --out "$INSTALL_REL/good/v$version" --npm "$INSTALL_REL/npm"
    if ! steps_passed "install: scripts/package.sh"; then
        skip "install: objdump -T shows no GLIBC_ above 2.17" "scripts/package.sh failed"
        skip "install: from a local release" "scripts/package.sh failed"
        skip "install: npm tarballs" "scripts/package.sh failed"
        return
    fi
    step "install: objdump -T shows no GLIBC_ above 2.17 in $asset" \
        install_glibc_check "$INSTALL_REL/good/v$version/$asset"
    step "install: objdump -T shows no GLIBC_ above 2.17 in $(install_server_asset)" \
        install_glibc_check "$INSTALL_REL/good/v$version/$(install_server_asset)"
    step "install: the npm tarballs install offline into a temporary prefix; the bin and npx -y rpiv-todo-mcp serve (tests/install/npm_test.py)" \
        python3 "$ROOT/tests/install/npm_test.py" "$INSTALL_REL/npm" "$version"
    step "install: targets the installer can choose are all built by release.yml" \
        run_nvim "${NVIM_NEW:-$NVIM_OLD}" "$ROOT/tests/install/targets_spec.lua"
    step "install: broken releases for the refusal tests" install_bad_releases "$version" "$asset"
    step "install: local release server on 127.0.0.1" install_start_server
    if ! steps_passed "install: local release server"; then
        skip "install: from a local release" "the release server did not start"
        return
    fi
    for nvim in "$NVIM_OLD" "$NVIM_NEW"; do
        if [[ -z $nvim || ! -x $nvim ]]; then
            skip "install: fresh clone (nvim ${nvim:-current})" "not installed"
            continue
        fi
        label=$(nvim_label "$nvim")
        clone="$SCRATCH/install-clone-${label// /-}"
        step "install: a fresh clone without core.so or cargo installs from the local release; a new Neovim makes a tool call ($label)" \
            install_fresh "$nvim" "$clone"
        if steps_passed "install: a fresh clone without core.so or cargo installs from the local release; a new Neovim makes a tool call ($label)"; then
            step "install: tampered asset, wrong .sha256, truncated download, server down, unloadable asset refused; the earlier module still works ($label)" \
                install_spec "$nvim" "$clone" refuse_spec.lua
            if [[ $nvim == "$NVIM_NEW" ]]; then
                step "install: start() downloads without blocking: a tampered asset refused through on_done, the good release in place ($label)" \
                    install_spec "$nvim" "$clone" async_spec.lua
            fi
        else
            skip "install: refused downloads ($label)" "the fresh install failed"
        fi
    done
    deps=$(deps_dir)
    if [[ ! -d $deps/lazy.nvim ]]; then
        absent "install: lazy.nvim" "skipped: no pinned lazy.nvim in $deps (set RPIV_DEPS)"
    elif [[ -z $NVIM_NEW || ! -x $NVIM_NEW ]]; then
        skip "install: lazy.nvim" "no current Neovim"
    else
        deps=$(cd "$deps" && pwd)
        clone="$SCRATCH/install-remote-lazy"
        step "install: lazy.nvim installs from a file:// remote with the build function and RPIV_TODO_BASE_URL; the tool works in a new Neovim" \
            install_manager "$clone" lazy_spec.lua RPIV_LAZY="$deps/lazy.nvim"
    fi
    if [[ -n $NVIM_NEW && -x $NVIM_NEW ]]; then
        step "install: vim.pack with a PackChanged autocommand installs from a file:// remote; the tool works in a new Neovim" \
            install_manager "$SCRATCH/install-remote-pack" pack_spec.lua
    fi
    install_stop_server
}

# install_manager REMOTE SPEC [VAR=VALUE...]: a plugin manager spec in the current Neovim,
# cloning from REMOTE (a fresh clone used as a file:// remote).
install_manager() {
    local remote=$1 spec=$2
    shift 2
    install_clone "$remote" || return 1
    install_spec "$NVIM_NEW" "$remote" "$spec" RPIV_REMOTE="file://$remote" \
        RPIV_TODO_BASE_URL="http://127.0.0.1:$INSTALL_PORT/good" "$@"
}
