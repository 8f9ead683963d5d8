-- tests/screen/init.lua: the config of the Neovim that tests/screen/screen_spec.lua drives
-- in a tmux pane: the plugin from the repository (RPIV_ROOT) on 'runtimepath', as a
-- plugin manager would put it, and one command that plays the agent's part.
--
--   :Agent plan N [session]     N tool calls creating tasks (#1 then in progress)
--   :Agent call {json} [session] one tool call given as JSON text
-- The session defaults to "chat-1", a named session as agent plugins use.

local root = assert(os.getenv("RPIV_ROOT"), "RPIV_ROOT")
vim.opt.runtimepath:prepend(root)
vim.o.swapfile = false
vim.o.shortmess = vim.o.shortmess .. "I"
vim.o.laststatus = 2
vim.o.ruler = true
vim.cmd("runtime plugin/rpiv_todo.lua")
require("rpiv_todo").setup({ locale = "en" })

vim.api.nvim_create_user_command("Agent", function(opts)
  local what, rest = opts.args:match("^(%S+)%s*(.*)$")
  local execute = require("rpiv_todo").tool().execute
  if what == "plan" then
    local n, session = rest:match("^(%d+)%s*(%S*)$")
    session = session ~= "" and session or "chat-1"
    for i = 1, tonumber(n) do
      execute({ action = "create", subject = "Task number " .. i .. " of the plan" }, { session = session })
    end
    execute({ action = "update", id = 1, status = "in_progress", activeForm = "Working" }, { session = session })
  elseif what == "call" then
    local json, session = rest:match("^(%b{})%s*(%S*)$")
    execute(json, { session = session ~= "" and session or "chat-1" })
  end
end, { nargs = "+" })
