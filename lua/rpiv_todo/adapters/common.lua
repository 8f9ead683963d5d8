-- rpiv_todo.adapters.common: what the chat adapters share.
--
--   local common = require("rpiv_todo.adapters.common")
--   local id = common.unique_id("codecompanion")     -- "codecompanion:1764739140-4242-1"
--   common.restore(id, calls, base)                    -- a restored chat gets its list back
--   local text, failed = common.outcome(result)       -- a result as the chat reads it
--   local rec, fresh = common.compaction(seen, key, id) -- the list after a compaction, once
--
-- An adapter for a new agent front end is one file here (plus its spec and a line of
-- docs): it declares `M.chat_filetypes`, the filetypes of its chat windows, and the Neovim
-- panel keeps off them by default. What an adapter tells a UI goes through the session
-- layer as events; no adapter requires the Neovim front end.
--
-- Session ids: a chat's list must be its own. Front ends name chats with `math.random`,
-- which Neovim never seeds, so the first chat of every editor gets the same number; the ids
-- made here join the time, the process id and a counter instead, which no other chat of
-- this or another editor shares. An adapter keeps the id it made in the chat's own saved
-- history, so the chat reopened after a restart finds it again (and its saved file, with
-- persist). Restoring: the reducer is deterministic, so running a chat's completed `todo`
-- calls again, in order, on the list its history kept last (empty when none) gives back
-- the list the chat had. Plain Lua: the process id comes from rpiv_todo.host.

---@helptext rpiv_todo-adapters verbatim
--- Each chat gets its own list: `codecompanion:<time>-<pid>-<n>` in
--- codecompanion (an id made for the chat: codecompanion's own chat id comes
--- from an unseeded math.random, the same for the first chat of every Neovim),
--- `avante:<chat history file>#<time/uuid of its first message>` in avante
--- (avante reuses history file names). A chat opened again from its history
--- gets its list back from the `todo` calls the history holds. The adapters take
--- `{ session = id }` or `{ session = function(...) return id end }` to choose
--- another; a wrong option or an unknown key raises
--- `(rpiv_todo) <adapter>: <key>: ...`.

local M = {}
local H = {}

H.count = 0

---An id for this process: its pid (rpiv_todo.host), else the address of a fresh table.
---@return string
function H.process()
  local pid = require("rpiv_todo.host").pid()
  if pid ~= nil then
    return tostring(pid)
  end
  return (tostring({}):gsub("^table: ", ""))
end

---A session id no other chat has: `<prefix>:<unix time>-<process>-<n>`.
---@param prefix string the front end's name
---@return string
function M.unique_id(prefix)
  H.process_id = H.process_id or H.process()
  H.count = H.count + 1
  return string.format("%s:%d-%s-%d", prefix, os.time(), H.process_id, H.count)
end

---A todo tool result entry as replay reads one, holding `state`.
---@param state { tasks: any, nextId: any }
---@return table entry
function M.snapshot_entry(state)
  return {
    type = "message",
    message = { role = "toolResult", toolName = "todo", details = { tasks = state.tasks, nextId = state.nextId } },
  }
end

---Rebuild a chat's list from a snapshot its history kept (the list as a compaction left
---it) and the completed calls after it, unless the session already holds a list (one
---restored from disk, or calls already made in this editor). The snapshot is read as
---replay reads a todo result: one that breaks the list's rules counts as an empty list.
---@param id string the chat's session id
---@param calls table[] the arguments of the chat's completed `todo` calls after the
---  snapshot (all of them when there is none), oldest first (tables or JSON text, normal
---  or strict form)
---@param base? { tasks: any, nextId: any } the snapshot
---@return boolean replayed
function M.restore(id, calls, base)
  local sessions = require("rpiv_todo.session")
  if #calls == 0 and base == nil then
    return false
  end
  if sessions.exists(id) and #sessions.get(id):state().tasks > 0 then
    return false
  end
  local core = require("rpiv_todo.native")
  local from_strict = require("rpiv_todo.tool").from_strict
  local list = core.list(nil)
  if base ~= nil then
    list:replace(core.replay({ M.snapshot_entry(base) }))
  end
  for _, args in ipairs(calls) do
    local params = from_strict(args)
    if params ~= nil then
      list:apply(params)
    end
  end
  sessions.get(id):replay({ M.snapshot_entry(list:state()) })
  return true
end

---Is session `id`'s list still the one in `snapshot` (the list a compaction put in the
---model's view)? Then the end-of-turn reminder would only repeat it.
---@param id string
---@param snapshot any { tasks, nextId }, or the list's JSON text (`list:state_json()`)
---@return boolean
function M.unchanged(id, snapshot)
  local sessions = require("rpiv_todo.session")
  if snapshot == nil or not sessions.exists(id) then
    return false
  end
  local now = sessions.get(id).list:state_json()
  if type(snapshot) == "string" then
    return snapshot == now
  end
  local core = require("rpiv_todo.native")
  return core.list(core.replay({ M.snapshot_entry(snapshot) })):state_json() == now
end

---A call's result as a chat shows it: the text the model reads, and whether the call was
---rejected (the list unchanged). Any shape is tolerated: a missing text is "".
---@param result rpiv_todo.Result
---@return string text
---@return boolean failed
function M.outcome(result)
  if type(result) ~= "table" then
    return "", true
  end
  local first = type(result.content) == "table" and result.content[1] or nil
  local text = type(first) == "table" and type(first.text) == "string" and first.text or ""
  return text, type(result.details) == "table" and result.details.error ~= nil
end

---Once per compaction: the list to put back in the model's view after compaction `key`
---(whatever names one: the hash of a summary, a count of compactions) of session `id`.
---`seen` is the record this returned last time for the chat (nil at first). When `key` or
---`id` differ from it, `todo.on_compaction(id)` renders the list now and `fresh` is true;
---otherwise `seen` comes back as it is. The record is plain data, so a chat history can
---keep it: `{ key, session, text?, tasks?, nextId? }`, `text` nil when the list has no
---task (nothing to put back).
---@param seen table|nil
---@param key any
---@param id string
---@return { key: any, session: string, text?: string, tasks?: table, nextId?: integer } record
---@return boolean fresh
function M.compaction(seen, key, id)
  if type(seen) == "table" and seen.key == key and seen.session == id then
    return seen, false
  end
  local record = { key = key, session = id }
  local message = require("rpiv_todo").on_compaction(id)
  if message ~= nil then
    record.text = message.content[1].text
    record.tasks, record.nextId = message.details.tasks, message.details.nextId
  end
  return record, true
end

---Deprecated (removed in 0.3.0): `require("rpiv_todo").register_chat(name, lookup)`.
---@param name string
---@param lookup fun(bufnr: integer): string|nil
function M.register_chat(name, lookup)
  require("rpiv_todo.host").deprecated(
    'require("rpiv_todo.adapters.common").register_chat',
    'require("rpiv_todo").register_chat'
  )
  require("rpiv_todo").register_chat(name, lookup)
end

---Deprecated (removed in 0.3.0): `require("rpiv_todo").turn_started(id)`.
---@param id? string
function M.turn_started(id)
  require("rpiv_todo.host").deprecated(
    'require("rpiv_todo.adapters.common").turn_started',
    'require("rpiv_todo").turn_started'
  )
  require("rpiv_todo").turn_started(id)
end

return M
