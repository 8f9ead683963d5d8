-- rpiv_todo.tool: the host-neutral spec of the `todo` tool a host registers with its LLM.
--
-- Name, label, description and `spec()` live here; the rest, one file per concern, is
-- re-exported so `require("rpiv_todo.tool")` offers the whole tool:
--   tool/schema.lua    the JSON Schema parameters, normal and strict form
--   tool/execute.lua   execute, execute_strict, from_strict
--   tool/render.lua    render_call and render_result for a host's tool-call log
-- The end-of-turn reminder sits with the rest of the prompt text, in guidance.lua.
-- Everything the model reads is English and never localized.

local schema = require("rpiv_todo.tool.schema")
local execute = require("rpiv_todo.tool.execute")
local render = require("rpiv_todo.tool.render")

local M = {}

M.name = schema.NAME
M.label = schema.LABEL

-- The tool's description: each action with its fields, the batch form, the status machine
-- and what the fields that need it mean, each said once. How to use the tool well is the
-- guidelines' part (guidance.lua), and the snippet says when to use it.
M.description = table.concat({
  "create {subject, description?, activeForm?, owner?, metadata?, blockedBy?}",
  "update {id, status?, addBlockedBy?, removeBlockedBy?, create's fields?}",
  "list {status?, includeDeleted?}; get {id}: the task and its links; delete {id}: leaves a"
    .. " tombstone; clear: ids restart at 1",
  "create and update also take tasks: [{...}], one call's fields each; all or nothing.",
  "Ids are the #numbers replies give, never list positions.",
  "Statuses: pending ⇄ in_progress, either → completed, any → deleted; completed and deleted are"
    .. " final; the current status is a no-op.",
  "blockedBy: existing, undeleted ids, no cycle. update merges metadata by key; null removes a key.",
}, "\n")

M.parameters = schema.parameters
M.strict_parameters = schema.strict_parameters
M.PROPERTY_ORDER = schema.PROPERTY_ORDER
M.STRICT_METADATA_DESCRIPTION = schema.STRICT_METADATA_DESCRIPTION
M.STRICT_NOTE = schema.STRICT_NOTE
M.TASK_PROPERTY_ORDER = schema.TASK_PROPERTY_ORDER
M.to_json = schema.to_json
M.parameters_json = schema.parameters_json

M.execute = execute.execute
M.execute_strict = execute.execute_strict
M.from_strict = execute.from_strict

M.render_call = render.render_call
M.render_result = render.render_result
M.action_glyphs = render.action_glyphs
M.status_glyphs = render.status_glyphs
M.error_glyph = render.error_glyph

---The end-of-turn reminder (rpiv_todo.guidance.reminder).
---@param source any a session id, a session, a state, or nil for "default"
---@return string|nil
function M.reminder(source)
  return require("rpiv_todo.guidance").reminder(source)
end

---The whole spec for `guidance` (resolved by rpiv_todo.guidance). With `strict`, the
---parameters are the strict-mode form, `strict = true` is set, and `execute` converts a
---call back to the normal form (`from_strict`) before it runs.
---@param guidance rpiv_todo.Guidance
---@param strict? boolean
---@return rpiv_todo.ToolSpec
function M.spec(guidance, strict)
  local guidelines = {}
  for i, line in ipairs(guidance.prompt_guidelines) do
    guidelines[i] = line
  end
  return {
    name = M.name,
    label = M.label,
    description = strict and M.description .. "\n" .. M.STRICT_NOTE or M.description,
    parameters = strict and M.strict_parameters() or M.parameters(),
    strict = strict or nil,
    prompt_snippet = guidance.prompt_snippet,
    prompt_guidelines = guidelines,
    execute = strict and M.execute_strict or M.execute,
    render_call = M.render_call,
    render_result = M.render_result,
  }
end

---The tool as a host with one description field sends it, each part once: the description
---with the guidelines under "Guidelines:", the snippet as the server's `instructions` (or,
---with `opts.instructions = false`, for a host that has none, at the head of the
---description), and the schema as JSON text in a fixed order (`action` first). The same
---spec gives the same bytes at every start, so a provider's prompt cache keeps the tool.
---@param spec rpiv_todo.ToolSpec what `require("rpiv_todo").tool()` returns
---@param opts? { instructions?: boolean } `instructions = false`: the snippet goes in the description
---@return { name: string, title: string, description: string, instructions: string|nil, parameters_json: string }
function M.definition(spec, opts)
  local with_instructions = not (type(opts) == "table" and opts.instructions == false)
  local parts = {}
  if not with_instructions then
    parts[1] = spec.prompt_snippet
    parts[2] = ""
  end
  parts[#parts + 1] = spec.description
  parts[#parts + 1] = ""
  parts[#parts + 1] = "Guidelines:"
  for _, line in ipairs(spec.prompt_guidelines) do
    parts[#parts + 1] = "- " .. line
  end
  return {
    name = spec.name,
    title = spec.label,
    description = table.concat(parts, "\n"),
    instructions = with_instructions and spec.prompt_snippet or nil,
    parameters_json = M.to_json(spec.parameters),
  }
end

return M
