-- examples/mcp/server.lua: the Lua side of the MCP server (examples/mcp/main.rs). The Rust
-- host speaks the protocol; everything about the tool comes from here, through the same
-- rpiv_todo modules Neovim loads, so a user's `require("rpiv_todo").setup{ guidance = ... }`
-- (in the config file the host runs first) changes what the agent reads here too.
--
-- The list is kept the way Neovim's `persist = true` keeps it: rpiv_todo.persist, with the
-- server's working directory as the key, so the editor and the server read and write the
-- same file. Another process (the editor, a second server) may change that file between two
-- calls: before each call the file is read, and when it is not what this server last saw,
-- the list is taken from it first, so an edit made in the editor is never overwritten.

local M = {}
local H = {}

H.session_id = nil -- the session the server's calls run in
H.seen = nil -- the list file's text as this server last read or wrote it
H.errors = {} -- messages from rpiv_todo.persist, for the host to log

---@param path string
---@return string|nil
function H.read(path)
  local file = io.open(path, "rb")
  if file == nil then
    return nil
  end
  local text = file:read("*a")
  file:close()
  return text
end

---Start keeping the list in `dir`, keyed by `key` (the working directory), in session `id`.
---@param dir string
---@param key string
---@param id string
---@return string path the list file
function M.start(dir, key, id)
  local persist = require("rpiv_todo.persist")
  persist.enable({
    dir = dir,
    key = key,
    on_error = function(message)
      H.errors[#H.errors + 1] = message
    end,
  })
  H.session_id = id
  local path = persist.path(id)
  H.seen = H.read(path)
  require("rpiv_todo.session").get(id) -- restores the saved list, if any
  return path
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

---Take the list from its file when another process changed it since this server last saw it.
---@param session rpiv_todo.Session
---@param path string
function H.follow(session, path)
  local text = H.read(path)
  if text == nil or text == H.seen then
    return
  end
  local state, err = require("rpiv_todo.native").load(path)
  if state == nil then
    H.errors[#H.errors + 1] = "(rpiv_todo) persist: " .. tostring(err) .. "; keeping the list this server has"
    H.seen = text
    return
  end
  session.list:replace(state)
  H.seen = text
end

---Run one call given as JSON text; the result as JSON text (`{ content, details }`).
---@param args_json string
---@return string
function M.call(args_json)
  local persist = require("rpiv_todo.persist")
  local session = require("rpiv_todo.session").get(H.session_id)
  local path = persist.path(H.session_id)
  if path ~= nil then
    H.follow(session, path)
  end
  local out = session:execute_json(args_json) -- saved by rpiv_todo.persist when it changed
  if path ~= nil then
    H.seen = H.read(path)
  end
  return out
end

return M
