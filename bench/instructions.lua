-- bench/instructions.lua -- the module's side of bench.lua's rows, counted in machine
-- instructions instead of timed: `scripts/bench.sh --instructions` runs it under
-- callgrind, which dumps its counts at every call of libc's `remove` (each row runs once
-- between two such calls, after a warm-up run, and ends with a full collection). On a
-- shared machine times move by up to 2x between runs; instruction counts move by a few
-- per cent (garbage collection), so an A/B of two revisions can be read row by row.
--
--   <interp> bench/instructions.lua <workloads dir>   (prints "<label>\t<units>" per row)
local dir = assert(arg[1], "usage: instructions.lua <workloads dir>")
local cjson = require("cjson")
local core = require("rpiv_todo.core")
local todo = require("rpiv_todo")
local entries = dofile((arg[0]:match("^(.*)/[^/]*$") or ".") .. "/entries.lua")

local function load(name)
  local f = assert(io.open(dir .. "/" .. name, "rb"))
  local w = cjson.decode(f:read("*a"))
  f:close()
  return w
end

local rows = {}
---@param label string
---@param units integer what the row's figure is per
---@param fn fun()
local function row(label, units, fn)
  rows[#rows + 1] = { label = label, units = units, fn = fn }
end

-- What a row costs beyond its work: the full collection that ends it.
row("(a full collection)", 1, function() end)
-- The first 2,000 calls of each workload: under callgrind all 10,000 of w2 take minutes.
for _, name in ipairs({ "w1-mutations-50.json", "w2-mutations-500.json" }) do
  local w = load(name)
  local ops, texts = {}, {}
  for i = 1, math.min(#w.ops, 2000) do
    ops[i], texts[i] = w.ops[i], cjson.encode(w.ops[i])
  end
  row(w.workload .. " call, JSON text", #ops, function()
    local list = core.list()
    for i = 1, #ops do
      list:apply_json(texts[i])
    end
  end)
  row(w.workload .. " call, tables", #ops, function()
    local list = core.list()
    for i = 1, #ops do
      list:apply(ops[i])
    end
  end)
end

local w4 = load("w4-overlay-tasks.json")
local replay, walk = entries.conversations(core.list(w4.state):state())
row("replay, 2,000 entries x 200 tasks, from tables", 20, function()
  for _ = 1, 20 do
    core.replay(replay)
  end
end)
row("replay walk past 1,999 non-todo entries", 20, function()
  for _ = 1, 20 do
    core.replay(walk)
  end
end)

local N, width = 200, w4.width
local list = core.list(w4.state)
local opts = { width = width, max_widget_lines = 12, theme = todo.overlay.themes.plain }
local opts10 = { width = width, max_widget_lines = 11, theme = todo.overlay.themes.plain }
row("overlay, budget 11, plain, from a list handle", N, function()
  for _ = 1, N do
    todo.overlay.render(list, opts)
  end
end)
row("overlay, budgets 11 and 10 in turn, list handle", N, function()
  for i = 1, N do
    todo.overlay.render(list, i % 2 == 0 and opts or opts10)
  end
end)
local session = todo.session("bench")
session.list:replace(w4.state)
local ov = todo.overlay.new({ max_widget_lines = 12, theme = "plain" })
row("live paint per tool call (ov:render(session)), budget 11", N, function()
  for _ = 1, N do
    ov:render(session, width)
  end
end)

local MARK = "/nonexistent/rpiv_todo-instructions-mark"
for _, r in ipairs(rows) do
  r.fn()
end
collectgarbage()
for _, r in ipairs(rows) do
  os.remove(MARK)
  r.fn()
  collectgarbage()
end
os.remove(MARK)
for _, r in ipairs(rows) do
  print(r.label .. "\t" .. r.units)
end
