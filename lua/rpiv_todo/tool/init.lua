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

M.description = table.concat({
  "Keep a task list for multi-step work in this session, and update it as you go.",
  " Actions: create (subject required; optional description, activeForm, owner, metadata,",
  " blockedBy), update (id plus at least one of status, subject, description, activeForm,",
  " owner, metadata, addBlockedBy, removeBlockedBy), list (optional status filter and",
  " includeDeleted), get (id; shows what the task waits for and what it blocks), delete (id;",
  " the task stays as a tombstone) and clear (drops every task and restarts ids at 1).",
  " Statuses: pending ⇄ in_progress, either → completed, any → deleted; completed can only",
  " become deleted, and deleted is final.",
  " The tool keeps the list, not the conversation: when the conversation is summarized the",
  " list stays as it was. Call list whenever you need to see it again, rather than",
  " recreating tasks.",
})

M.parameters = schema.parameters
M.strict_parameters = schema.strict_parameters
M.PROPERTY_ORDER = schema.PROPERTY_ORDER
M.STRICT_METADATA_DESCRIPTION = schema.STRICT_METADATA_DESCRIPTION

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
    description = M.description,
    parameters = strict and M.strict_parameters() or M.parameters(),
    strict = strict or nil,
    prompt_snippet = guidance.prompt_snippet,
    prompt_guidelines = guidelines,
    execute = strict and M.execute_strict or M.execute,
    render_call = M.render_call,
    render_result = M.render_result,
  }
end

return M
