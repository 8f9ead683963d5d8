-- rpiv_todo.adapters.codecompanion: the `todo` tool as a codecompanion.nvim tool.
--
--   require("codecompanion").setup({
--     interactions = { chat = { tools = {   -- `strategies = { chat = { tools = {` before v18
--       todo = {
--         description = "Keep a task list for multi-step work",
--         callback = function() return require("rpiv_todo.adapters.codecompanion").tool() end,
--       },
--     } } },
--   })
--
-- codecompanion sends `schema` (an OpenAI function definition) and `system_prompt` to the
-- model, calls each of `cmds` as fn(self, args, opts) with the decoded arguments (JSON
-- null as vim.NIL) and hands what they return ({ status, data }) to `output.success` or
-- `output.error`, which put the text into the chat for the model. Both output signatures
-- are handled: (self, stdout, meta) from v18 on and (self, tools, cmd, stdout) before.
-- Plain Lua: no `vim.*` here.

local M = {}
local H = {}

---@class rpiv_todo.CodeCompanionOptions
---@field session? string|fun(self: table): string|nil the session a call runs in (a function receives the tool); nil: "default"

---The system prompt: the prompt snippet and the guidelines.
---@param spec rpiv_todo.ToolSpec
---@return string
function M.system_prompt(spec)
  local parts = { "## Todo tool (`" .. spec.name .. "`)", "", spec.prompt_snippet, "" }
  for _, line in ipairs(spec.prompt_guidelines) do
    parts[#parts + 1] = "- " .. line
  end
  return table.concat(parts, "\n")
end

---The text codecompanion collected from `cmds`: a list of what each returned as `data`
---(strings, or tables that carry `data`), flattened one level.
---@param out any
---@return string
function H.text(out)
  if type(out) == "string" then
    return out
  end
  if type(out) ~= "table" then
    return ""
  end
  if type(out.data) == "string" then
    return out.data
  end
  local parts = {}
  for i = 1, #out do
    local item = out[i]
    if type(item) == "table" and type(item.data) ~= "string" then
      parts[#parts + 1] = H.text(item)
    elseif type(item) == "table" then
      parts[#parts + 1] = item.data
    elseif item ~= nil then
      parts[#parts + 1] = tostring(item)
    end
  end
  return table.concat(parts, "\n")
end

---Normalize both output signatures to (chat, text).
---v18+: (self, stdout, meta) with meta.tools.chat; before: (self, tools, cmd, stdout).
---@return table|nil chat, string text
function H.output_args(a, b, c)
  if type(a) == "table" and a.chat ~= nil then
    return a.chat, H.text(c)
  end
  local tools = type(b) == "table" and b.tools or nil
  return tools and tools.chat or nil, H.text(a)
end

---@param self table the tool
---@param chat table|nil
---@param text string
function H.add_output(self, chat, text)
  if chat ~= nil and type(chat.add_tool_output) == "function" then
    chat:add_tool_output(self, text)
  end
end

---The codecompanion tool. The spec is built now, from the current rpiv_todo.setup().
---@param opts? rpiv_todo.CodeCompanionOptions
---@return table tool { name, schema, system_prompt, cmds, output }
function M.tool(opts)
  opts = opts or {}
  if type(opts) ~= "table" then
    error("(rpiv_todo) codecompanion: expected a table of options { session }", 0)
  end
  local session = opts.session
  if session ~= nil and type(session) ~= "string" and type(session) ~= "function" then
    error("(rpiv_todo) codecompanion: session: expected a session id string or a function returning one", 0)
  end
  local spec = require("rpiv_todo").tool()
  return {
    name = spec.name,
    schema = {
      type = "function",
      ["function"] = {
        name = spec.name,
        description = spec.description,
        parameters = spec.parameters,
        -- Strict mode wants every property required and no free-form objects; the
        -- tool's optional fields and free-form metadata are neither.
        strict = false,
      },
    },
    system_prompt = M.system_prompt(spec),
    cmds = {
      ---@param self table the tool
      ---@param args table|string the decoded arguments (JSON text also works)
      ---@return { status: "success"|"error", data: string }
      function(self, args, _)
        local id = session
        if type(id) == "function" then
          id = id(self)
        end
        local result = spec.execute(args, { session = id })
        local first = result.content and result.content[1]
        local text = type(first) == "table" and first.text or ""
        if result.details and result.details.error ~= nil then
          return { status = "error", data = text }
        end
        return { status = "success", data = text }
      end,
    },
    output = {
      success = function(self, a, b, c)
        local chat, text = H.output_args(a, b, c)
        H.add_output(self, chat, text)
      end,
      error = function(self, a, b, c)
        local chat, text = H.output_args(a, b, c)
        H.add_output(self, chat, text)
      end,
    },
  }
end

return M
