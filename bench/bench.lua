-- Benchmark of the tool-call path over ../shared/bench workloads w1 and w2, run by a real
-- interpreter against the loadable module (see scripts/bench.sh). Prints µs per call:
--   apply       list:apply(params table)  -> result as Lua tables
--   lua floor   plain Lua building the same result tables (copying the snapshot)
--   apply_json  list:apply_json(params JSON text) -> result as JSON text
--   serde floor serde_json writing the same result envelope, timed inside Rust
-- Each figure is the median of RUNS passes over the 10,000 calls.
local shared = assert(arg[1], "usage: bench.lua <shared/bench dir> [runs]")
local RUNS = tonumber(arg[2] or "5")
local cjson = require("cjson")
local core = require("rpiv_todo.core")
local clock = os.clock

local function load(name)
  local f = assert(io.open(shared .. "/" .. name, "rb"))
  local w = cjson.decode(f:read("*a"))
  f:close()
  return w
end

-- Plain Lua building the same result tables from a result it is handed.
local function build(r)
  local d = r.details
  local src = d.tasks
  local tasks = {}
  for i = 1, #src do
    local t = src[i]
    local c = { id = t.id, subject = t.subject, status = t.status,
      description = t.description, activeForm = t.activeForm, owner = t.owner }
    local b = t.blockedBy
    if b then
      local copy = {}
      for j = 1, #b do copy[j] = b[j] end
      c.blockedBy = copy
    end
    local m = t.metadata
    if m then
      local copy = {}
      for k, v in pairs(m) do copy[k] = v end
      c.metadata = copy
    end
    tasks[i] = c
  end
  return { content = { { type = "text", text = r.content[1].text } },
    details = { action = d.action, params = d.params, tasks = tasks, nextId = d.nextId, error = d.error } }
end

local function median(xs)
  table.sort(xs)
  return xs[math.floor((#xs + 1) / 2)]
end

local function run(workload)
  local ops = workload.ops
  local texts = {}
  for i = 1, #ops do texts[i] = cjson.encode(ops[i]) end
  local n = #ops
  local apply, lua_floor, apply_json, serde_floor = {}, {}, {}, {}
  for r = 1, RUNS do
    -- apply: the whole loop, no per-call clock.
    local list = core.list()
    collectgarbage()
    local t0 = clock()
    for i = 1, n do list:apply(ops[i]) end
    apply[r] = (clock() - t0) / n * 1e6

    -- The Lua floor, per call, on the same sequence.
    list = core.list()
    local spent = 0
    for i = 1, n do
      local res = list:apply(ops[i])
      local a = clock()
      build(res)
      spent = spent + (clock() - a)
    end
    lua_floor[r] = spent / n * 1e6

    list = core.list()
    collectgarbage()
    t0 = clock()
    for i = 1, n do list:apply_json(texts[i]) end
    apply_json[r] = (clock() - t0) / n * 1e6

    list = core.list()
    spent = 0
    for i = 1, n do
      list:apply_json(texts[i])
      spent = spent + list:serialize_floor()
    end
    serde_floor[r] = spent / n * 1e6
  end
  return median(apply), median(lua_floor), median(apply_json), median(serde_floor)
end

local flavour = (jit and jit.version) or _VERSION
print(string.format("rpiv_todo %s, %s (%s build), median of %d runs, µs per call", core.version, flavour, core.flavour, RUNS))
print(string.format("%-4s %9s %10s %6s   %11s %11s %6s", "", "apply", "lua floor", "ratio", "apply_json", "serde floor", "ratio"))
for _, name in ipairs({ "w1-mutations-50.json", "w2-mutations-500.json" }) do
  local w = load(name)
  local a, lf, j, sf = run(w)
  print(string.format("%-4s %9.2f %10.2f %5.2fx   %11.2f %11.2f %5.2fx", w.workload, a, lf, a / lf, j, sf, j / sf))
end
