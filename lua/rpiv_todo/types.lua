-- rpiv_todo.types: LuaCATS type definitions of the public Lua API, for lua-language-server.
-- Nothing runs here; requiring it returns an empty table.

local M = {}

---@alias rpiv_todo.Status "pending"|"in_progress"|"completed"|"deleted"
---@alias rpiv_todo.Action "create"|"update"|"list"|"get"|"delete"|"clear"
---@alias rpiv_todo.SessionEvent "executed"|"replayed"|"loaded"|"reloaded"|"shutdown"|"foreground"|"turn_started"|"chat"

---@class rpiv_todo.Task
---@field id integer
---@field subject string
---@field description? string
---@field activeForm? string present-continuous label shown while in_progress
---@field status rpiv_todo.Status
---@field blockedBy? integer[] ids this task waits on
---@field owner? string
---@field metadata? table<string, any>

---@class rpiv_todo.State
---@field tasks rpiv_todo.Task[]
---@field nextId integer

---@class rpiv_todo.Params
---@field action rpiv_todo.Action
---@field subject? string
---@field description? string
---@field activeForm? string
---@field status? rpiv_todo.Status
---@field blockedBy? number[]
---@field addBlockedBy? number[]
---@field removeBlockedBy? number[]
---@field owner? string
---@field metadata? table<string, any>
---@field id? number
---@field includeDeleted? boolean

---@class rpiv_todo.Details: rpiv_todo.State
---@field action string
---@field params table the call's arguments, verbatim
---@field error? string present only on a rejected call

---@class rpiv_todo.Content
---@field type "text"
---@field text string

---@class rpiv_todo.Result
---@field content rpiv_todo.Content[]
---@field details rpiv_todo.Details

---@class rpiv_todo.ListenerError what `todo.on_listener_error` reporters get beside the message
---@field event rpiv_todo.SessionEvent the event the listener failed on
---@field session string the session id
---@field error any what the listener raised, as raised
---@field listener function the listener that raised

---@class rpiv_todo.ToolContext
---@field session? string the session the call runs in (default "default")
---@field by? string the writer: the front end's name ("codecompanion"), or "user" for the user's own edits; other writers' replies name it

---@class rpiv_todo.ToolSpec
---@field name "todo"
---@field label "Todo"
---@field description string
---@field parameters table JSON Schema of the arguments (the strict-mode form with `tool({ strict = true })`)
---@field strict? true set on the strict-mode form
---@field prompt_snippet string
---@field prompt_guidelines string[]
---@field execute fun(params: rpiv_todo.Params|string, ctx?: rpiv_todo.ToolContext): rpiv_todo.Result
---@field render_call fun(args: table, state?: rpiv_todo.State): string
---@field render_result fun(result: rpiv_todo.Result): string

---@class rpiv_todo.Guidance
---@field prompt_snippet string
---@field prompt_guidelines string[]

---@class rpiv_todo.GuidanceTable
---@field prompt_snippet? string
---@field prompt_guidelines? string[] replaces the default list whole

---@alias rpiv_todo.GuidanceOption rpiv_todo.GuidanceTable|fun(defaults: rpiv_todo.Guidance): rpiv_todo.GuidanceTable

---@class rpiv_todo.OverlayOverrides
---@field heading? function
---@field row? function
---@field summary? function
---@field collapsed_hint? function
---@field spacer? function
---@field glyphs? table<string, string>
---@field theme? table|string

---@class rpiv_todo.SetupOptions: rpiv_todo.NvimOptions
---Prompt text the model reads: a table `{ prompt_snippet = string,
---prompt_guidelines = {...} }` (the list replaces the defaults whole) or a
---function(defaults) returning one.
---@field guidance? rpiv_todo.GuidanceOption
---Lines the panel may use, heading included; an integer from 3 to 1000000.
---Default 12: the Neovim panel is then 12 rows tall at most (the terminal layout's
---blank line below the panel is not drawn in the editor).
---@field max_widget_lines? integer at least 3 (default 12)
---The key that collapses and expands the overlay: modifiers ctrl, shift, alt, super
---joined by `+`, then one character or a named key (escape, enter, tab, space, home,
---end, pageup, up, f1 ... f12, ...). "off" disables it. Default "ctrl+shift+t".
---@field collapse_key? string e.g. "ctrl+shift+t", or "off"
---Language of the panel and |:Todos| (de, en, es, fr, pt, pt-BR, ru, uk, zh);
---switches at run time and the panel repaints at once. Default: see
---|rpiv_todo-locale|. What the model reads stays English.
---@field locale? string one of de, en, es, fr, pt, pt-BR, ru, uk, zh
---Layout overrides for the panel (heading, row, summary, collapsed_hint, spacer,
---glyphs); see docs/neovim.md.
---@field overlay? rpiv_todo.OverlayOverrides|fun(default_layout: rpiv_todo.OverlayLayout): rpiv_todo.OverlayLayoutOverride the function form returns layout overrides only (no theme)

---@class rpiv_todo.Config
---@field guidance rpiv_todo.Guidance
---@field max_widget_lines integer
---@field collapse_key string
---@field overlay rpiv_todo.OverlayOverrides

return M
