-- Overlay against the plain-Lua anchor, in more detail than scripts/bench.sh:
-- plain and ANSI, the anchor with and without its memos (`opts.memo`), and the old live
-- paint from a snapshot beside the one from the session. Interleaved repetitions, best of
-- each; the ratio is module / the faster anchor. Prints figures; asserts only that both
-- render the same lines. Run by hand from the repository:
--   <interp> -e "package.cpath='target/lua-<flavour>/?.so;'..package.cpath" \
--     bench/overlay_anchor.lua bench/workloads/w4-overlay-tasks.json [reps]
-- The anchor comes from $RPIV_ANCHOR (default ../shared/bench/anchor).
local w4_path = assert(arg[1], "usage: overlay_anchor.lua <w4-overlay-tasks.json> [reps]")
local reps = tonumber(arg[2]) or 7
local anchor_dir = os.getenv("RPIV_ANCHOR") or "../shared/bench/anchor"
package.path = "lua/?.lua;lua/?/init.lua;" .. anchor_dir .. "/?.lua;" .. package.path
local cjson = require("cjson")
local todo = require("rpiv_todo")
local A = require("overlay") -- the anchor's overlay.lua
local anchor_todo = require("todo") -- the anchor's reducer (its list holds plain tables)
local clock = os.clock

local f = assert(io.open(w4_path, "rb"))
local w4 = cjson.decode(f:read("*a"))
f:close()
local N = math.floor((w4.iterations or 10000) / 2)

local session = todo.session("bench")
session.list:replace(w4.state)
local list = session.list
local alist = anchor_todo.new(w4.state)

local function time(fn)
  local t0 = clock()
  for _ = 1, N do
    fn()
  end
  return (clock() - t0) / N * 1e6
end

-- Interleaved: each repetition times every contender once; best per contender.
local function race(fns)
  local best = {}
  for _ = 1, reps do
    for i, fn in ipairs(fns) do
      local us = time(fn)
      best[i] = (best[i] == nil or us < best[i]) and us or best[i]
    end
  end
  return best
end

local function same(a, b, what)
  assert(table.concat(a, "\n") == table.concat(b, "\n"), what .. ": module and anchor lines differ")
end

local flavour = (jit and jit.version) or _VERSION
print(string.format("overlay vs plain-Lua anchor, %s, w4 (200 tasks), width 80, best of %d x %d", flavour, reps, N))
print(string.format("%-52s %9s %9s %9s %7s", "work", "module", "anchor", "memo'd", "ratio"))
local function row(name, m, a, am)
  print(string.format("%-52s %7.2fµs %7.2fµs %7.2fµs %7.2f", name, m, a, am, m / math.min(a, am)))
end

for _, theme in ipairs({ "plain", "ansi" }) do
  local opts = { width = 80, max_widget_lines = 12, theme = theme }
  local aopts = { width = 80, max_widget_lines = 12, theme = A.themes[theme] }
  local amemo = { width = 80, max_widget_lines = 12, theme = A.themes[theme], memo = true }
  same(todo.overlay.render(list, opts), A.render(alist.tasks, aopts), theme)
  local t = race({
    function()
      todo.overlay.render(list, opts)
    end,
    function()
      A.render(alist.tasks, aopts)
    end,
    function()
      A.render(alist.tasks, amemo)
    end,
  })
  row("overlay, budget 11, " .. theme .. ", from a list handle", t[1], t[2], t[3])
end

-- The live paint of a tool call: the live object over the session (module) and over the
-- anchor's list (its own tables). The old module path re-materialised the snapshot first.
local ov = todo.overlay.new()
local live, live_memo = A.new({ max_widget_lines = 12 }), A.new({ max_widget_lines = 12, memo = true })
same(ov:render(session, 80), live:render(alist, 80), "live")
local ov_state = todo.overlay.new()
local t = race({
  function()
    ov:render(session, 80)
  end,
  function()
    live:render(alist, 80)
  end,
  function()
    live_memo:render(alist, 80)
  end,
  function()
    ov_state:render(session:state(), 80)
  end,
})
row("live paint per tool call, ov:render(session)", t[1], t[2], t[3])
row("  (the snapshot path: ov:render(session:state()))", t[4], t[2], t[3])
