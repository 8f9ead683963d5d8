-- tests/shared/nvim_worker.lua: a Neovim with `persist = true` that works through a burst of
-- changes on the shared list while other programs write it, for tests/shared/writers.py.
-- Started headless with `-c "luafile tests/shared/nvim_worker.lua"` in the project
-- directory; the plugin is on 'runtimepath'. Tool calls go through the front end
-- (`require("rpiv_todo.nvim").execute`), completions through `:Todos done N`, the way a user
-- types them. Every reply is written to W_OUT as JSON ({ kind, text } per call), then it quits.
--
--   W_ROOT the repository   W_TAG subjects' prefix   W_N creates   W_OUT the replies file

local root = assert(os.getenv("W_ROOT"), "W_ROOT")
vim.opt.runtimepath:prepend(root)
vim.cmd("runtime plugin/rpiv_todo.lua")
require("rpiv_todo").setup({ locale = "en", persist = true })
local nv = require("rpiv_todo.nvim")

local replies = {}
local notes = {}
vim.notify = function(msg)
  notes[#notes + 1] = msg
end

local tag, n = os.getenv("W_TAG"), tonumber(os.getenv("W_N"))
local mine = {} -- ids this editor was told it created
for i = 1, n do
  local subject = tag .. "-" .. i
  local text = nv.execute({ action = "create", subject = subject }).content[1].text
  replies[#replies + 1] = { kind = "create", text = text, subject = subject }
  local id = tonumber(text:match("^Created #(%d+):"))
  if id ~= nil then
    mine[#mine + 1] = id
  end
  if i % 3 == 0 and #mine >= 2 then
    local target = mine[#mine - 1]
    text = nv.execute({ action = "update", id = target, status = "in_progress" }).content[1].text
    replies[#replies + 1] = { kind = "update", text = text }
  end
  if i % 5 == 0 and #mine >= 3 then
    local before = #notes
    vim.cmd("Todos done " .. mine[#mine - 2])
    -- The reply reaches the user as a notification.
    replies[#replies + 1] = { kind = "done", text = notes[before + 1] or "(no reply)" }
  end
  -- Let the loop run: the file watcher takes in the other program's writes.
  vim.wait(math.random(0, 3))
end
local f = assert(io.open(assert(os.getenv("W_OUT")), "w"))
f:write(vim.fn.json_encode(replies))
f:close()
vim.cmd("qall!")
