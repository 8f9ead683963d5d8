-- Runs one Lua spec file inside headless Neovim and quits with its outcome, the same way
-- in Neovim 0.7 (no `nvim -l`) and in current releases. scripts/test.sh starts it as
--
--   RPIV_ROOT=<repo> RPIV_SPEC=<file> nvim --headless -u NONE -i NONE --noplugin \
--     -c "luafile scripts/nvim-runner.lua"
--
-- The spec passes when it returns and fails when it raises (the error and its traceback
-- are printed); specs end with T.finish() of tests/harness.lua, which raises when a
-- check failed. The repository is on 'runtimepath', so `require("rpiv_todo")` and
-- `require("rpiv_todo.core")` (lua/rpiv_todo/core.so, the LuaJIT build) load the way a
-- plugin manager would load them. A spec that waits for scheduled callbacks uses
-- `vim.wait`: the runner quits as soon as the spec returns. The global RPIV_ROOT holds
-- the repository path.

local root = os.getenv("RPIV_ROOT")
local spec = os.getenv("RPIV_SPEC")

local function finish(ok, message)
  if message then
    io.stdout:write(message, "\n")
  end
  io.stdout:flush()
  -- :cquit leaves with a status in every Neovim since 0.5; :qa! with 0.
  vim.cmd(ok and "qa!" or "cquit 1")
end

if not root or not spec then
  finish(false, "nvim-runner: set RPIV_ROOT and RPIV_SPEC")
  return
end

_G.RPIV_ROOT = root
vim.cmd("set rtp+=" .. vim.fn.fnameescape(root))

local ok, err = xpcall(function()
  dofile(spec)
end, debug.traceback)
if ok then
  finish(true, nil)
else
  finish(false, "FAILED " .. spec .. ": " .. tostring(err))
end
