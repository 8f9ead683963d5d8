-- rpiv_todo.nvim: the Neovim front end (all `vim.*` glue lives here, in rpiv_todo/nvim/
-- and in health.lua).
--
--   require("rpiv_todo").setup({})            -- the tool's own options
--   require("rpiv_todo.nvim").setup({})       -- optional: editor options (below)
--   local nv = require("rpiv_todo.nvim")
--   nv.execute({ action = "create", subject = "Write the parser" }, { session = "chat-1" })
--   nv.turn_started()                         -- a new agent turn: completed tasks fall away
--   nv.replay("chat-1", messages)             -- rebuild a session from the host's history
--   nv.foreground("chat-1")                   -- pin the session the panel shows
--   nv.foreground(nil)                        -- follow the latest tool call again (default)
--
-- Once attached (`M.attach()`, called by every function here, and by plugin/rpiv_todo.lua
-- on the first tool call of any session):
--   * the panel (rpiv_todo.nvim.panel), a floating window over the current window that
--     shows the foreground session's list: by default the session of the most recent
--     tool call; it moves with the windows, out of the cursor's way, hides where it does
--     not belong, and repaints after each tool call, each setup() and locale change;
--   * the RpivTodo* highlight groups (rpiv_todo.nvim.highlights);
--   * :Todos (the list window, and the user's own edits) and :TodosToggle
--     (rpiv_todo.nvim.commands); the collapse_key is mapped to the toggle.
-- Painting never raises into a tool call: a failure is reported once through vim.notify.
--
-- Other front-end files plug in here: options with `M.register_option(name, default,
-- check, apply)`, :Todos subcommands with `require("rpiv_todo.nvim.commands").register`,
-- whole commands with `.register_command` (created with :Todos and :TodosToggle).

local M = {}
local H = {}

-- ---------------------------------------------------------------------------
-- Options of the editor front end (the tool's own options go to rpiv_todo.setup)
-- ---------------------------------------------------------------------------

---@class rpiv_todo.NvimOptions
---@field win? integer|fun(): integer window the panel sits over; nil: the current window at paint time
---@field position? "bottom-right"|"top-right"|"bottom-left"|"top-left"|"bottom"|"top" corner or edge of that window
---@field border? string|table a border for nvim_open_win ("none", "single", "rounded", ...)
---@field winblend? integer 0-100, transparency of the panel
---@field max_width? integer|number|nil columns, or a fraction of the window (0 < x <= 1); nil: the window's width
---@field padding? integer blank columns left and right of the text
---@field avoid_cursor? boolean move out of the way of the cursor line
---@field exclude? table|fun(win: integer, buf: integer): boolean windows the panel does not sit over
---@field zindex? integer stacking order of the floating window
---@field map_collapse_key? boolean map rpiv_todo's collapse_key to :TodosToggle
---@field notify_title? string title passed to vim.notify

M.defaults = {
  -- The window the panel sits over: a window id, a function returning one, or nil for
  -- the current window at each paint (an excluded one keeps the panel where it was).
  win = nil,
  -- The corner (or the middle of the edge) the panel takes. The right-hand side covers
  -- the least: code and prose are left-aligned, so the end of most lines is empty there;
  -- the bottom keeps the top of the window (where one reads from) clear. When the cursor
  -- line comes under the panel it moves to the other edge.
  position = "bottom-right",
  -- "none", or any border nvim_open_win takes ("single", "rounded", a list of chars).
  border = "none",
  -- 0 (opaque) to 100 (invisible); with a transparent panel the text under it shows.
  winblend = 0,
  -- The widest the panel gets: columns, or a fraction of the window (0.5 = half); nil:
  -- the window's width. Longer rows are cut with an ellipsis.
  max_width = nil,
  -- Blank columns on each side of the text, so it does not touch the text beside it.
  padding = 1,
  -- Move out of the cursor's way (the panel never covers the line being edited).
  avoid_cursor = true,
  -- Windows the panel never sits over (it stays where it was, or takes the largest
  -- other window): a table { filetypes = {...}, buftypes = {...} }, or a function
  -- (win, buf) returning true to skip one. Floating windows are always skipped.
  exclude = {
    filetypes = {
      "help",
      "checkhealth",
      "qf",
      "codecompanion",
      "Avante",
      "AvanteInput",
      "AvanteSelectedFiles",
      "AvanteSelectedCode",
      "AvanteTodos",
      "AvantePromptInput",
      "AvanteConfirm",
      "TelescopePrompt",
      "lazy",
      "mason",
      "rpiv_todo",
    },
    buftypes = { "help", "quickfix", "prompt" },
  },
  -- Above ordinary floats (50) so a chat window does not cover the list.
  zindex = 60,
  -- Map the tool's collapse_key (e.g. ctrl+shift+t -> <C-S-t>) to the toggle. Keys that
  -- type a character without a modifier are never mapped: they would shadow editing.
  map_collapse_key = true,
  -- The title of the notifications (used by notification plugins).
  notify_title = "Todos",
}

H.POSITIONS = {
  ["bottom-right"] = true,
  ["top-right"] = true,
  ["bottom-left"] = true,
  ["top-left"] = true,
  bottom = true,
  top = true,
}

---`got <type> <value>`, what an error message adds after what it expected.
M.got = require("rpiv_todo.common").got

---@param v any
---@return boolean
function H.is_int(v)
  return type(v) == "number" and v == math.floor(v) and v > -math.huge and v < math.huge
end

-- Checks of each option: a function returning nil when the value is fine, or what was
-- expected. Other front-end files register theirs with M.register_option.
H.checks = {
  win = function(v)
    if v ~= nil and type(v) ~= "function" and not H.is_int(v) then
      return "expected a window id, a function returning one, or nil for the current window"
    end
  end,
  position = function(v)
    if type(v) ~= "string" or not H.POSITIONS[v] then
      return 'expected "bottom-right", "top-right", "bottom-left", "top-left", "bottom" or "top"'
    end
  end,
  border = function(v)
    if type(v) ~= "string" and type(v) ~= "table" then
      return 'expected a border name ("none", "single", "rounded", ...) or a list of characters'
    end
  end,
  winblend = function(v)
    if not H.is_int(v) or v < 0 or v > 100 then
      return "expected an integer from 0 to 100"
    end
  end,
  max_width = function(v)
    if v ~= nil and (type(v) ~= "number" or v <= 0 or v ~= v or v == math.huge or (v > 1 and not H.is_int(v))) then
      return "expected a number of columns, a fraction of the window (0 < x <= 1), or nil"
    end
  end,
  padding = function(v)
    if not H.is_int(v) or v < 0 or v > 8 then
      return "expected an integer from 0 to 8"
    end
  end,
  avoid_cursor = function(v)
    if type(v) ~= "boolean" then
      return "expected a boolean"
    end
  end,
  exclude = function(v)
    if type(v) == "function" then
      return nil
    end
    if type(v) ~= "table" then
      return "expected { filetypes = {...}, buftypes = {...} } or a function(win, buf) returning true to skip"
    end
    for k, list in pairs(v) do
      if k ~= "filetypes" and k ~= "buftypes" then
        return "expected only the keys filetypes and buftypes, got " .. tostring(k)
      end
      if type(list) ~= "table" then
        return k .. ": expected a list of strings, " .. M.got(list)
      end
      for _, item in ipairs(list) do
        if type(item) ~= "string" then
          return k .. ": expected a list of strings, " .. M.got(item)
        end
      end
    end
  end,
  zindex = function(v)
    if not H.is_int(v) or v < 1 then
      return "expected an integer >= 1"
    end
  end,
  map_collapse_key = function(v)
    if type(v) ~= "boolean" then
      return "expected a boolean"
    end
  end,
  notify_title = function(v)
    if type(v) ~= "string" then
      return "expected a string"
    end
  end,
}

H.appliers = {} -- name -> fn(value, config) run by setup() after the config is in place

-- Every option's name, in a fixed order. Loops over the options go through this list, not
-- pairs(): the LuaJIT of Neovim 0.7.2 was seen to skip a key in a compiled pairs() loop
-- (see overlay/layout.lua), and a skipped option would go unchecked or lose its default.
H.names = {}
for name in pairs(H.checks) do
  H.names[#H.names + 1] = name
end
table.sort(H.names)

---Add an option of the editor front end (for other front-end files, before setup).
---`apply(value, config)`, when given, runs at every setup() once the new config is in
---place (after the checks of every option passed).
---@param name string
---@param default any
---@param check fun(value: any): string|nil nil when fine, else what was expected
---@param apply? fun(value: any, config: table)
function M.register_option(name, default, check, apply)
  if H.checks[name] == nil then
    H.names[#H.names + 1] = name
  end
  M.defaults[name] = default
  H.checks[name] = check
  H.appliers[name] = apply
  if M.config[name] == nil then
    M.config[name] = H.copy(default)
  end
end

---@param v any
---@return any
function H.copy(v)
  if type(v) ~= "table" then
    return v
  end
  local out = {}
  for k, x in pairs(v) do
    out[k] = H.copy(x)
  end
  return out
end

M.config = {}
for _, name in ipairs(H.names) do
  M.config[name] = H.copy(M.defaults[name])
end

H.attached = false
H.ov = nil -- the live overlay (rpiv_todo.overlay.new)
H.mapped = nil -- { lhs = string, modes = string[] } of the collapse key mapping
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

---Configure the editor front end. Strict like rpiv_todo.setup: a wrong type or an unknown
---key raises `(rpiv_todo) nvim.<key>: <what was expected>, got <what came>` and changes
---nothing. Absent keys take their defaults.
---@param opts? rpiv_todo.NvimOptions
---@return table the module
function M.setup(opts)
  if opts == nil then
    opts = {}
  end
  if type(opts) ~= "table" then
    H.fail("setup", "expected a table of options, " .. M.got(opts))
  end
  local names = H.names
  for k in pairs(opts) do
    if H.checks[k] == nil then
      H.fail(tostring(k), "unknown option (expected " .. table.concat(names, ", ") .. ")")
    end
  end
  for _, k in ipairs(names) do
    local v = opts[k]
    if v ~= nil or k == "win" or k == "max_width" then
      local problem = H.checks[k](v)
      if problem ~= nil then
        H.fail(k, problem .. ", " .. M.got(v))
      end
    end
  end
  for _, k in ipairs(names) do
    local v = opts[k]
    if v == nil then
      v = H.copy(M.defaults[k])
    end
    M.config[k] = v
  end
  M.attach()
  for _, name in ipairs(names) do
    local apply = H.appliers[name]
    if apply then
      apply(M.config[name], M.config)
    end
  end
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

---Create :Todos and :TodosToggle (plugin/rpiv_todo.lua creates the same ones lazily).
function M.create_commands()
  require("rpiv_todo.nvim.commands").create()
end

---Wire the front end into the editor. Idempotent; every other function calls it.
---@return table the module
function M.attach()
  if H.attached then
    return M
  end
  H.attached = true
  local todo = H.todo()
  H.ov = todo.overlay.new({ theme = "segments", layout = H.layout })
  -- The live overlay forgets what it showed when the foreground list is rebuilt; then
  -- this front end repaints (listeners run in the order they were added).
  H.detach_overlay = todo.attach_overlay(H.ov)
  H.detach_listener = todo.listen(M.session_event)
  if type(todo.on_setup) == "function" then
    H.detach_setup = todo.on_setup(H.on_setup)
  end
  H.use_editor_locale()
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

---Undo `attach()`: close the windows, drop listeners, autocmds and the key mapping.
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
  H.unmap()
  H.pinned, H.last_call, H.user_hidden = nil, nil, false
end

---Session events (also handed over by plugin/rpiv_todo.lua for the first call). While
---no session is pinned, a tool call brings its session to the foreground.
---@param event string "executed" | "replayed" | "shutdown" | "foreground"
---@param id string
function M.session_event(event, id)
  local session = H.session()
  if event == "executed" then
    H.last_call = id
    if H.pinned == nil and id ~= session.foreground_id() then
      H.switching = true
      local ok, err = pcall(session.foreground, id)
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

---A setup() of the tool (locale, collapse key, layout, max_widget_lines): repaint now.
function H.on_setup()
  pcall(H.sync_mapping)
  H.request_paint()
end

---Look at v:lang again; repaint when the locale changed.
function H.check_locale()
  if H.attached and H.use_editor_locale() then
    H.request_paint()
  end
end

-- The locale chain (rpiv_todo.i18n) reads RPIV_TODO_LOCALE, the rpiv-i18n file and
-- LC_ALL/LC_MESSAGES/LANG from the process. In Neovim, v:lang (`:language messages`) is
-- the message locale chosen for this editor, so when it names a language it stands in for
-- the POSIX variables. When it is "C", "POSIX" or "C.<codeset>" the environment decides:
-- Neovim 0.10+ reports "C" when $LANG names a locale that is not installed, yet $LANG
-- still says which language the person reads (and `:language messages C` itself sets
-- $LC_MESSAGES=C, which the chain then reads). Checked before each paint and :Todos, and
-- after each command line (CmdlineLeave), so a `:language messages` typed at run time
-- repaints at once; only a change re-resolves. Returns true when the inputs changed.
H.LOCALE_ENV = { "RPIV_TODO_LOCALE", "XDG_CONFIG_HOME", "HOME", "LC_ALL", "LC_MESSAGES", "LANG" }
H.locale_inputs = nil -- v:lang and the variables above, as last handed to the chain

function H.use_editor_locale()
  local lang = vim.v.lang
  if type(lang) ~= "string" then
    lang = ""
  end
  local inputs = { lang }
  for i, name in ipairs(H.LOCALE_ENV) do
    inputs[i + 1] = os.getenv(name) or ""
  end
  local key = table.concat(inputs, "\0")
  if key == H.locale_inputs then
    return false
  end
  H.locale_inputs = key
  local i18n = require("rpiv_todo.i18n")
  local base = lang:match("^[^.@]*")
  if base == "" or base == "C" or base == "POSIX" then
    pcall(i18n.set_env, nil)
  else
    pcall(i18n.set_env, { LC_ALL = false, LC_MESSAGES = lang })
  end
  return true
end

---Hand Neovim's message locale (v:lang) to the locale chain now; rpiv_todo.locale() then
---answers as the panel and :Todos will. Called before every paint and :Todos.
---@return string locale the active locale code
function M.use_editor_locale()
  H.use_editor_locale()
  return require("rpiv_todo.i18n").locale()
end

-- ---------------------------------------------------------------------------
-- The collapse key
-- ---------------------------------------------------------------------------

H.MODIFIER_NOTATION = { ctrl = "C", shift = "S", alt = "M", super = "D" }
H.NAMED_NOTATION = {
  escape = "Esc",
  esc = "Esc",
  enter = "CR",
  ["return"] = "CR",
  tab = "Tab",
  space = "Space",
  backspace = "BS",
  delete = "Del",
  insert = "Insert",
  home = "Home",
  ["end"] = "End",
  pageup = "PageUp",
  pagedown = "PageDown",
  up = "Up",
  down = "Down",
  left = "Left",
  right = "Right",
}
for i = 1, 12 do
  H.NAMED_NOTATION["f" .. i] = "F" .. i
end
-- Characters that need a name inside <...> notation.
H.CHAR_NOTATION = { ["<"] = "lt", ["\\"] = "Bslash", ["|"] = "Bar" }

---The Neovim key notation of a collapse key ("ctrl+shift+t" -> "<C-S-t>"), or nil when
---the key cannot or should not be mapped ("off", "clear", a bare printable character).
---@param key string a normalized collapse key (rpiv_todo.overlay.normalize_collapse_key)
---@return string|nil lhs
function M.key_notation(key)
  if type(key) ~= "string" or key == "off" then
    return nil
  end
  local parts = {}
  for part in key:gmatch("[^+]+") do
    parts[#parts + 1] = part
  end
  if #parts == 0 then
    return nil
  end
  local base = parts[#parts]
  local mods = {}
  for i = 1, #parts - 1 do
    local m = H.MODIFIER_NOTATION[parts[i]]
    if m == nil then
      return nil
    end
    mods[#mods + 1] = m
  end
  local name = H.NAMED_NOTATION[base]
  if name == nil then
    if #base ~= 1 then
      return nil -- "clear" has no Neovim key
    end
    if #mods == 0 then
      return nil -- a bare character would shadow typing and normal-mode commands
    end
    name = H.CHAR_NOTATION[base] or base
  end
  if #mods == 0 then
    return "<" .. name .. ">"
  end
  return "<" .. table.concat(mods, "-") .. "-" .. name .. ">"
end

function H.unmap()
  local mapped = H.mapped
  if mapped then
    for _, mode in ipairs(mapped.modes) do
      pcall(vim.keymap.del, mode, mapped.lhs)
    end
    H.mapped = nil
  end
end

-- Keep the mapping in step with rpiv_todo's collapse_key (setup may change it any time).
function H.sync_mapping()
  local lhs = nil
  if M.config.map_collapse_key and H.attached then
    lhs = M.key_notation(H.todo().config.collapse_key)
  end
  if H.mapped and H.mapped.lhs == lhs then
    return
  end
  H.unmap()
  if lhs then
    local modes = { "n", "i" }
    vim.keymap.set(modes, lhs, M.toggle, { silent = true, desc = "rpiv_todo: collapse or expand the todo overlay" })
    H.mapped = { lhs = lhs, modes = modes }
  end
end

---The mapped collapse key (Neovim notation), or nil when none is mapped.
---@return string|nil
function M.mapped_key()
  return H.mapped and H.mapped.lhs or nil
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
  H.use_editor_locale()
  local panel = require("rpiv_todo.nvim.panel")
  if H.user_hidden then
    panel.hide()
  else
    panel.paint({ config = M.config, ov = H.ov, state = H.shown_session() })
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

---Run one tool call in a session ("default" when `ctx.session` is absent) and repaint.
---@param params table|string the tool arguments, as a table or JSON text
---@param ctx? rpiv_todo.ToolContext
---@return rpiv_todo.Result
function M.execute(params, ctx)
  M.attach()
  return H.todo().tool().execute(params, ctx)
end

---A new agent turn began: completed tasks already shown hide from the panel.
function M.turn_started()
  M.attach()
  H.ov:turn_started()
  H.request_paint()
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

---Rebuild a session's list from the host's history (branch entries, or plain messages
---with `role = "toolResult"`, `toolName = "todo"` and the result's `details`).
---@param id string session id
---@param messages table|string
---@return rpiv_todo.State
function M.replay(id, messages)
  M.attach()
  local state = H.todo().session(id):replay(H.entries(messages or {}))
  H.request_paint()
  return state
end

---The session the panel and :Todos show. `foreground(id)` pins session `id`;
---`foreground(nil)` goes back to following the session of the latest tool call (the
---default); `foreground()` only reads. Returns the foreground session.
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
    if H.last_call ~= nil and H.last_call ~= session.foreground_id() then
      H.switching = true
      pcall(session.foreground, H.last_call)
      H.switching = false
    end
  else
    -- Validated by the session layer (a non-empty string id).
    session.foreground(id)
    H.pinned = session.foreground_id()
  end
  H.request_paint()
  return session.foreground()
end

---Show session `id` as if a tool call had just run in it (a saved list at startup, a list
---another program changed): the panel moves to it unless a session is pinned.
---@param id string
function M.follow(id)
  M.attach()
  M.session_event("executed", id)
end

---The pinned session id, or nil while the panel follows the latest tool call.
---@return string|nil
function M.pinned()
  return H.pinned
end

---Anchor the panel over `win` (nil: follow the current window).
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
  return #H.ov:render(H.shown_session(), 80) > 0
end

---Collapse or expand the panel (:TodosToggle and the collapse key). With nothing to
---show there is nothing to collapse: it says so and stays as it is.
---@return boolean collapsed
function M.toggle()
  M.attach()
  H.use_editor_locale()
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

---The host's "show all" mode: every task, no summary row.
---@param on boolean
function M.set_expanded(on)
  M.attach()
  H.ov:set_expanded(on)
  H.request_paint()
end

---Turn the panel off (`:Todos hide`) until `show()`; tool calls keep working.
function M.hide()
  M.attach()
  H.user_hidden = true
  require("rpiv_todo.nvim.panel").hide()
end

---Turn the panel on again (`:Todos show`).
function M.show()
  M.attach()
  H.user_hidden = false
  H.request_paint()
end

---The list window's lines and title, or nil when the list is empty.
---@return string[]|nil lines
---@return string title
function H.list_text()
  local session = H.session()
  local state = H.shown_session() or { tasks = {} }
  local text, level = H.todo().command.todos(state, { interactive = true })
  local _, counts = H.todo().command.group(type(state.state) == "function" and state:state() or state)
  local title = require("rpiv_todo.i18n").t("overlay-heading")
  local id = session.foreground_id()
  if id ~= session.DEFAULT_ID then
    title = title .. " · " .. id
  end
  if counts.total == 0 or level ~= "info" then
    return nil, title
  end
  local lines = {}
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    lines[#lines + 1] = line
  end
  return lines, title
end

---:Todos: the foreground list grouped by status in a window (`q` closes it); an empty
---list is a notification.
---@return string text
---@return string level "info" | "error"
function M.todos()
  M.attach()
  H.use_editor_locale()
  local text, level = H.todo().command.todos(H.shown_session() or { tasks = {} }, { interactive = true })
  local lines, title = H.list_text()
  if lines == nil then
    local vim_level = level == "error" and vim.log.levels.ERROR or vim.log.levels.INFO
    vim.notify(text, vim_level, { title = M.config.notify_title })
  else
    require("rpiv_todo.nvim.listwin").open(lines, title)
  end
  return text, level
end

---The user's own edit of the foreground list (what :Todos add/start/done/delete run):
---through the same reducer as the model's calls. A rejected edit is a warning and
---changes nothing; an applied one is confirmed and fires `User RpivTodoUserEdit` with
---data = { session, params, result }.
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
  local fire = { pattern = "RpivTodoUserEdit", modeline = false }
  if vim.fn.has("nvim-0.8") == 1 then
    fire.data = H.last_edit
  end
  local ok, err = pcall(vim.api.nvim_exec_autocmds, "User", fire)
  if not ok then
    vim.notify("(rpiv_todo) User RpivTodoUserEdit: " .. tostring(err), vim.log.levels.ERROR, opts)
  end
  return result
end

---The data of the latest RpivTodoUserEdit (Neovim 0.7 has no `data` in autocmds).
---@return table|nil
function M.last_user_edit()
  return H.last_edit
end

---Repaint now (a host that moved or resized windows without an autocmd firing).
function M.refresh()
  M.attach()
  H.request_paint()
end

---The floating window and its buffer, nil while hidden (for hosts and tests).
---@return integer|nil win
---@return integer|nil buf
function M.window()
  return require("rpiv_todo.nvim.panel").window()
end

---Is the panel collapsed?
---@return boolean
function M.collapsed()
  return H.ov ~= nil and H.ov.collapsed or false
end

-- The `persist` option (lists kept on disk), from rpiv_todo/nvim/persist.lua.
require("rpiv_todo.nvim.persist").register_option(M)

return M
