-- bench.lua -- the figures of bench/README.md's table, run by a real interpreter against the
-- loadable module (scripts/bench.sh builds it and sets package.cpath/package.path).
--
--   <interp> bench/bench.lua <workloads dir> <anchor dir or ""> [runs]
--
-- Each row times the module and, when the plain-Lua anchor (`todo.lua`, `overlay.lua`) is
-- given, the same work done by the anchor in the same process. Repetitions are interleaved
-- (module, anchor, module, anchor, ...) and the best and the median of `runs` are reported
-- for each side, so a busy machine slows both alike. Figures are µs per unit of work; the
-- ratios are module / anchor, of the bests and of the medians (below 1: the module is
-- faster). A row is judged by its median ratio. Nothing here asserts a speed.
local M = {}
local H = {}

local dir = assert(arg[1], "usage: bench.lua <workloads dir> <anchor dir or ''> [runs]")
local anchor_dir = arg[2] ~= "" and arg[2] or nil
local RUNS = tonumber(arg[3] or "5")

local cjson = require("cjson")
H.entries = dofile((arg[0]:match("^(.*)/[^/]*$") or ".") .. "/entries.lua")
local core = require("rpiv_todo.core")
local todo = require("rpiv_todo")
local clock = os.clock

---@param name string
---@return table
function H.load(name)
  local f = assert(io.open(dir .. "/" .. name, "rb"))
  local w = cjson.decode(f:read("*a"))
  f:close()
  return w
end

---Seconds `fn` takes for one pass (it runs `n` units); µs per unit. The pass ends with
---a full collection, so each side pays for collecting its own garbage: the module holds
---the collector during its native calls under LuaJIT and 5.1, and a loop that
---allocates nothing in Lua between those calls would otherwise leave all of its garbage
---to whatever runs next.
---@param fn fun()
---@param n integer
---@return number
function H.time(fn, n)
  collectgarbage()
  local t0 = clock()
  fn()
  collectgarbage()
  return (clock() - t0) / n * 1e6
end

---The best and the median of some passes' figures.
---@param xs number[]
---@return { best: number, median: number }
function H.stats(xs)
  table.sort(xs)
  local n = #xs
  local median = n % 2 == 1 and xs[(n + 1) / 2] or (xs[n / 2] + xs[n / 2 + 1]) / 2
  return { best = xs[1], median = median }
end

---RUNS interleaved passes of `mine` and `theirs` (theirs may be nil): the best and the
---median of each.
---@return { best: number, median: number } mine, { best: number, median: number }|nil theirs
function H.best(mine, theirs, n)
  local a, b = {}, {}
  for _ = 1, RUNS do
    a[#a + 1] = H.time(mine, n)
    if theirs then
      b[#b + 1] = H.time(theirs, n)
    end
  end
  return H.stats(a), theirs and H.stats(b) or nil
end

M.rows = {}

---@param label string
---@param mine { best: number, median: number }
---@param theirs { best: number, median: number }|nil
function H.row(label, mine, theirs)
  M.rows[#M.rows + 1] = { label = label, mine = mine, theirs = theirs }
  if theirs then
    print(
      string.format(
        "%-52s %9.2f %9.2f %9.2f %9.2f %6.2f %6.2f",
        label,
        mine.best,
        mine.median,
        theirs.best,
        theirs.median,
        mine.best / theirs.best,
        mine.median / theirs.median
      )
    )
  else
    print(string.format("%-52s %9.2f %9.2f %9s %9s %6s %6s", label, mine.best, mine.median, "-", "-", "-", "-"))
  end
  io.stdout:flush()
end

local A, AO -- the anchor's reducer and overlay, when given
if anchor_dir then
  package.path = anchor_dir .. "/?.lua;" .. package.path
  A = require("todo")
  AO = require("overlay")
end

local flavour = (jit and jit.version) or _VERSION
print(
  string.format(
    "rpiv_todo %s (%s build) under %s; best and median of %d interleaved runs; µs per unit",
    core.version,
    core.flavour,
    flavour,
    RUNS
  )
)
if not anchor_dir then
  print("anchor comparison skipped: no anchor folder (set RPIV_ANCHOR); module figures only")
end
print(
  string.format("%-52s %9s %9s %9s %9s %6s %6s", "work", "module", "(median)", "anchor", "(median)", "ratio", "(med.)")
)

-- Tool calls: w1 and w2, JSON text and tables. -----------------------------------------
for _, name in ipairs({ "w1-mutations-50.json", "w2-mutations-500.json" }) do
  local w = H.load(name)
  local ops, n = w.ops, #w.ops
  local texts = {}
  for i = 1, n do
    texts[i] = cjson.encode(ops[i])
  end
  local mine, theirs = H.best(function()
    local list = core.list()
    for i = 1, n do
      list:apply_json(texts[i])
    end
  end, A and function()
    local list = A.new()
    for i = 1, n do
      list:apply_json(texts[i])
    end
  end, n)
  H.row(w.workload .. " call, JSON text", mine, theirs)
  mine, theirs = H.best(function()
    local list = core.list()
    for i = 1, n do
      list:apply(ops[i])
    end
  end, A and function()
    local list = A.new()
    for i = 1, n do
      list:apply(ops[i])
    end
  end, n)
  H.row(w.workload .. " call, tables", mine, theirs)
end

-- Replay: 2,000 todo results, and the walk past 1,999 other entries. -------------------
local w4 = H.load("w4-overlay-tasks.json")
local snapshot = core.list(w4.state):state()

local replay_entries, walk_entries = H.entries.conversations(snapshot)
do
  local REPS = 200
  local mine, theirs = H.best(function()
    for _ = 1, REPS do
      core.replay(replay_entries)
    end
  end, A and function()
    for _ = 1, REPS do
      A.replay(replay_entries)
    end
  end, REPS)
  H.row("replay, 2,000 entries x 200 tasks, from tables", mine, theirs)
  mine, theirs = H.best(function()
    for _ = 1, REPS do
      core.replay(walk_entries)
    end
  end, A and function()
    for _ = 1, REPS do
      A.replay(walk_entries)
    end
  end, REPS)
  H.row("replay walk past 1,999 non-todo entries", mine, theirs)
end

-- Overlay: budget 11, plain, from a list handle; and one live paint per tool call. -----
do
  local N = w4.iterations
  local width = w4.width
  local list = core.list(w4.state)
  local opts = { width = width, max_widget_lines = 12, theme = todo.overlay.themes.plain }
  local aopts = { width = width, max_widget_lines = 12, theme = AO and AO.themes.plain }
  local alist = A and A.new(w4.state)
  local mine, theirs = H.best(function()
    for _ = 1, N do
      todo.overlay.render(list, opts)
    end
  end, A and function()
    for _ = 1, N do
      AO.render(alist.tasks, aopts)
    end
  end, N)
  H.row("overlay, budget 11, plain, from a list handle", mine, theirs)

  -- The same with the budget changing on every render (11, then 10): the module's view of
  -- an unchanged list is reused only for the same budget, so this row draws every time.
  local opts10 = { width = width, max_widget_lines = 11, theme = todo.overlay.themes.plain }
  local aopts10 = { width = width, max_widget_lines = 11, theme = AO and AO.themes.plain }
  mine, theirs = H.best(function()
    for i = 1, N do
      todo.overlay.render(list, i % 2 == 0 and opts or opts10)
    end
  end, A and function()
    for i = 1, N do
      AO.render(alist.tasks, i % 2 == 0 and aopts or aopts10)
    end
  end, N)
  H.row("overlay, budgets 11 and 10 in turn, list handle", mine, theirs)

  -- What a front end does after each tool call (rpiv_todo.nvim's paint): render the live
  -- overlay from the session, whose list is read in place (no snapshot is built).
  local session = todo.session("bench")
  session.list:replace(w4.state)
  local ov = todo.overlay.new({ max_widget_lines = 12, theme = "plain" })
  local alive = AO and AO.new({ max_widget_lines = 12, theme = AO.themes.plain })
  mine, theirs = H.best(function()
    for _ = 1, N do
      ov:render(session, width)
    end
  end, A and function()
    for _ = 1, N do
      alive:render(alist, width)
    end
  end, N)
  H.row("live paint per tool call (ov:render(session)), budget 11", mine, theirs)
end

-- One update with 200,000 ids against 20,000 tasks (the blockedBy merge must not be
-- quadratic). Includes loading the list from its JSON text.
do
  local tasks = {}
  for k = 1, 20000 do
    tasks[k] = { id = k, subject = "t" .. k, status = "pending" }
  end
  local state = cjson.encode({ tasks = tasks, nextId = 20001 })
  local adds, removes = {}, {}
  for i = 0, 199999 do
    adds[i + 1] = i % 19999 + 1
    removes[i + 1] = 20001 + i
  end
  local text = cjson.encode({ action = "update", id = 20000, addBlockedBy = adds, removeBlockedBy = removes })
  local mine = H.best(function()
    core.list(state):apply_json(text)
  end, nil, 1)
  H.row("update with 200,000 ids, 20,000 tasks, JSON text", mine)
end

return M
