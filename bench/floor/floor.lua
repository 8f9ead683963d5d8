-- bench/floor/floor.lua -- the replay rows' snapshot copy beside its floor (scripts/bench.sh
-- --floor): one todo result of 200 tasks (w4), replayed by the module and by the anchor,
-- and the same tasks copied by floor.c's two C functions, which check nothing. Interleaved
-- passes, each ending with a full collection; µs per copy, best and median.
--
--   <interp> bench/floor/floor.lua <workloads dir> <anchor dir> [runs]
local dir, anchor_dir = assert(arg[1]), assert(arg[2])
local RUNS = tonumber(arg[3] or "15")
local REPS = 200

local cjson = require("cjson")
local floor = require("floor")
local core = require("rpiv_todo.core")
package.path = anchor_dir .. "/?.lua;" .. package.path
local A = require("todo")
local entries = dofile((arg[0]:match("^(.*)/floor/[^/]*$") or "bench") .. "/entries.lua")

local f = assert(io.open(dir .. "/w4-overlay-tasks.json", "rb"))
local snapshot = core.list(cjson.decode(f:read("*a")).state):state()
f:close()
local one = { entries.todo_entry(1, snapshot) }
local tasks = snapshot.tasks

local rows = {
  {
    "module: core.replay, one todo result",
    function()
      core.replay(one)
    end,
  },
  {
    "anchor: replay, one todo result",
    function()
      A.replay(one)
    end,
  },
  {
    "floor.checked: the reads a check needs",
    function()
      floor.checked(tasks)
    end,
  },
  {
    "floor.copy: the calls alone",
    function()
      floor.copy(tasks)
    end,
  },
}

local clock = os.clock
local times = {}
for _ = 1, RUNS do
  for i, row in ipairs(rows) do
    local fn = row[2]
    collectgarbage()
    local t0 = clock()
    for _ = 1, REPS do
      fn()
    end
    collectgarbage()
    times[i] = times[i] or {}
    table.insert(times[i], (clock() - t0) / REPS * 1e6)
  end
end

local medians = {}
print(
  string.format(
    "%s: a 200-task snapshot copied, µs (best / median of %d passes; ÷ the anchor's median)",
    jit and jit.version or _VERSION,
    RUNS
  )
)
for i = 1, #rows do
  local xs = times[i]
  table.sort(xs)
  medians[i] = xs[math.floor((#xs + 1) / 2)]
end
for i, row in ipairs(rows) do
  print(string.format("  %-42s %7.1f / %7.1f  %5.2f", row[1], times[i][1], medians[i], medians[i] / medians[2]))
end
