-- rpiv_todo.tool: the host-neutral spec of the `todo` tool a host registers with its LLM.
--
-- Name, label, description, JSON Schema parameters (same structure as the TypeScript original's, rpiv-todo:
-- properties, types, enums, required; the descriptions are ours, written to steer the
-- model), prompt snippet and guidelines, `execute`, and two short renderers for a host's
-- tool-call log. Everything the model reads here is English and never localized; only
-- the status words in `render_call`/`render_result` (read by a person) go through i18n.

local M = {}
local H = {}

M.name = "todo"
M.label = "Todo"

M.description = table.concat({
  "Keep a task list for multi-step work in this session, and update it as you go.",
  " Actions: create (subject required; optional description, activeForm, owner, metadata,",
  " blockedBy), update (id plus at least one of status, subject, description, activeForm,",
  " owner, metadata, addBlockedBy, removeBlockedBy), list (optional status filter and",
  " includeDeleted), get (id; shows what the task waits for and what it blocks), delete (id;",
  " the task stays as a tombstone) and clear (drops every task and restarts ids at 1).",
  " Statuses: pending ⇄ in_progress, either → completed, any → deleted; completed can only",
  " become deleted, and deleted is final.",
  " The list is saved with every reply, so it survives compaction and reloads; call list",
  " whenever you need to see it again.",
})

---The parameter schema (JSON Schema). Built fresh on each call so a host may change its copy.
---@return table
function M.parameters()
  local ids = function(description)
    return { type = "array", items = { type = "number" }, description = description }
  end
  return {
    type = "object",
    required = { "action" },
    properties = {
      action = {
        type = "string",
        enum = { "create", "update", "list", "get", "delete", "clear" },
        description = "What to do: create a task, update one, list them, get one with its"
          .. " dependencies, delete one (it stays as a tombstone), or clear the whole list.",
      },
      subject = {
        type = "string",
        description = 'Short imperative title, e.g. "Write the parser". Required for create;'
          .. " on update it renames the task.",
      },
      description = {
        type = "string",
        description = "Longer detail: what done means, files involved, acceptance criteria."
          .. " For create and update.",
      },
      activeForm = {
        type = "string",
        description = "Present-continuous label shown while the task is in_progress, e.g."
          .. ' "Writing the parser". For create and update.',
      },
      status = {
        type = "string",
        enum = { "pending", "in_progress", "completed", "deleted" },
        description = "update: the new status (mark in_progress before starting, completed as"
          .. " soon as it is done). list: show only tasks with this status.",
      },
      blockedBy = ids(
        "create only: ids of the tasks this one waits for. Each must exist and"
          .. " not be deleted; a dependency that would close a cycle is rejected."
      ),
      addBlockedBy = ids(
        "update only: ids to add to this task's blockedBy. They are merged," .. " so send only the new ones."
      ),
      removeBlockedBy = ids("update only: ids to remove from this task's blockedBy."),
      owner = {
        type = "string",
        description = "Who works on the task (an agent or a person). For create and update.",
      },
      -- Free-form: any keys, any values. Said with `additionalProperties = true` rather
      -- than an empty sub-schema, because an empty Lua table has no JSON kind of its own
      -- (vim.json writes `[]`, cjson `{}`) and `[]` is not a schema.
      metadata = {
        type = "object",
        additionalProperties = true,
        description = "Free-form key/value data. On update keys are merged into the existing"
          .. " record; a key set to null is removed.",
      },
      id = {
        type = "number",
        description = "The task id the tool returned (3 for #3). Required for update, get and" .. " delete.",
      },
      includeDeleted = {
        type = "boolean",
        description = "list only: also show deleted tasks (tombstones). Default false.",
      },
    },
  }
end

-- The strict form: what OpenAI's strict mode accepts (and what codecompanion's
-- openai_responses adapter forces on every tool). Every object lists all its properties in
-- `required` and sets `additionalProperties = false`, so each optional field is nullable
-- (null: not given) and the free-form metadata travels as JSON text. `from_strict` turns
-- such a call back into the normal form (in the core) before the reducer sees it.

-- Property order in the strict form's `required` (the action first, then what most calls carry).
M.PROPERTY_ORDER = {
  "action",
  "subject",
  "description",
  "activeForm",
  "status",
  "id",
  "blockedBy",
  "addBlockedBy",
  "removeBlockedBy",
  "owner",
  "metadata",
  "includeDeleted",
}

M.STRICT_METADATA_DESCRIPTION = "Free-form key/value data as a JSON object written as text,"
  .. ' e.g. "{"area":"parser"}". On update keys are merged into the existing record;'
  .. " a key set to null inside the text is removed. null: no metadata."

---The parameter schema in the strict-mode form: every property required, optional ones
---nullable (null means "not given"), `additionalProperties = false`, metadata as JSON text.
---Built fresh on each call.
---@return table
function M.strict_parameters()
  local normal = M.parameters()
  local properties = {}
  for name, prop in pairs(normal.properties) do
    local description = prop.description .. " null: not given."
    if name == "action" then
      properties[name] = { type = "string", enum = prop.enum, description = prop.description }
    elseif name == "metadata" then
      properties[name] = { type = { "string", "null" }, description = M.STRICT_METADATA_DESCRIPTION }
    elseif prop.enum then
      -- A nullable enum: `type = {"string","null"}` beside an enum without null would
      -- still refuse null, and a null inside the enum has no encoder-neutral Lua value.
      properties[name] = {
        anyOf = { { type = prop.type, enum = prop.enum }, { type = "null" } },
        description = description,
      }
    elseif prop.type == "array" then
      properties[name] = { type = { "array", "null" }, items = prop.items, description = description }
    else
      properties[name] = { type = { prop.type, "null" }, description = description }
    end
  end
  local required = {}
  for i, name in ipairs(M.PROPERTY_ORDER) do
    required[i] = name
  end
  return { type = "object", properties = properties, required = required, additionalProperties = false }
end

---A strict-form call in the normal form: nullable fields given as null are left out, and
---metadata given as JSON text becomes the object it spells (its nulls, which delete keys on
---update, kept as core.null). Normal-form calls pass through unchanged, so hosts may use it
---on either; arguments that are neither are handed back as they are (the call reports what
---is wrong with them). The conversion is the core's (`core.from_strict`), the one
---`execute_strict` uses. Returns the converted call, or nil and an error naming the field.
---Under LuaJIT a metadata integer past 2^53 is rounded in the table this returns (a Lua
---number cannot hold it); `execute_strict` never converts through Lua numbers and keeps it.
---@param params any the call's arguments (a table, or JSON text)
---@return any params, string|nil error
function M.from_strict(params)
  return require("rpiv_todo.native").from_strict(params)
end

---Run a strict-form call (or a normal one) in the session named by `ctx.session`. The
---call is converted in the core and then takes the path of every other call; metadata
---text that is not a JSON object is rejected in-band, the list unchanged.
---@param params table|string
---@param ctx? rpiv_todo.ToolContext
---@return rpiv_todo.Result
function M.execute_strict(params, ctx)
  return H.session(ctx, "execute_strict"):execute_strict(params)
end

---The session a call's `ctx` names ("default" when absent).
---@param ctx any
---@param what string the caller's name in the error
---@return rpiv_todo.Session
function H.session(ctx, what)
  local id
  if ctx ~= nil then
    if type(ctx) ~= "table" then
      error("(rpiv_todo) " .. what .. ": ctx must be a table { session = id } or nil", 0)
    end
    id = ctx.session
  end
  return require("rpiv_todo.session").get(id)
end

---Run a call in the session named by `ctx.session` ("default" when absent).
---@param params table|string
---@param ctx? rpiv_todo.ToolContext
---@return rpiv_todo.Result
function M.execute(params, ctx)
  return H.session(ctx, "execute"):execute(params)
end

-- Glyphs for a person's log of calls and results. Status glyphs match the overlay's.
M.action_glyphs = { create = "+", update = "✎", list = "≡", get = "›", delete = "✗", clear = "∅" }
M.status_glyphs = require("rpiv_todo.common").glyphs(true)
M.error_glyph = "✗"

---An id as the model wrote it: `3`, or `2.5` for a non-integer (never a Lua error).
H.num = require("rpiv_todo.common").num

---@param text any
---@return string
function H.text(text)
  if type(text) ~= "string" then
    return ""
  end
  return require("rpiv_todo.native").sanitize(text)
end

---`<glyph> <localized status word>`, or nil for a value outside the enum.
---@param status any
---@return string|nil
function H.status(status)
  local glyph = type(status) == "string" and M.status_glyphs[status] or nil
  if glyph == nil then
    return nil
  end
  return glyph .. " " .. require("rpiv_todo.i18n").t("status-" .. status)
end

---The task with `id` in a state, or nil.
---@param state any
---@param id any
---@return rpiv_todo.Task|nil
function H.find(state, id)
  if type(state) ~= "table" or type(state.tasks) ~= "table" or type(id) ~= "number" then
    return nil
  end
  for _, task in ipairs(state.tasks) do
    if task.id == id then
      return task
    end
  end
  return nil
end

---One line describing a call before it runs: action glyph, action, `#id`, subject, target status.
---The model wrote `args`, so any shape is tolerated.
---@param args any the call's arguments (a table)
---@param state? rpiv_todo.State the list before the call, to name the task an id refers to
---@return string
function M.render_call(args, state)
  if type(args) ~= "table" then
    return "? " .. M.name
  end
  local action = type(args.action) == "string" and args.action or "?"
  local parts = { M.action_glyphs[action] or "?", " ", H.text(action) }
  if type(args.id) == "number" then
    parts[#parts + 1] = " #" .. H.num(args.id)
  end
  local subject = args.subject
  if type(subject) ~= "string" then
    local task = H.find(state, args.id)
    subject = task and task.subject
  end
  if type(subject) == "string" and subject ~= "" then
    parts[#parts + 1] = " " .. H.text(subject)
  end
  local status = H.status(args.status)
  if status then
    parts[#parts + 1] = (action == "list" and " " or " → ") .. status
  end
  return table.concat(parts)
end

---One line describing a result: the task's status glyph and word with its id and subject,
---the list's counts, or the error.
---@param result rpiv_todo.Result
---@return string
function M.render_result(result)
  local details = type(result) == "table" and result.details or nil
  if type(details) ~= "table" then
    return M.error_glyph .. " ?"
  end
  if details.error ~= nil then
    return M.error_glyph .. " Error: " .. H.text(details.error)
  end
  local params = type(details.params) == "table" and details.params or {}
  local action = details.action
  local id = params.id
  if action == "create" and type(details.nextId) == "number" then
    id = details.nextId - 1
  end
  local task = H.find(details, id)
  if task then
    return (H.status(task.status) or "?") .. " #" .. H.num(task.id) .. " " .. H.text(task.subject)
  end
  if action == "list" then
    local command = require("rpiv_todo.command")
    local _, counts = command.group(details)
    if counts.total == 0 then
      return H.t_empty()
    end
    return command.header(counts)
  end
  local content = result.content
  local first = type(content) == "table" and content[1] or nil
  return H.text(type(first) == "table" and first.text or "")
end

---@return string
function H.t_empty()
  return require("rpiv_todo.i18n").t("todos-empty")
end

-- Tasks named one by one in a reminder; more are counted.
H.REMINDER_NAMED = 8

---The end-of-turn reminder: a short text for the model when tasks are left in_progress,
---or nil when nothing is. English, like everything the model reads.
---@param source any a session id, a session (anything with :state()), a state, or nil for "default"
---@return string|nil
function M.reminder(source)
  local state
  if type(source) == "table" and type(source.state) == "function" then
    state = source:state()
  elseif type(source) == "table" then
    state = source
  elseif source == nil or type(source) == "string" or type(source) == "number" then
    state = require("rpiv_todo.session").get(source):state()
  else
    error("(rpiv_todo) reminder: expected a session id, a session, a state or nil, got " .. type(source), 0)
  end
  local named, count = {}, 0
  for _, task in ipairs(type(state.tasks) == "table" and state.tasks or {}) do
    if type(task) == "table" and task.status == "in_progress" then
      count = count + 1
      if count <= H.REMINDER_NAMED then
        named[#named + 1] = "#" .. H.num(task.id) .. " " .. H.text(task.subject)
      end
    end
  end
  if count == 0 then
    return nil
  end
  local list = table.concat(named, "; ")
  if count > H.REMINDER_NAMED then
    list = list .. "; and " .. (count - H.REMINDER_NAMED) .. " more"
  end
  local what = count == 1 and "1 task is" or count .. " tasks are"
  return "Reminder from the todo tool: "
    .. what
    .. " still in_progress: "
    .. list
    .. ". Mark a task completed as soon as it is fully done, set it back to pending if you"
    .. " stopped working on it, and keep exactly one task in_progress while you work."
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
