-- examples/mcp/server.lua: the Lua side of the MCP server (examples/mcp/main.rs), run once
-- at start. The Rust host speaks the protocol and runs every call in the core; what the
-- tool is called and how it is described comes from here, through the same rpiv_todo
-- modules Neovim loads, so a user's `require("rpiv_todo").setup{ guidance = ... }` (in the
-- config file the host runs first) changes what the agent reads here too.

local M = {}

---What the server advertises, from the tool's definition (`rpiv_todo.tool.definition`): the
---description with its guidelines, each rule said once; the schema as JSON text in a fixed
---order; and the prompt snippet once, as the server's instructions (clients that show them
---would otherwise read it twice). A user's guidance override applies.
---@return table { name, title, description, parameters_json, instructions, version }
function M.describe()
  local todo = require("rpiv_todo")
  local d = require("rpiv_todo.tool").definition(todo.tool())
  return {
    name = d.name,
    title = d.title,
    description = d.description,
    parameters_json = d.parameters_json,
    instructions = d.instructions,
    version = todo.version,
  }
end

return M
