-- rpiv_todo.nvim: the Neovim front end's setup, attaching and host API (all `vim.*` glue
-- lives in rpiv_todo/nvim/ and in health.lua).
--
--   require("rpiv_todo").setup({})            -- the tool's own options
--   require("rpiv_todo.nvim").setup({})       -- optional: editor options (below)
--   local nv = require("rpiv_todo.nvim")
--   nv.execute({ action = "create", subject = "Write the parser" }, { session = "chat-1" })
--   nv.turn_started("chat-1")                 -- a new turn in chat-1: its completed tasks fall away
--   nv.replay("chat-1", messages)             -- rebuild a session from the host's history
--   nv.register_chat("my-agent", lookup)      -- lookup(bufnr) -> the session of a chat buffer
--   nv.foreground("chat-1")                   -- pin the session the panel shows
--   nv.foreground(nil)                        -- follow the chat window / latest call (default)
--
-- Once attached (`M.attach()`, called by every function here, and by plugin/rpiv_todo.lua
-- on the first tool call of any session):
--   * the panel (rpiv_todo.nvim.panel), a floating window over the current window that
--     shows the foreground session's list: by default the chat in the current window
--     (M.register_chat), else the session of the most recent tool call; it moves with
--     the windows, out of the cursor's way, hides where it does not belong, and repaints after each tool call, each setup() and locale change;
--   * the RpivTodo* highlight groups (rpiv_todo.nvim.highlights);
--   * :Todos (the list window, and the user's own edits) and :TodosToggle
--     (rpiv_todo.nvim.commands); the collapse_key is mapped to the toggle.
-- Painting never raises into a tool call: a failure is reported once through vim.notify.
--
-- The rest of the front end, one file per concern: options.lua (every option, its check
-- and doc line), keys.lua (the collapse key's notation and mapping), locale.lua (v:lang
-- to the locale chain), panel.lua and listwin.lua (the windows), highlights.lua,
-- commands.lua (every user command), persist.lua (lists on disk), language.lua (the
-- language picker). Extensions add options with `M.register_option(name, default, check,
-- apply)`, :Todos subcommands with `require("rpiv_todo.nvim.commands").register` and
-- whole commands with `.register_command`.

local M = {}
local H = {}

local options = require("rpiv_todo.nvim.options")
local keys = require("rpiv_todo.nvim.keys")
local locale = require("rpiv_todo.nvim.locale")

-- The editor options (rpiv_todo.nvim.options declares each with its check and doc line).
M.defaults = options.defaults
M.config = options.config

---`got <type> <value>`, what an error message adds after what it expected.
M.got = require("rpiv_todo.common").got

---Add an option of the editor front end (a user's or another plugin's extension, before
---setup); see rpiv_todo.nvim.options.register.
M.register_option = options.register

---The Neovim key notation of a collapse key ("ctrl+shift+t" -> "<C-S-t>"), or nil.
M.key_notation = keys.key_notation

H.attached = false
H.ov = nil -- the live overlay (rpiv_todo.overlay.new)
H.reported = false -- a paint failure was already reported
H.pinned = nil -- the session the host pinned; nil: follow the latest tool call
H.last_call = nil -- the session of the latest tool call
H.switching = false -- this module is moving the foreground (not a host pin)
H.user_hidden = false -- :Todos hide
H.last_edit = nil -- data of the latest RpivTodoUserEdit

---@return table
function H.todo()
  return require("rpiv_todo")
end

---@return table
function H.session()
  return require("rpiv_todo.session")
end

---@param key string
---@param expected string
function H.fail(key, expected)
  error("(rpiv_todo) nvim." .. key .. ": " .. expected, 0)
end

---Optional editor options, strict in the same way
---(`(rpiv_todo) nvim.<key>: <what was expected>, got <what came>`). Absent keys take
---their defaults. See |rpiv_todo-panel| for what they do.
---@param opts? rpiv_todo.NvimOptions
---@return table the module
function M.setup(opts)
  options.set(opts)
  M.attach()
  options.apply()
  H.sync_mapping()
  H.request_paint()
  return M
end

-- ---------------------------------------------------------------------------
-- Attaching: listeners, autocmds, highlights, commands
-- ---------------------------------------------------------------------------

---The layout the editor renders with: no spacer line (the float has no border to keep
---off), and the collapsed hint in the editor's own terms (`<C-S-t> to expand`, or
---`:TodosToggle to expand` when no key is mapped), through the user's collapsed_hint.
H.layout = {
  spacer = function()
    return nil
  end,
  collapsed_hint = function(ctx)
    local overlay = H.todo().overlay
    if H.user_layout_for ~= overlay.config.layout or H.user_layout == nil then
      H.user_layout = overlay.resolve_layout(overlay.config.layout)
      H.user_layout_for = overlay.config.layout
    end
    local view = setmetatable({ collapse_key = M.hint_key() }, { __index = ctx })
    return H.user_layout.collapsed_hint(view)
  end,
}

---What the collapsed hint names: the mapped key in Neovim notation, or the command.
---@return string
function M.hint_key()
  return M.mapped_key() or ":TodosToggle"
end

---Define the highlight groups (a colorscheme's or the user's own definitions win).
function M.define_highlights()
  require("rpiv_todo.nvim.highlights").define()
end

---Create the user commands (rpiv_todo.nvim.commands; plugin/rpiv_todo.lua does the same at startup).
function M.create_commands()
  require("rpiv_todo.nvim.commands").create()
end

---Wire the front end into the editor: panel, autocommands, highlight groups, key
---mapping. Idempotent; every other function here calls it, and so does the first
---tool call of any session. Returns the module.
---@return table the module
function M.attach()
  if H.attached then
    return M
  end
  H.attached = true
  local todo = H.todo()
  H.ov = todo.overlay.new({ theme = "segments", layout = H.layout })
  -- What the panel showed is remembered per session (H.lives), so going back to a chat
  -- does not bring back the completed tasks of its earlier turns; a session's memory is
  -- forgotten when its list is rebuilt (replay, load, shutdown). Then this front end
  -- repaints (listeners run in the order they were added).
  H.detach_overlay = todo.listen(function(event, id)
    if event ~= "executed" and event ~= "foreground" and H.lives[id] ~= nil then
      H.lives[id]:reset()
    end
  end)
  H.detach_listener = todo.listen(M.session_event)
  if type(todo.on_setup) == "function" then
    H.detach_setup = todo.on_setup(H.on_setup)
  end
  locale.sync()
  M.define_highlights()
  M.create_commands()
  local group = vim.api.nvim_create_augroup(H.augroup, { clear = true })
  local function au(events, callback)
    vim.api.nvim_create_autocmd(events, { group = group, callback = callback })
  end
  -- Re-anchor when windows come, go, change size or show another buffer. WinResized is
  -- 0.9+; before it, WinScrolled fires on a size change too (and VimResized for the
  -- whole editor).
  local events = { "VimResized", "TabEnter", "WinEnter", "BufWinEnter", "FileType" }
  if vim.fn.exists("##WinResized") == 1 then
    events[#events + 1] = "WinResized"
  end
  au(events, H.request_paint)
  -- The panel shows the list of the chat in the current window (M.register_chat).
  au({ "WinEnter", "BufEnter" }, H.follow_window)
  -- Out of the cursor's way: only when the cursor reaches the panel, its preferred place
  -- is free again, or its window changed size (a cheap check on every cursor move).
  au({ "CursorMoved", "CursorMovedI", "WinScrolled" }, H.repaint_if_moved)
  au("ColorScheme", function()
    M.define_highlights()
    H.request_paint()
  end)
  vim.api.nvim_create_autocmd("OptionSet", {
    group = group,
    pattern = { "background", "termguicolors" },
    callback = function()
      M.define_highlights()
      H.request_paint()
    end,
  })
  au("WinClosed", function(args)
    local closed = tonumber(args.match)
    if closed ~= nil then
      -- Our own float (`:only`, `:fclose`) or any other window: the layout is settled
      -- only after this event, so the repaint waits for the main loop.
      require("rpiv_todo.nvim.panel").on_win_closed(closed)
      vim.schedule(H.request_paint)
    end
  end)
  -- `:language messages xx` has no event of its own: look again once a command line
  -- has run, and when the editor gets the focus back.
  au({ "CmdlineLeave", "FocusGained" }, function()
    vim.schedule(H.check_locale)
  end)
  au("VimLeavePre", function()
    H.exiting = true
  end)
  H.sync_mapping()
  return M
end

H.augroup = "RpivTodo"

---CursorMoved, CursorMovedI, WinScrolled: repaint when the panel must move.
function H.repaint_if_moved()
  local ok, move = pcall(require("rpiv_todo.nvim.panel").needs_move)
  if ok and move then
    H.request_paint()
  end
end

---Is the front end attached?
---@return boolean
function M.attached()
  return H.attached
end

---Take the front end out of the editor again: close the windows, drop the
---listeners, autocommands and the key mapping.
function M.detach()
  if not H.attached then
    return
  end
  H.attached = false
  require("rpiv_todo.nvim.panel").hide()
  require("rpiv_todo.nvim.listwin").close()
  for _, name in ipairs({ "detach_overlay", "detach_listener", "detach_setup" }) do
    if H[name] then
      H[name]()
      H[name] = nil
    end
  end
  pcall(vim.api.nvim_del_augroup_by_name, H.augroup)
  keys.unmap()
  H.pinned, H.last_call, H.user_hidden = nil, nil, false
  H.lives = {}
end

---Session events (also handed over by plugin/rpiv_todo.lua for the first call). While
---no session is pinned, a tool call brings its session to the foreground.
---@param event string "executed" | "replayed" | "shutdown" | "foreground"
---@param id string
function M.session_event(event, id)
  local session = H.session()
  if event == "executed" then
    H.last_call = id
    local want = H.window_session() or id
    if H.pinned == nil and want ~= session.foreground_id() then
      H.switching = true
      local ok, err = pcall(session.foreground, want)
      H.switching = false
      if not ok then
        error(err, 0)
      end
    end
  elseif event == "foreground" and not H.switching then
    H.pinned = id -- a host chose it through require("rpiv_todo").foreground(id)
  end
  if event == "foreground" or id == session.foreground_id() then
    H.request_paint()
  end
end

-- Front ends that know which session a chat buffer shows: name -> fun(bufnr): id|nil.
H.chat_lookups = {}

---Let a front end name the session of its chat buffers: `lookup(bufnr)` returns the
---session id of the chat in that buffer, or nil for a buffer that is not one of its
---chats. While the current window shows one, the panel shows that chat's list
---(unless a session is pinned). A nil {lookup} removes the front end's.
---@param name string the front end ("codecompanion", "avante", ...)
---@param lookup fun(bufnr: integer): string|nil
function M.register_chat(name, lookup)
  if type(name) ~= "string" or (lookup ~= nil and type(lookup) ~= "function") then
    H.fail("register_chat", "expected a name and a function(bufnr) or nil")
  end
  H.chat_lookups[name] = lookup
  if H.attached then
    H.follow_window()
  end
end

---The session of the chat in the current window, when a front end knows it.
---@return string|nil
function H.window_session()
  if next(H.chat_lookups) == nil then
    return nil
  end
  local buf = vim.api.nvim_get_current_buf()
  for _, lookup in pairs(H.chat_lookups) do
    local ok, id = pcall(lookup, buf)
    if ok and type(id) == "string" and id ~= "" then
      return id
    end
  end
  return nil
end

---Another window or buffer is current: unless a session is pinned, show the list of the
---chat there, else the session of the latest call.
function H.follow_window()
  local want = H.window_session() or H.last_call
  local session = H.session()
  if H.pinned == nil and want ~= nil and want ~= session.foreground_id() then
    H.switching = true
    pcall(session.foreground, want)
    H.switching = false
  end
end

---A setup() of the tool (locale, collapse key, layout, max_widget_lines): repaint now.
function H.on_setup()
  pcall(H.sync_mapping)
  H.request_paint()
end

---Look at v:lang again; repaint when the locale changed.
function H.check_locale()
  if H.attached and locale.sync() then
    H.request_paint()
  end
end

---Hand Neovim's message locale (v:lang) to the locale chain now; rpiv_todo.locale() then
---answers as the panel and :Todos will. Called before every paint and :Todos.
---@return string locale the active locale code
function M.use_editor_locale()
  locale.sync()
  return require("rpiv_todo.i18n").locale()
end

-- ---------------------------------------------------------------------------
-- The collapse key (rpiv_todo.nvim.keys)
-- ---------------------------------------------------------------------------

-- Keep the mapping in step with rpiv_todo's collapse_key (setup may change it any time).
function H.sync_mapping()
  local lhs = nil
  if M.config.map_collapse_key and H.attached then
    lhs = keys.key_notation(H.todo().config.collapse_key)
  end
  keys.sync(lhs, M.toggle)
end

---The mapped collapse key (Neovim notation), or nil when none is mapped.
---@return string|nil
function M.mapped_key()
  return keys.mapped()
end

-- ---------------------------------------------------------------------------
-- Painting
-- ---------------------------------------------------------------------------

---The foreground session, or nil while it has no list yet (looking must not create one:
---a host may check which sessions exist).
---@return rpiv_todo.Session|nil
function H.shown_session()
  local session = H.session()
  local id = session.foreground_id()
  if not session.exists(id) then
    return nil
  end
  return session.get(id)
end

---Repaint now: the panel over its window (or hidden), and the list window if open.
function H.paint()
  if not H.attached then
    return
  end
  H.sync_mapping()
  locale.sync()
  local panel = require("rpiv_todo.nvim.panel")
  if H.user_hidden then
    panel.hide()
  else
    panel.paint({ config = M.config, ov = H.overlay(), state = H.shown_session() })
  end
  local listwin = require("rpiv_todo.nvim.listwin")
  if listwin.window() then
    local lines, title = H.list_text()
    if lines then
      listwin.update(lines, title)
    end
  end
end

-- Paint, but never let a failure escape into the tool call that triggered it; inside a
-- fast event (a luv callback) the API is off limits, so paint on the main loop.
function H.request_paint()
  if H.exiting then
    return -- windows and buffers are going away
  end
  if vim.in_fast_event() then
    vim.schedule(H.request_paint)
    return
  end
  local ok, err = pcall(H.paint)
  if not ok and not H.reported then
    H.reported = true
    vim.schedule(function()
      vim.notify("(rpiv_todo) panel: " .. tostring(err), vim.log.levels.ERROR)
    end)
  end
end

-- ---------------------------------------------------------------------------
-- Host API for front ends
-- ---------------------------------------------------------------------------

---@helptext rpiv_todo-api
---Agent front ends drive the list through `require("rpiv_todo.nvim")`. A session is
---any string id; "default" is used when none is given. The tool spec itself (name,
---description, JSON Schema, prompt text, execute) is `require("rpiv_todo").tool()`.

---Run one tool call (a table, or JSON text) in session `ctx.session` and repaint.
---Returns the result `{ content = {{ type, text }}, details }`; `content[1].text` is
---what the model reads. JSON null (|vim.NIL|) in `metadata` deletes that key.
---(`require("rpiv_todo").tool().execute` is the same without the explicit repaint;
---the panel listens to both.)
---@param params table|string the tool arguments, as a table or JSON text
---@param ctx? rpiv_todo.ToolContext
---@return rpiv_todo.Result
function M.execute(params, ctx)
  M.attach()
  return H.todo().tool().execute(params, ctx)
end

---A new agent turn began in session {id} (nil: in every session): its completed
---tasks already shown hide.
---@param id? string
function M.turn_started(id)
  M.attach()
  if id ~= nil then
    H.memory(id):turn_started()
  else
    H.memory(H.session().foreground_id())
    for _, live in pairs(H.lives) do
      live:turn_started()
    end
  end
  H.request_paint()
end

-- What the panel showed of each session (native `overlay_live` memories), by session id.
H.lives = {}

---The memory of what the panel showed of session `id`.
---@param id string
---@return userdata
function H.memory(id)
  local live = H.lives[id]
  if live == nil then
    live = require("rpiv_todo.native").overlay_live()
    H.lives[id] = live
  end
  return live
end

---The live overlay, reading and writing the foreground session's memory.
---@return rpiv_todo.Overlay
function H.overlay()
  H.ov.live = H.memory(H.session().foreground_id())
  return H.ov
end

---Branch entries as the core expects them: host messages (`{ role, toolName, details }`)
---are wrapped as `{ type = "message", message = ... }`; entries and JSON text pass as is.
---@param messages table|string
---@return table|string
function H.entries(messages)
  if type(messages) ~= "table" then
    return messages
  end
  local out = {}
  for i = 1, #messages do
    local m = messages[i]
    if type(m) == "table" and m.type == nil and m.role ~= nil then
      out[i] = { type = "message", message = m }
    else
      out[i] = m
    end
  end
  return out
end

---Rebuild session {id} from the host's history: branch entries, or plain messages
---`{ role = "toolResult", toolName = "todo", details = ... }` (the last todo result
---wins). Returns the state.
---@param id string session id
---@param messages table|string
---@return rpiv_todo.State
function M.replay(id, messages)
  M.attach()
  local state = H.todo().session(id):replay(H.entries(messages or {}))
  H.request_paint()
  return state
end

---The session the panel and |:Todos| show, returned by every form.
---`foreground(id)` pins session {id}: the panel and |:Todos| show it whatever session
---the next calls run in (`require("rpiv_todo").foreground(id)` pins too).
---`foreground(nil)` follows again (the default): the chat in the current window, else
---the session of the most recent tool call; the panel switches at once.
---`foreground()` returns the session shown, pinning nothing.
---@signature foreground({id})
---@signature foreground(nil)
---@signature foreground()
---@param ... string|nil
---@return rpiv_todo.Session
function M.foreground(...)
  M.attach()
  local session = H.session()
  if select("#", ...) == 0 then
    return session.foreground()
  end
  local id = ...
  if id == nil then
    H.pinned = nil
    H.follow_window()
  else
    -- Validated by the session layer (a non-empty string id).
    session.foreground(id)
    H.pinned = session.foreground_id()
  end
  H.request_paint()
  return session.foreground()
end

---Show session {id} as if a tool call had just run in it: the panel moves to it unless a
---session is pinned (what a saved list at startup and a list another program changed do,
---|rpiv_todo-persist|).
---@param id string
function M.follow(id)
  M.attach()
  M.session_event("executed", id)
end

---The pinned session's id, or nil while following.
---@return string|nil
function M.pinned()
  return H.pinned
end

---Put the panel over window {win}; nil follows the current window.
---@param win integer|nil
function M.set_win(win)
  if win ~= nil and (type(win) ~= "number" or not vim.api.nvim_win_is_valid(win)) then
    H.fail("win", "expected a valid window id or nil, " .. M.got(win))
  end
  M.config.win = win
  M.attach()
  H.request_paint()
end

---Would the panel show anything (the foreground list has a task to show)?
---@return boolean
function H.has_tasks()
  return #H.overlay():render(H.shown_session(), 80) > 0
end

---Same as |:TodosToggle|: collapse the panel to its heading and one hint line, or
---expand it again; with nothing to show it says so and changes nothing. Returns
---whether it is collapsed.
---@return boolean collapsed
function M.toggle()
  M.attach()
  locale.sync()
  if not H.has_tasks() then
    vim.notify(require("rpiv_todo.i18n").t("todos-empty"), vim.log.levels.INFO, { title = M.config.notify_title })
    return H.ov.collapsed
  end
  local collapsed = H.ov:toggle_collapse()
  H.request_paint()
  return collapsed
end

---What :TodosToggle runs.
function M.toggle_command()
  M.toggle()
end

---Show every task and no summary row ({on} true), or go back to the
---`max_widget_lines` budget (false).
---@param on boolean
function M.set_expanded(on)
  M.attach()
  H.ov:set_expanded(on)
  H.request_paint()
end

---Same as `:Todos hide`: turn the panel off until `show()`; tool calls go on.
function M.hide()
  M.attach()
  H.user_hidden = true
  require("rpiv_todo.nvim.panel").hide()
end

---Same as `:Todos show`: turn the panel on again.
function M.show()
  M.attach()
  H.user_hidden = false
  H.request_paint()
end

---A session id as the user sees it: control characters (a NUL, which Vim functions
---refuse with E976, an escape) written as `\x00`, and cut to 40 columns.
---@param id string
---@return string
function M.shown_id(id)
  local shown = tostring(id):gsub("[%z\1-\31\127]", function(c)
    return string.format("\\x%02x", c:byte())
  end)
  if #shown > 40 then
    shown = require("rpiv_todo.native").truncate(shown, 40, "…")
  end
  return shown
end

---The list window's lines and title, or nil when the list is empty; then the text
---and its level. Rows are cut to what the widest window can show (the editor's width
---less the border), so long task texts cost what fits on the screen.
---@return string[]|nil lines
---@return string title
---@return string text
---@return string level
function H.list_text()
  local session = H.session()
  local state = H.shown_session() or { tasks = {} }
  -- One snapshot for the text and the counts (each one copies every task's text).
  if type(state.state) == "function" then
    state = state:state()
  end
  local width = math.max(20, vim.o.columns - 6)
  local text, level = H.todo().command.todos(state, { interactive = true, width = width })
  local _, counts = H.todo().command.group(state)
  local title = require("rpiv_todo.i18n").t("overlay-heading")
  local id = session.foreground_id()
  if id ~= session.DEFAULT_ID then
    title = title .. " · " .. M.shown_id(id)
  end
  if counts.total == 0 or level ~= "info" then
    return nil, title, text, level
  end
  local lines = {}
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    lines[#lines + 1] = line
  end
  return lines, title, text, level
end

---Same as |:Todos|: the list of the session shown, grouped by status, in a window
---(an empty list is a notification). Returns the text and its level ("info" or
---"error").
---@return string text
---@return string level "info" | "error"
function M.todos()
  M.attach()
  locale.sync()
  local lines, title, text, level = H.list_text()
  if lines == nil then
    local vim_level = level == "error" and vim.log.levels.ERROR or vim.log.levels.INFO
    vim.notify(text, vim_level, { title = M.config.notify_title })
  else
    require("rpiv_todo.nvim.listwin").open(lines, title)
  end
  return text, level
end

---The user's own edit of the session shown (what `:Todos add/start/done/delete`
---run): through the reducer, a warning when rejected, else a confirmation and
---|RpivTodoUserEdit|. Returns the result.
---@param params table tool arguments
---@return rpiv_todo.Result
function M.edit(params)
  M.attach()
  local session = H.session()
  local id = session.foreground_id()
  local result = session.foreground():execute(params)
  local text = result.content and result.content[1] and result.content[1].text or ""
  local opts = { title = M.config.notify_title }
  if result.details and result.details.error ~= nil then
    vim.notify(text, vim.log.levels.WARN, opts)
    return result
  end
  vim.notify(text, vim.log.levels.INFO, opts)
  H.last_edit = { session = id, params = params, result = result }
  local failed = H.fire_user_edit()
  if failed ~= nil then
    vim.notify("(rpiv_todo) a User RpivTodoUserEdit handler failed: " .. failed, vim.log.levels.ERROR, opts)
  end
  return result
end

---Fire `User RpivTodoUserEdit` so that every handler runs whatever another one does:
---the event runs under `:silent!` for errors (emsg_silent), where a failing handler is
---neither shown (no traceback, no hit-enter prompt) nor turned into an exception that
---would skip the later handlers and raise out of a caller's `pcall(vim.cmd, ...)`. The
---edit itself is already made. Returns the failure's first line (the last handler that
---failed), or nil.
---@return string|nil
function H.fire_user_edit()
  local before = vim.v.errmsg
  vim.v.errmsg = ""
  local run = "lua require('rpiv_todo.nvim')._exec_user_edit()"
  if vim.api.nvim_cmd ~= nil then
    -- Errors silenced, messages not: a handler's own output still shows.
    vim.api.nvim_cmd({ cmd = "lua", args = { run:sub(5) }, mods = { emsg_silent = true } }, {})
  else
    vim.cmd("silent! " .. run)
  end
  local err = vim.v.errmsg
  vim.v.errmsg = before
  if err == "" then
    return nil
  end
  -- The first line, without Neovim's prefix for a Lua callback's error.
  err = err:match("^[^\n]*"):gsub("^Error executing lua callback: ", ""):gsub("^Lua callback: ", "")
  return err
end

---Run the User RpivTodoUserEdit handlers (through H.fire_user_edit only).
function M._exec_user_edit()
  local fire = { pattern = "RpivTodoUserEdit", modeline = false }
  if vim.fn.has("nvim-0.8") == 1 then
    fire.data = H.last_edit
  end
  vim.api.nvim_exec_autocmds("User", fire)
end

---@helptext RpivTodoUserEdit
---Fired after each edit of yours that applied, with `data = { session = id, params =
---<the call>, result = <the result> }` (Neovim 0.8+; on 0.7 autocommands carry no
---data: read |rpiv_todo.nvim.last_user_edit()|). A handler that fails does not undo the
---edit or stop the others: every handler runs, and one error notification per edit names
---the event and the failure's first line (no traceback, no hit-enter prompt); nothing
---raises, also under `pcall(vim.cmd, "Todos done 3")`.
---
---The model does not see your edits unless the agent front end tells it; these put a
---note in the chat it reads next:
---
---codecompanion.nvim (the adapter's `session_of(chat)` names a chat's list):
--->
---vim.api.nvim_create_autocmd("User", {
---  pattern = "RpivTodoUserEdit",
---  callback = function(args)
---    local edit = args.data
---    local cc = require("rpiv_todo.adapters.codecompanion")
---    for _, item in ipairs(require("codecompanion").buf_get_chat()) do
---      if cc.session_of(item.chat) == edit.session then
---        item.chat:add_message({
---          role = "user",
---          content = "I changed the todo list myself: "
---            .. vim.json.encode(edit.params) .. " -> "
---            .. edit.result.content[1].text,
---        }, { visible = false })
---      end
---    end
---  end,
---})
---<
---avante.nvim (sessions are `avante:<history file>#...`; this adds to the history of
---the sidebar in the current tab page, which avante saves):
--->
---vim.api.nvim_create_autocmd("User", {
---  pattern = "RpivTodoUserEdit",
---  callback = function(args)
---    local edit = args.data
---    local sidebar = require("avante").get(false)
---    if not sidebar or not edit.session:match("^avante:") then return end
---    local Message = require("avante.history.message")
---    sidebar:add_history_messages({
---      Message:new("user", "I changed the todo list myself: "
---        .. vim.json.encode(edit.params) .. " -> "
---        .. edit.result.content[1].text, { visible = false }),
---    })
---  end,
---})
---<
---A host that rebuilds lists with |rpiv_todo.nvim.replay()| keeps an edit by storing
---`{ role = "toolResult", toolName = "todo", details = edit.result.details }` among
---the messages it replays: `details` is the whole list after the edit, like a tool
---result's.

---The data of the latest |RpivTodoUserEdit| (`{ session, params, result }`), or nil
---before the first: Neovim 0.7's autocommands carry no `data`.
---@return table|nil
function M.last_user_edit()
  return H.last_edit
end

---Repaint now (a host that moved or resized windows without an autocommand
---firing).
function M.refresh()
  M.attach()
  H.request_paint()
end

---The panel's floating window and its buffer, or nil when hidden.
---@return integer|nil win
---@return integer|nil buf
function M.window()
  return require("rpiv_todo.nvim.panel").window()
end

---Whether the panel is collapsed (|:TodosToggle|).
---@return boolean
function M.collapsed()
  return H.ov ~= nil and H.ov.collapsed or false
end

return M
