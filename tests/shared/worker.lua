-- tests/shared/worker.lua: one process that shares a persisted list, for tests/shared/writers.py.
-- A plain Lua host (luajit, lua5.1 or lua5.4 with the module on package.cpath) that keeps
-- session "default" with rpiv_todo.persist, as Neovim's `persist = true` and the MCP server
-- do. It reads one tool call per line of stdin (JSON text) and writes each result as one
-- line of JSON text to stdout.
--
--   W_DIR   the state directory      W_KEY   the key (the project directory)
--   W_WAIT  how long a call waits for another process's lock, in ms (default 5000)

local persist = require("rpiv_todo.persist")
persist.enable({
  dir = assert(os.getenv("W_DIR"), "W_DIR"),
  key = assert(os.getenv("W_KEY"), "W_KEY"),
  wait_ms = tonumber(os.getenv("W_WAIT") or "5000"),
})
local session = require("rpiv_todo.session").get("default")
for line in io.stdin:lines() do
  io.stdout:write(session:execute_json(line), "\n")
  io.stdout:flush()
end
