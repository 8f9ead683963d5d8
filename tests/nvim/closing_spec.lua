-- tests/nvim/closing_spec.lua: a repaint due while a window or a buffer closes (an agent's
-- sidebar closing, as avante's does at the end of a session) or while Neovim quits opens
-- and moves no window, says nothing in :messages, and the panel comes back once the close
-- is over; in headless Neovim 0.7.2 and current (through scripts/nvim-runner.lua).

local N = dofile(os.getenv("RPIV_ROOT") .. "/tests/nvim/helpers.lua")
local T = N.T
local H = {}

N.plugin()
N.capture_notify(H)

function H.panel()
  local win = require("rpiv_todo.nvim.panel").window()
  return win ~= nil and vim.api.nvim_win_is_valid(win) and win or nil
end

T.test("a sidebar closing while the panel must open again: no error, the panel is back", function()
  require("rpiv_todo").setup({ locale = "en" })
  require("rpiv_todo.nvim").execute({ action = "create", subject = "Write the parser" })
  T.ok(H.panel() ~= nil, "the panel shows")
  -- An agent's sidebar: a split with a scratch buffer of its own.
  vim.cmd("vsplit")
  vim.cmd("enew")
  vim.bo.bufhidden = "wipe"
  local sidebar = vim.api.nvim_get_current_win()
  -- A paint due in the events a close runs (where Neovim 0.10+ refuses to open a window).
  require("rpiv_todo.nvim.panel").hide()
  local group = vim.api.nvim_create_augroup("closing_spec", { clear = true })
  for _, event in ipairs({ "WinEnter", "BufWinLeave", "BufHidden", "BufUnload" }) do
    vim.api.nvim_create_autocmd(event, {
      group = group,
      callback = function()
        require("rpiv_todo.nvim.frontend").request_paint()
      end,
    })
  end
  H.notes = {}
  vim.cmd("messages clear")
  vim.api.nvim_win_close(sidebar, true)
  vim.wait(200, function()
    return H.panel() ~= nil
  end)
  vim.api.nvim_del_augroup_by_id(group)
  T.same(H.notes, {}, "no notification")
  T.eq(vim.api.nvim_exec("messages", true), "", ":messages stays clean")
  T.ok(H.panel() ~= nil, "the panel is painted again once the close is over")
end)

T.test("quitting while a paint is due says nothing", function()
  local script = N.tempdir() .. "/quit.lua"
  vim.fn.writefile({
    "vim.opt.rtp:prepend(" .. string.format("%q", N.root) .. ")",
    'vim.cmd("runtime plugin/rpiv_todo.lua")',
    'require("rpiv_todo").setup({ locale = "en" })',
    'require("rpiv_todo.nvim").execute({ action = "create", subject = "A task" })',
    'vim.cmd("vsplit | enew")',
    "vim.api.nvim_create_autocmd({ 'WinEnter', 'BufWinLeave', 'VimLeavePre', 'QuitPre' }, {",
    "  callback = function() require('rpiv_todo.nvim.frontend').request_paint() end,",
    "})",
    "vim.schedule(function() require('rpiv_todo.nvim.frontend').request_paint() end)",
    'vim.cmd("qa!")',
  }, script)
  local out = vim.fn.system({
    vim.v.progpath,
    "--headless",
    "-u",
    "NONE",
    "-i",
    "NONE",
    "--noplugin",
    "-c",
    "luafile " .. script,
  })
  T.eq(vim.v.shell_error, 0, "exit status")
  T.eq(out, "", "nothing printed")
end)

T.finish()
