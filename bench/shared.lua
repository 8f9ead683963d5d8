-- bench/shared.lua: what keeping a list in a shared file costs per call (scripts/bench.sh).
-- Prints figures; asserts nothing.
--
-- For lists of 20, 1,000 and 10,000 tasks, side by side in one run (interleaved):
--   persisted   a session with rpiv_todo.persist: each call one transaction (lock, read the
--               file only when its generation moved, reduce, atomic write, unlock)
--   plain+write the same call on a list without a file, plus core.save of the same list
--               (a bare atomic write: temporary file, fsync, rename, directory sync)
--   ratio       persisted / plain+write, by the medians (the goal is at most 1.5)
--   take-in     list:sync() after another process wrote the file: the parse a watcher
--               pays (the editor's loop), median and max
-- Each row: median and max over the calls, in ms.
--
--   luajit bench/shared.lua [calls]     (package.path/cpath set as scripts/bench.sh does)

local calls = tonumber(arg and arg[1]) or 40
local core = require("rpiv_todo.core")
local persist = require("rpiv_todo.persist")
local session = require("rpiv_todo.session")
local clock = os.clock
do
  -- Wall time: os.clock is CPU time, and a save waits on the disk.
  local ok, ffi = pcall(require, "ffi")
  if ok then
    ffi.cdef("typedef struct { long tv_sec; long tv_nsec; } rpiv_ts; int clock_gettime(int, rpiv_ts *);")
    local ts = ffi.new("rpiv_ts")
    clock = function()
      ffi.C.clock_gettime(1, ts)
      return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) * 1e-9
    end
  else
    local socket_ok, socket = pcall(require, "socket")
    if socket_ok then
      clock = socket.gettime
    end
  end
end

local function tempdir()
  local p = os.tmpname()
  os.remove(p)
  assert(os.execute("mkdir -p '" .. p .. "'"))
  return p
end

local function stats(xs)
  table.sort(xs)
  return xs[math.floor((#xs + 1) / 2)] * 1000, xs[#xs] * 1000
end

local function seeded(n)
  local list = core.list()
  for i = 1, n do
    list:apply({ action = "create", subject = "Task number " .. i, description = "A task of the bench list" })
  end
  return list:state()
end

print(string.format("shared list file (%s, %d calls per row; ms, median / max)", _VERSION, calls))
print(string.format("%8s  %17s  %17s  %6s  %17s", "tasks", "persisted", "plain+write", "ratio", "take-in"))
for _, n in ipairs({ 20, 1000, 10000 }) do
  local dir = tempdir()
  local state = seeded(n)
  session.reset()
  persist.disable()
  local plain = core.list(state)
  persist.enable({ dir = dir, key = "/bench" })
  local shared = session.get("shared")
  shared.list:replace(state) -- written once: the file holds the list
  local other = core.list(state)
  other:bind(persist.path("shared"))
  local bare = dir .. "/bare.json"
  local t_persisted, t_plain, t_take = {}, {}, {}
  for i = 1, calls do
    local id = (i % n) + 1
    local status = (i % 2 == 0) and "in_progress" or "pending"
    local params = { action = "update", id = id, status = status, subject = "Task number " .. id .. "." }
    -- Which goes first alternates: a write pays for the one before it at the disk.
    local function timed_plain()
      local t0 = clock()
      plain:apply(params)
      assert(core.save(bare, plain))
      t_plain[#t_plain + 1] = clock() - t0
    end
    local function timed_persisted()
      local t0 = clock()
      local r = shared:execute(params)
      t_persisted[#t_persisted + 1] = clock() - t0
      assert(r.details.error == nil, r.content[1].text)
    end
    if i % 2 == 0 then
      timed_plain()
      timed_persisted()
    else
      timed_persisted()
      timed_plain()
    end
  end
  -- Another process's change, then the watcher's take-in (apart: its writes would be
  -- paid for by the rows above).
  for i = 1, calls do
    other:apply({ action = "update", id = (i % n) + 1, description = "changed elsewhere " .. i })
    local t0 = clock()
    local what = shared:sync()
    t_take[#t_take + 1] = clock() - t0
    assert(what == "reloaded", tostring(what))
  end
  local pm, px = stats(t_persisted)
  local bm, bx = stats(t_plain)
  local tm, tx = stats(t_take)
  print(string.format("%8d  %7.3f / %7.3f  %7.3f / %7.3f  %6.2f  %7.3f / %7.3f", n, pm, px, bm, bx, pm / bm, tm, tx))
  persist.disable()
  session.reset()
  os.execute("rm -rf '" .. dir .. "'")
end
