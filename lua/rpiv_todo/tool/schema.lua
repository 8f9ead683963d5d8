-- rpiv_todo.tool.schema: the JSON Schemas of the `todo` tool's parameters, in the normal
-- form (same structure as the TypeScript original's, rpiv-todo: properties, types, enums,
-- required; the descriptions are ours, written to steer the model) and in the strict form
-- OpenAI's strict mode accepts. Everything here is read by the model: English, never
-- localized.

local M = {}

-- The tool's name, as the model calls it, and its label for a host's UI.
M.NAME = "todo"
M.LABEL = "Todo"

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

---@helptext rpiv_todo-strict verbatim
--- Strict mode                                                *rpiv_todo-strict*
---
--- `require("rpiv_todo").tool({ strict = true })` is the form OpenAI's strict
--- mode accepts: every property required, optional ones nullable (null: not
--- given), `additionalProperties = false`, metadata as JSON text. Its `execute`
--- converts calls back in the native core (serde_json, as for every JSON
--- argument) and then runs them like any other call, so both forms accept and
--- refuse the same input and give the same results: metadata integers past
--- 2^53 stay exact, a lone surrogate escape (`\ud800`) is refused. Metadata
--- text that is not a JSON object is answered in-band, the list unchanged.

return M
