-- tests/nvim/editor_child.lua: one of several live Neovims driven by
-- tests/nvim/editors_spec.lua (not a spec of its own: no _spec suffix). It starts in a
-- project directory with setup({ persist = true }), then runs the Lua chunks the spec
-- drops into RPIV_CTL as `<role>.cmd.<n>`, one after the other, and answers each in
-- `<role>.out.<n>` as JSON { ok, value }. Waiting for the next chunk runs the event loop,
-- so file watchers and scheduled callbacks fire between chunks, as in a real editor. A
-- chunk returning "quit" ends it. RPIV_WATCH sets require("rpiv_todo.nvim.persist").watch_method.

local ctl = assert(os.getenv("RPIV_CTL"), "RPIV_CTL")
local role = assert(os.getenv("RPIV_ROLE"), "RPIV_ROLE")

vim.cmd("runtime plugin/rpiv_todo.lua")

local E = { notes = {} }
_G.E = E
vim.notify = function(msg, level)
  E.notes[#E.notes + 1] = { msg = msg, level = level }
end

require("rpiv_todo.nvim.persist").watch_method = os.getenv("RPIV_WATCH") or "auto"
require("rpiv_todo").setup({ locale = "en", persist = true })
E.nv = require("rpiv_todo.nvim")

---Run a tool call in the default session; its reply text.
function E.call(params)
  return E.nv.execute(params).content[1].text
end

---The panel's lines ({} while hidden).
function E.panel()
  local win, buf = E.nv.window()
  return win and vim.api.nvim_buf_get_lines(buf, 0, -1, false) or {}
end

---The default session's tasks as "#id subject status".
function E.tasks()
  local out = {}
  for i, t in ipairs(require("rpiv_todo").session("default"):state().tasks) do
    out[i] = "#" .. t.id .. " " .. t.subject .. " " .. t.status
  end
  return out
end

---Wait (running the event loop) until the panel shows `text`; true when it did.
function E.panel_shows(text, ms)
  return vim.wait(ms or 2000, function()
    return table.concat(E.panel(), "\n"):find(text, 1, true) ~= nil
  end, 20)
end

local function read(path)
  local f = assert(io.open(path, "rb"))
  local text = f:read("*a")
  f:close()
  return text
end

local n = 1
while true do
  local cmd = ctl .. "/" .. role .. ".cmd." .. n
  if not vim.wait(60000, function()
    return vim.loop.fs_stat(cmd) ~= nil
  end, 10) then
    break
  end
  local chunk, err = (loadstring or load)(read(cmd), "=" .. role .. "." .. n)
  local ok, value
  if chunk == nil then
    ok, value = false, err
  else
    ok, value = pcall(chunk)
  end
  local out = ctl .. "/" .. role .. ".out." .. n
  local f = assert(io.open(out .. ".part", "wb"))
  f:write(vim.json.encode({ ok = ok, value = ok and value or tostring(value) }))
  f:close()
  assert(os.rename(out .. ".part", out))
  if value == "quit" then
    break
  end
  n = n + 1
end
