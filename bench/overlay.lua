-- Benchmark of the overlay (w4 in ../shared/bench) and of replay (w3, built here), run by
-- a real interpreter against the loadable module (see scripts/bench.sh). Prints µs per
-- render of 200 tasks at budgets 11 and 200, plain and ANSI, width 80 (so truncation
-- runs), from a state table and from a core.list handle; and ms per replay of 2,000
-- branch entries each holding a 200-task snapshot.
local shared = assert(arg[1], "usage: overlay.lua <shared/bench dir>")
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
local cjson = require("cjson")
local core = require("rpiv_todo.core")
local todo = require("rpiv_todo")
local clock = os.clock

local f = assert(io.open(shared .. "/w4-overlay-tasks.json", "rb"))
local w4 = cjson.decode(f:read("*a"))
f:close()
local state, list = w4.state, core.list(w4.state)
local N = w4.iterations

local function per_call(fn)
  local best
  for _ = 1, 3 do
    local t0 = clock()
    for _ = 1, N do fn() end
    local us = (clock() - t0) / N * 1e6
    best = (best == nil or us < best) and us or best
  end
  return best
end

local flavour = (jit and jit.version) or _VERSION
print(string.format("overlay w4: 200 tasks, width 80, %s, best of 3 x %d renders, µs per render", flavour, N))
print(string.format("%-7s %-6s %12s %12s", "budget", "theme", "state table", "list handle"))
for _, budget in ipairs(w4.budgets) do
  for _, theme in ipairs({ "plain", "ansi" }) do
    local opts = { width = 80, max_widget_lines = budget + 1, theme = todo.overlay.themes[theme] }
    assert(table.concat(todo.overlay.render(state, opts), "\n") == table.concat(todo.overlay.render(list, opts), "\n"))
    local a = per_call(function() todo.overlay.render(state, opts) end)
    local b = per_call(function() todo.overlay.render(list, opts) end)
    print(string.format("%-7d %-6s %12.2f %12.2f", budget, theme, a, b))
  end
end

-- w3: 2,000 todo tool results, each with the 200-task snapshot, plus chatter between.
local snapshot = list:state()
local entries = {}
for i = 1, 2000 do
  entries[#entries + 1] = { type = "message", message = { role = "user", content = "turn " .. i } }
  entries[#entries + 1] = { type = "message", message = { role = "toolResult", toolName = "todo",
    details = { action = "list", params = { action = "list" }, tasks = snapshot.tasks, nextId = snapshot.nextId } } }
end
local text = cjson.encode(entries)
local function ms(fn)
  local t0 = clock()
  for _ = 1, 20 do fn() end
  return (clock() - t0) / 20 * 1e3
end
print(string.format("replay w3 (2,000 entries x 200 tasks, %d bytes of JSON): tables %.3f ms, JSON text %.1f ms",
  #text, ms(function() core.replay(entries) end), ms(function() core.replay(text) end)))
