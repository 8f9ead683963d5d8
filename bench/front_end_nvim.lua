-- bench/front_end_nvim.lua: one tool call through the Neovim front end with the panel
-- painted, two ways: `require("rpiv_todo.nvim").execute` (a table in the normal form) and
-- the codecompanion adapter's command with the strict form codecompanion hands over
-- (nulls as vim.NIL, the chat's own session). Each call changes the list, so the panel
-- repaints every time. Prints one line per row (median and mean in µs over the calls);
-- asserts nothing. Uses only what every version of the plugin offers (setup, execute,
-- the adapter's tool()), so scripts/bench.sh runs it against an older checkout too:
--   nvim --headless -u NONE -i NONE --noplugin -c "set rtp^=<plugin>" \
--     -c "luafile bench/front_end_nvim.lua"
-- RPIV_BENCH_LABEL names the checkout in the output; RPIV_BENCH_CALLS the calls per row.

local label = os.getenv("RPIV_BENCH_LABEL") or "this"
local calls = tonumber(os.getenv("RPIV_BENCH_CALLS") or "") or 400
local uv = vim.uv or vim.loop

vim.cmd("runtime plugin/rpiv_todo.lua")
require("rpiv_todo").setup({ locale = "en" })
local nv = require("rpiv_todo.nvim")
vim.notify = function() end

-- Twenty tasks: the panel shows its 12 rows, with a summary row.
local TASKS = 20

---Median and mean of `xs` (microseconds).
local function stats(xs)
  local sum = 0
  for _, x in ipairs(xs) do
    sum = sum + x
  end
  table.sort(xs)
  return xs[math.floor((#xs + 1) / 2)], sum / #xs
end

---Time `call(i)` for i = 1..calls (after 50 warm-up calls), in microseconds.
local function measure(call)
  for i = 1, 50 do
    call(i)
  end
  local out = {}
  for i = 1, calls do
    local t0 = uv.hrtime()
    call(i)
    out[i] = (uv.hrtime() - t0) / 1e3
  end
  return stats(out)
end

local function report(row, median, mean)
  io.stdout:write(string.format("front_end %s %s median_us=%.1f mean_us=%.1f\n", label, row, median, mean))
end

-- Row 1: require("rpiv_todo.nvim").execute in session "bench".
for i = 1, TASKS do
  nv.execute({ action = "create", subject = "Bench task " .. i }, { session = "bench" })
end
local statuses = { "in_progress", "pending" }
local median, mean = measure(function(i)
  nv.execute({ action = "update", id = i % TASKS + 1, status = statuses[i % 2 + 1] }, { session = "bench" })
end)
assert(nv.window() ~= nil, "the panel is painted")
report("execute", median, mean)

-- Row 2: the codecompanion adapter's command, strict form, the chat's own session.
local cc = require("rpiv_todo.adapters.codecompanion")
local tool = cc.tool()
local chat = { messages = {} }
local tools = { chat = chat }
local required = require("rpiv_todo.tool").strict_parameters().required
local function strict(args)
  for _, name in ipairs(required) do
    if args[name] == nil then
      args[name] = vim.NIL
    end
  end
  return args
end
local run = tool.cmds[1]
for i = 1, TASKS do
  run(tools, strict({ action = "create", subject = "Chat task " .. i }), {})
end
median, mean = measure(function(i)
  run(tools, strict({ action = "update", id = i % TASKS + 1, status = statuses[i % 2 + 1] }), {})
end)
assert(nv.window() ~= nil, "the panel is painted")
report("codecompanion_strict", median, mean)
vim.cmd("qall!")
