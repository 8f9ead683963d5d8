-- tests/nvim/helpers.lua: the bootstrap the Neovim specs share, so each spec opens with
-- what it tests instead of a copy of the same setup. Loaded with dofile (not a spec of
-- its own: no _spec suffix, so scripts/test.sh does not run it):
--
--   local N = dofile(os.getenv("RPIV_ROOT") .. "/tests/nvim/helpers.lua")
--   local T = N.T
--
-- Each dofile gives a fresh copy (its own harness, its own notifications and folders).
-- What it holds:
--   * N.T, the test harness (tests/harness.lua), and N.root, the repository;
--   * N.plugin(): source plugin/rpiv_todo.lua the way startup would (the runner starts
--     Neovim with --noplugin);
--   * N.capture_notify(holder): vim.notify records into holder.notes instead of printing;
--   * N.fresh(setup_opts, nvim_opts): fresh sessions and a freshly attached front end;
--   * N.tempdir() and N.cleanup(): scratch folders removed at the end;
--   * N.run_child: tests/nvim/child.lua's runner of a child Neovim;
--   * N.isolated(dir, fn): fn with only dir on 'runtimepath' and no rpiv_todo module loaded.

local M = {}
local H = { dirs = {} }

M.T = dofile(os.getenv("RPIV_ROOT") .. "/tests/harness.lua")
M.root = M.T.root()

---Source plugin/rpiv_todo.lua from 'runtimepath', as Neovim's startup would.
function M.plugin()
  vim.cmd("runtime plugin/rpiv_todo.lua")
end

---Make vim.notify record each message as `{ msg, level, opts }` in `holder.notes`
---instead of printing it. The list is looked up on every call, so a spec empties it by
---assigning `holder.notes = {}`.
---@param holder table
---@return table holder
function M.capture_notify(holder)
  holder.notes = {}
  vim.notify = function(msg, level, opts)
    holder.notes[#holder.notes + 1] = { msg = msg, level = level, opts = opts }
  end
  return holder
end

---Fresh sessions and a freshly attached front end: detach, forget every session, then
---rpiv_todo.setup(`setup_opts`, default `{ locale = "en" }`), and the editor's options
---`nvim_opts` (default `{}`: every one at its default) put in force with the front end
---attached (rpiv_todo.nvim.setup.configure, what setup() runs for them).
---@param setup_opts? table
---@param nvim_opts? table
function M.fresh(setup_opts, nvim_opts)
  local todo = require("rpiv_todo")
  require("rpiv_todo.nvim.frontend").detach()
  todo.sessions.reset()
  todo.setup(setup_opts or { locale = "en" })
  require("rpiv_todo.nvim.setup").configure(nvim_opts or {})
end

---A scratch folder (symlinks resolved), removed by M.cleanup().
---@return string
function M.tempdir()
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, "p")
  H.dirs[#H.dirs + 1] = dir
  return vim.fn.resolve(dir)
end

---Remove every folder M.tempdir() made.
function M.cleanup()
  for _, dir in ipairs(H.dirs) do
    vim.fn.delete(dir, "rf")
  end
  H.dirs = {}
end

M.run_child = dofile(M.root .. "/tests/nvim/child.lua").run

---Run `fn` with only `dir` (and $VIMRUNTIME) on 'runtimepath' and no rpiv_todo module loaded.
function M.isolated(dir, fn)
  local saved_rtp = vim.o.runtimepath
  local saved = {}
  for name, mod in pairs(package.loaded) do
    if name == "rpiv_todo" or name:sub(1, 10) == "rpiv_todo." then
      saved[name] = mod
    end
  end
  for name in pairs(saved) do
    package.loaded[name] = nil
  end
  vim.o.runtimepath = dir .. "," .. vim.env.VIMRUNTIME
  local ok, err = pcall(fn)
  vim.o.runtimepath = saved_rtp
  for name in pairs(package.loaded) do
    if name == "rpiv_todo" or name:sub(1, 10) == "rpiv_todo." then
      package.loaded[name] = nil
    end
  end
  for name, mod in pairs(saved) do
    package.loaded[name] = mod
  end
  if not ok then
    error(err, 0)
  end
end

return M
