-- luacheck configuration (https://github.com/lunarmodules/luacheck; Debian's lua-check).
-- scripts/test.sh runs `luacheck .` from the repository root; so can you.
--
-- Plain-Lua files run in Lua 5.1, 5.4 and LuaJIT: "max" knows the standard globals of all
-- of them (code that needs one picks it at run time, as `table.unpack or unpack`). Only
-- the Neovim host glue and its tests may touch `vim`; anywhere else it is an error.

std = "max"
-- StyLua lays code out in 120 columns; it leaves long string literals and comments (a
-- LuaCATS annotation is one line) alone, and so does luacheck.
max_line_length = false
exclude_files = { "target/", ".deps/" }

-- The glue sets fields of `vim` (vim.g, vim.o, vim.notify in tests): a writable global there.
local nvim = { globals = { "vim" } }
-- The Neovim glue, its plugin file and the specs that run inside Neovim.
files["lua/rpiv_todo/health.lua"] = nvim
-- The installer's deprecated alias (the installer itself is under lua/rpiv_todo/nvim/).
files["lua/rpiv_todo/install/init.lua"] = nvim
-- What the plain modules ask of their host (rpiv_todo.host): the one plain-side file on `vim`.
files["lua/rpiv_todo/host.lua"] = nvim
files["tests/install/"] = nvim
files["lua/rpiv_todo/nvim/"] = nvim
files["plugin/"] = nvim
files["scripts/nvim-runner.lua"] = { globals = { "vim", "RPIV_ROOT" } }
files["tests/nvim/"] = nvim
files["tests/screen/init.lua"] = nvim
files["tests/agents/"] = nvim
files["tests/mcp/editor_spec.lua"] = nvim
files["tests/shared/nvim_worker.lua"] = nvim
files["tests/shared/nvim_user.lua"] = nvim
files["bench/shared_nvim.lua"] = nvim
files["bench/front_end_nvim.lua"] = nvim
-- Run both from plain interpreters and inside Neovim: they test `vim` before using it.
files["tests/harness.lua"] = nvim
files["tests/loader/"] = nvim
-- A declaration file for lua-language-server (never run): stub functions whose arguments
-- only carry annotations.
files["lua/rpiv_todo/meta/"] = { ignore = { "212", "241" } }
