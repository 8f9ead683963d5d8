-- examples/mcp/server.lua: the Lua side of the MCP server (examples/mcp/main.rs). The Rust
-- host speaks the protocol; everything about the tool comes from here, through the same
-- rpiv_todo modules Neovim loads, so a user's `require("rpiv_todo").setup{ guidance = ... }`
-- (in the config file the host runs first) changes what the agent reads here too.
--
-- The list is kept the way Neovim's `persist = true` keeps it: rpiv_todo.persist, with the
-- server's working directory as the key, so the editor and the server read and write the
-- same file. Every call is one transaction in the core, on the newest list in that file and
-- under its lock, so another process's change (the editor's, a second server's) is never
-- lost, and the ids in a reply are the ids in the file.

local M = {}
local H = {}

H.session_id = nil -- the session the server's calls run in
H.errors = {} -- messages from rpiv_todo.persist, for the host to log

---Start keeping the list in `dir`, keyed by `key` (the working directory), in session `id`.
---@param dir string
---@param key string
---@param id string
---@return string|nil path the list file
function M.start(dir, key, id)
  local persist = require("rpiv_todo.persist")
  persist.enable({
    dir = dir,
    key = key,
    -- Only this process waits: an agent's call may wait for an editor's save.
    wait_ms = 2000,
    on_error = function(message)
      H.errors[#H.errors + 1] = message
    end,
  })
  H.session_id = id
  require("rpiv_todo.session").get(id) -- restores the saved list, if any
  return persist.path(id)
end

---Messages persistence reported since the last call (then forgotten).
---@return string[]
function M.take_errors()
  local errors = H.errors
  H.errors = {}
  return errors
end

---What the server advertises: the tool's name, its description with the prompt snippet and
---the guidelines (MCP has no other place a client is sure to show the model), the JSON Schema
---of its arguments, and the snippet again as the server's instructions.
---@return table { name, title, description, parameters, instructions, version }
function M.describe()
  local todo = require("rpiv_todo")
  local spec = todo.tool()
  local parts = { spec.description, "", spec.prompt_snippet, "", "Guidelines:" }
  for _, line in ipairs(spec.prompt_guidelines) do
    parts[#parts + 1] = "- " .. line
  end
  return {
    name = spec.name,
    title = spec.label,
    description = table.concat(parts, "\n"),
    parameters = spec.parameters,
    instructions = spec.prompt_snippet,
    version = todo.version,
  }
end

---Run one call given as JSON text; the result as JSON text (`{ content, details }`).
---@param args_json string
---@return string
function M.call(args_json)
  -- A transaction on the newest list in the file, answered once saved.
  return require("rpiv_todo.session").get(H.session_id):execute_json(args_json)
end

return M
