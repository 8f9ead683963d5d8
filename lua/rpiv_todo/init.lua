-- rpiv_todo: the `todo` tool of an LLM agent, for hosts that script through Lua.
--
--   local todo = require("rpiv_todo")
--   todo.setup({ guidance = function(d) d.prompt_guidelines[1] = "..." return d end })
--   host.register_tool(todo.tool())                 -- name, schema, prompt text, execute
--   local text, level = todo.command.todos(todo.session("default"), { interactive = true })
--
-- This file is the public API: setup() (the tool's options, in rpiv_todo.config, and in
-- Neovim the editor's, in rpiv_todo.nvim.options) and the functions hosts call, each a
-- `function M.<name>` below that loads what it needs when it is called. Eight names are
-- fields, not functions: the module handles `core`, `guidance`, `command`, `sessions`,
-- `overlay`, the tables `config` and `defaults`, and `version`, loaded on first read (H.LAZY and the
-- metatable at the end) so that requiring this file loads nothing else; `setup()` only
-- checks and records its options. The native core (through `rpiv_todo.native`, which checks its version) loads at
-- require time outside Neovim; in Neovim once startup is over (see the end of the file), so
-- a config calling setup() at startup pays for this one file.

---@helptext rpiv_todo-lua
---The tool's own module, `local todo = require("rpiv_todo")`, is the same in every
---host (Neovim, another Lua host, a Rust host through mlua); docs/lua.md in the
---repository has the rest (sessions, the overlay, the native core).

---@helptext rpiv_todo-intro verbatim
--- rpiv_todo gives an LLM agent a task list it keeps across a long session: the
--- model creates tasks, marks one in progress, completes them, and every reply
--- records the whole list in the conversation; a compaction keeps it, and a
--- reload rebuilds it from the conversation or a saved file. The rules live
--- in a native module written in Rust (`rpiv_todo.core`); the Lua scripts in
--- `lua/rpiv_todo/` give the tool's spec to the agent front end you use and show
--- the list to you in a floating window.
---
--- Neovim 0.7.2 or later is supported (LuaJIT).

---@class rpiv_todo.Module
---@field version string the Lua scripts' version (the native core must match it)
---@field core table the native module `rpiv_todo.core`
---@field guidance table `rpiv_todo.guidance`: `defaults` (snippet and eight guidelines), `resolve`
---@field command table `rpiv_todo.command`: `todos(state_or_session, { interactive })`
---@field sessions table `rpiv_todo.session`: the per-session lists and their lifecycle
---@field overlay rpiv_todo.OverlayModule `rpiv_todo.overlay`, loaded on first use
---@field defaults rpiv_todo.Config every setup() default (never changed by setup)
---@field config rpiv_todo.Config the live configuration
local M = {}
local H = {}

-- Modules behind the fields of M, loaded when a field is first read (also `config`,
-- `defaults` and `version`, see the metatable at the end).
-- `core`: the one guarded load of the native module (rpiv_todo.native), which says how to
-- build the library when it is missing and refuses a stale build.
H.LAZY = {
  core = "rpiv_todo.native",
  guidance = "rpiv_todo.guidance",
  command = "rpiv_todo.command",
  sessions = "rpiv_todo.session",
  overlay = "rpiv_todo.overlay",
}

---@return table rpiv_todo.guidance
function H.guidance()
  return require("rpiv_todo.guidance")
end

---@return table rpiv_todo.session
function H.session()
  return require("rpiv_todo.session")
end

---@return table rpiv_todo.tool
function H.tool()
  return require("rpiv_todo.tool")
end

---@return table rpiv_todo.common
function H.common()
  return require("rpiv_todo.common")
end

---@return table rpiv_todo.config
function H.config()
  return require("rpiv_todo.config")
end

---@param v any
---@return string|nil
function H.boolean(v)
  if type(v) ~= "boolean" then
    return "expected a boolean"
  end
end

---Does `opts` (a table) hold a key that is none of `names` (the tool's own)?
---@param opts any
---@param names string[]
---@return boolean
function H.has_other_keys(opts, names)
  if type(opts) ~= "table" then
    return false
  end
  local own = {}
  for _, name in ipairs(names) do
    own[name] = true
  end
  for k in pairs(opts) do
    if not own[k] then
      return true
    end
  end
  return false
end

---The editor's options module inside Neovim (what plugin/rpiv_todo.lua registered with
---rpiv_todo.host), else nil.
---@return table|nil
function H.editor_options()
  local part = require("rpiv_todo.host").editor_part()
  return part ~= nil and part.options() or nil
end

---Configures the tool and, in Neovim, the editor: every key is optional; a wrong type,
---an invalid value or an unknown key raises `(rpiv_todo) <key>: <what was expected>, got
---<what came>`, e.g. `(rpiv_todo) max_widget_lines: expected an integer >= 3 and <=
---1000000, got string "x"`, and changes nothing. An absent key takes its default (an
---absent `locale` keeps the one in use). The panel repaints with the new settings at
---once. The editor's options (from `position` on) are known in Neovim only. A call that
---gives one of them sets them all (an absent one takes its default) and puts the panel in
---place at once (with `persist`, the saved lists too); a call without any leaves them as
---they are, and the panel comes with the first tool call or command.
---@param opts? rpiv_todo.SetupOptions
---@return table the module
function M.setup(opts)
  local editor = nil
  if opts == nil then
    opts = {}
  end
  -- An empty table needs no check, so setup({}) at startup loads no other module.
  if type(opts) ~= "table" or next(opts) ~= nil then
    local config = H.config()
    local spec = { names = config.NAMES, checks = config.checks, got = true }
    -- The editor's options are loaded only for a key that is not the tool's.
    editor = H.has_other_keys(opts, config.NAMES) and H.editor_options() or nil
    if editor ~= nil then
      spec = editor.merged_spec(spec)
    end
    opts = require("rpiv_todo.options_check").check(opts, spec)
  elseif package.loaded["rpiv_todo.config"] == nil then
    -- setup({}) before anything was configured or read: the defaults are in force already.
    return M
  end
  local tool_opts, editor_opts = opts, nil
  if editor ~= nil then
    tool_opts, editor_opts = editor.split(opts)
  end
  local first_err = H.config().apply(tool_opts)
  -- The editor's part, when one of its options was given (absent ones go back to their
  -- defaults): the panel comes at once.
  if editor_opts ~= nil then
    require("rpiv_todo.host").editor_part().configure(editor_opts)
  end
  if first_err ~= nil then
    error(first_err, 0)
  end
  return M
end

---Call `fn(config)` after every successful setup() (a UI repaints with the new locale,
---key or layout at once). Returns a function that removes it. When one raises, the others
---still run and setup() then raises that first error.
---@param fn fun(config: rpiv_todo.Config)
---@return fun() remove
function M.on_setup(fn)
  return H.config().on_setup(fn)
end

---The tool spec to register with the host's LLM: name, label, description, parameters,
---prompt_snippet, prompt_guidelines, execute, render_call, render_result.
---`{ strict = true }`: the form OpenAI's strict mode accepts (every property required,
---optional ones nullable, metadata as JSON text); its `execute` converts calls back.
---@param opts? { strict?: boolean }
---@return rpiv_todo.ToolSpec
function M.tool(opts)
  local tool = H.tool()
  if opts == nil then
    return tool.spec(M.config.guidance)
  end
  opts = require("rpiv_todo.options_check").check(opts, {
    prefix = "tool: ",
    names = { "strict" },
    checks = { strict = H.boolean },
    not_table = "tool: expected a table of options { strict = boolean } or nil",
  })
  return tool.spec(M.config.guidance, opts.strict == true)
end

---End-of-turn reminder for the model when the turn ends with tasks left in_progress:
---a short English text naming them, or nil when nothing is in progress. A host injects it
---into the conversation (codecompanion: the adapter does; avante: see docs/agents.md).
---@param source? string|rpiv_todo.Session|rpiv_todo.State a session id, a session, a state, or nil for "default"
---@return string|nil
function M.reminder(source)
  return H.guidance().reminder(source)
end

---The list of session {id} ("default" when omitted), created empty on first use:
---`s:execute(params)`, `s:replay(entries)`, `s:state()`, `s:save(path)`, `s:load(path)`.
---@param id? string
---@return rpiv_todo.Session
function M.session(id)
  return H.session().get(id)
end

---The session the UI shows, returned by every form. `foreground(id)` names session {id}
---(in Neovim: pins the panel and |:Todos| to it); `foreground(nil)` follows again (in
---Neovim: the chat in the current window, else the session of the latest tool call);
---`foreground()` only reads it.
---@signature foreground({id})
---@signature foreground()
---@param ... string|nil
---@return rpiv_todo.Session
function M.foreground(...)
  local part = require("rpiv_todo.host").editor_part()
  if part ~= nil and part.foreground ~= nil then
    return part.foreground(...)
  end
  return H.session().foreground((...))
end

---A new agent turn began in session {id} (nil: in every session). Listeners hear
---`("turn_started", id)`: a UI hides the completed tasks it already showed.
---@param id? string
function M.turn_started(id)
  H.session().turn_started(id)
end

---Let a chat front end name the session of its chat buffers: `lookup(bufnr)` returns the
---session id of the chat in that buffer, or nil for a buffer that is not one of its chats
---(a nil {lookup} removes the front end's). A UI that follows chat windows (the Neovim
---panel) shows that chat's list. Listeners hear `("chat", name)`.
---@param name string the front end ("codecompanion", "avante", ...)
---@param lookup fun(bufnr: integer): string|nil
function M.register_chat(name, lookup)
  H.session().register_chat(name, lookup)
end

---A host's session {id} started, with its branch entries: the list is rebuilt by replay.
---@param id string
---@param entries table|string
---@return rpiv_todo.State
function M.on_session_start(id, entries)
  return H.session().on_session_start(id, entries)
end

---The host compacted session {id}'s conversation: the held list stays unless the branch's
---is newer; returns the message that puts the list back in the model's view, or nil (see
---`rpiv_todo.session.on_compaction`).
---@param id string
---@param entries? table|string
---@return rpiv_todo.CompactionMessage|nil
function M.on_compaction(id, entries)
  return H.session().on_compaction(id, entries)
end

---The host moved session {id} to another branch: the list is rebuilt by replay.
---@param id string
---@param entries table|string
---@return rpiv_todo.State
function M.on_branch_change(id, entries)
  return H.session().on_branch_change(id, entries)
end

---Forget session {id}'s list (the host's session ended).
---@param id string
function M.shutdown(id)
  return H.session().shutdown(id)
end

---Listen to session events, `fn(event, id, session, params)` (see
---`rpiv_todo.session.listen` for the events). Returns a function that removes it.
---@param fn fun(event: rpiv_todo.SessionEvent, id: string, session: rpiv_todo.Session?)
---@return fun() remove
function M.listen(fn)
  return H.session().listen(fn)
end

---Be told when a listener raises (see `rpiv_todo.session.on_listener_error`). Returns a
---function that removes the reporter.
---@param fn fun(message: string, info: rpiv_todo.ListenerError)
---@return fun() remove
function M.on_listener_error(fn)
  return H.session().on_listener_error(fn)
end

-- Session events after which a list is another one (an overlay forgets what it showed).
H.REBUILT = { replayed = true, loaded = true, reloaded = true, shutdown = true }

---Keep a live overlay (`todo.overlay.new()`) in step with the sessions: it forgets which
---completed tasks it showed when the foreground list is replayed, shut down, or another
---session comes to the foreground, and hides the completed ones at a new turn
---(`turn_started`). Returns a function that detaches it.
---@param ov rpiv_todo.Overlay
---@return fun() detach
function M.attach_overlay(ov)
  if type(ov) ~= "table" or type(ov.reset) ~= "function" then
    error("(rpiv_todo) attach_overlay: expected an overlay from todo.overlay.new()", 0)
  end
  local session = H.session()
  return session.listen(function(event, id)
    if event == "turn_started" then
      if (id == nil or id == session.foreground_id()) and type(ov.turn_started) == "function" then
        ov:turn_started()
      end
    elseif event == "foreground" or (H.REBUILT[event] and id == session.foreground_id()) then
      ov:reset()
    end
  end)
end

---The active UI locale code, e.g. "pt-BR".
---@return string
function M.locale()
  return require("rpiv_todo.i18n").locale()
end

---True, or nil and the error: switch the UI language to {code} now. With
---`{ persist = true }` the choice is also written, as `"locale": code`, to rpiv-i18n's
---`locale.json` (`$XDG_CONFIG_HOME/rpiv-i18n/`, `~/.config/rpiv-i18n/` when unset),
---atomically and keeping the file's other keys, so the next start reads it.
---An unknown code is refused: nothing switches and nothing is written. When the switch
---worked but the file could not be written, the locale stays switched for this process
---and `nil, err` says why it was not saved.
---@param code string one of `todo.core.locales()`, e.g. "de" or "pt-BR"
---@param opts? { persist?: boolean }
---@return true|nil ok
---@return string|nil err
function M.set_locale(code, opts)
  return require("rpiv_todo.i18n").switch(code, opts)
end

-- The eight fields: each is loaded on first read and kept. (`todo.overlay` was lazy before
-- the rest: the overlay reads `require("rpiv_todo").config`, and a lazy field keeps the
-- two modules from requiring each other while loading.)
setmetatable(M, {
  __index = function(t, k)
    local value
    if H.LAZY[k] then
      value = require(H.LAZY[k])
    elseif k == "version" then
      -- The Lua scripts' version, which the native core matches.
      value = require("rpiv_todo.installed").VERSION
    elseif k == "defaults" then
      value = H.config().defaults()
    elseif k == "config" then
      value = H.config().get()
    else
      return nil
    end
    rawset(t, k, value)
    return value
  end,
})

-- When the native core is checked. Outside Neovim now: a missing or stale build is an error
-- at require time, as a host expects. In Neovim once startup is over (the main loop's first
-- turn), so a config calling setup() pays nothing for it, and a missing or stale build is
-- still one notification at startup (rpiv_todo.native words it) rather than news at the
-- first tool call (rpiv_todo.native shows its error there through rpiv_todo.host).
if not require("rpiv_todo.host").schedule(function()
  pcall(require, "rpiv_todo.native")
end) then
  require("rpiv_todo.native")
end

return M
