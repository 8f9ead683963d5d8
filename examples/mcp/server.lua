-- examples/mcp/server.lua: the Lua side of the MCP server (examples/mcp/main.rs), run once
-- at start. The Rust host speaks the protocol and runs every call in the core; what the
-- tool is called and how it is described comes from here, through the same rpiv_todo
-- modules Neovim loads, so a user's `require("rpiv_todo").setup{ guidance = ... }` (in the
-- config file the host runs first) changes what the agent reads here too.

local M = {}

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

return M
