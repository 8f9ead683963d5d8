-- rpiv_todo.nvim: the Neovim front end (all `vim.*` glue lives here and in health.lua).
--
--   require("rpiv_todo").setup({})            -- the tool's own options
--   require("rpiv_todo.nvim").setup({})       -- optional: editor options (below)
--   local nv = require("rpiv_todo.nvim")
--   nv.execute({ action = "create", subject = "Write the parser" }, { session = "chat-1" })
--   nv.turn_started()                         -- a new agent turn: completed tasks fall away
--   nv.replay("chat-1", messages)             -- rebuild a session from the host's history
--   nv.foreground("chat-1")                   -- the session the overlay shows
--
-- What it does once attached (`M.attach()`, called by every function here, and by
-- plugin/rpiv_todo.lua on the first tool call of any session):
--   * a floating window above the bottom edge of the target window (default: the current
--     window) shows the foreground session's list, painted with `RpivTodo*` highlight
--     groups; it never takes focus, is resized to its lines, hidden when nothing is
--     visible, and repainted after each tool call, on VimResized and on ColorScheme;
--   * :Todos (the /todos text through vim.notify) and :TodosToggle (collapse/expand);
--     the configured collapse_key is mapped to the toggle in normal and insert mode.
-- Painting never raises into a tool call: a failure is reported once through vim.notify.

local M = {}
local H = {}

-- ---------------------------------------------------------------------------
-- Options of the editor front end (the tool's own options go to rpiv_todo.setup)
-- ---------------------------------------------------------------------------

---@class rpiv_todo.NvimOptions
---@field win? integer|fun(): integer window the overlay sits above; nil: the current window at paint time
---@field zindex? integer stacking order of the floating window
---@field map_collapse_key? boolean map rpiv_todo's collapse_key to :TodosToggle
---@field notify_title? string title passed to vim.notify by :Todos

M.defaults = {
  -- The window whose bottom edge the overlay sits on: a window id, a function returning
  -- one, or nil for the current window at each paint.
  win = nil,
  -- Above ordinary floats (50) so a chat window does not cover the list.
  zindex = 60,
  -- Map the tool's collapse_key (e.g. ctrl+shift+t -> <C-S-t>) to the toggle. Keys that
  -- type a character without a modifier are never mapped: they would shadow editing.
  map_collapse_key = true,
  -- The title :Todos gives vim.notify (used by notification plugins).
  notify_title = "Todos",
}

M.config = {}
for k, v in pairs(M.defaults) do
  M.config[k] = v
end

-- Highlight groups and the standard groups they link to by default. A colorscheme (or
-- the user) may define any of them; `default` links never override a definition.
M.highlights = {
  RpivTodoAccent = "Special",
  RpivTodoDim = "NonText",
  RpivTodoMuted = "Comment",
  RpivTodoText = "NormalFloat",
  RpivTodoWarning = "DiagnosticWarn",
  RpivTodoSuccess = "String",
  RpivTodoError = "DiagnosticError",
  RpivTodoToolTitle = "Title",
  RpivTodoNormal = "NormalFloat", -- the window's background
}
-- Attribute-only groups layered over the color groups for bold and struck-through text.
M.attribute_highlights = {
  RpivTodoBold = "gui=bold cterm=bold",
  RpivTodoStrikethrough = "gui=strikethrough cterm=strikethrough",
}

H.ns = vim.api.nvim_create_namespace("rpiv_todo")
H.augroup = "RpivTodo"
H.attached = false
H.buf = nil -- scratch buffer of the overlay
H.win = nil -- the floating window, nil while hidden
H.ov = nil -- the live overlay (rpiv_todo.overlay.new)
H.mapped = nil -- { lhs = string, modes = string[] } of the collapse key mapping
H.reported = false -- a paint failure was already reported

---@return table
function H.todo()
  return require("rpiv_todo")
end

---@param key string
---@param expected string
function H.fail(key, expected)
  error("(rpiv_todo) nvim." .. key .. ": " .. expected, 0)
end

---Configure the editor front end. Strict like rpiv_todo.setup: a wrong type or an unknown
---key raises `(rpiv_todo) nvim.<key>: <what was expected>` and changes nothing.
---@param opts? rpiv_todo.NvimOptions
---@return table the module
function M.setup(opts)
  if opts == nil then
    opts = {}
  end
  if type(opts) ~= "table" then
    H.fail("setup", "expected a table of options")
  end
  for k in pairs(opts) do
    if M.defaults[k] == nil and k ~= "win" then
      H.fail(tostring(k), "unknown option (expected win, zindex, map_collapse_key, notify_title)")
    end
  end
  local win = opts.win
  if win ~= nil and type(win) ~= "function" and (type(win) ~= "number" or win ~= math.floor(win)) then
    H.fail("win", "expected a window id, a function returning one, or nil for the current window")
  end
  local zindex = opts.zindex
  if zindex ~= nil and (type(zindex) ~= "number" or zindex ~= math.floor(zindex) or zindex < 1) then
    H.fail("zindex", "expected an integer >= 1")
  end
  if opts.map_collapse_key ~= nil and type(opts.map_collapse_key) ~= "boolean" then
    H.fail("map_collapse_key", "expected a boolean")
  end
  if opts.notify_title ~= nil and type(opts.notify_title) ~= "string" then
    H.fail("notify_title", "expected a string")
  end
  M.config.win = nil
  for k, v in pairs(M.defaults) do
    M.config[k] = v
  end
  for k, v in pairs(opts) do
    M.config[k] = v
  end
  M.attach()
  H.sync_mapping()
  H.request_paint()
  return M
end

-- ---------------------------------------------------------------------------
-- Attaching: listeners, autocmds, highlights, commands
-- ---------------------------------------------------------------------------

---Define the highlight groups as `default` links (a colorscheme's own definitions win).
function M.define_highlights()
  for group, target in pairs(M.highlights) do
    vim.cmd("highlight default link " .. group .. " " .. target)
  end
  for group, attrs in pairs(M.attribute_highlights) do
    vim.cmd("highlight default " .. group .. " " .. attrs)
  end
end

---Create :Todos and :TodosToggle (plugin/rpiv_todo.lua creates the same ones lazily).
function M.create_commands()
  vim.api.nvim_create_user_command("Todos", function()
    M.todos()
  end, { nargs = 0, desc = "rpiv_todo: show the foreground session's todo list" })
  vim.api.nvim_create_user_command("TodosToggle", function()
    M.toggle()
  end, { nargs = 0, desc = "rpiv_todo: collapse or expand the todo overlay" })
end

---Wire the front end into the editor. Idempotent; every other function calls it.
---@return table the module
function M.attach()
  if H.attached then
    return M
  end
  H.attached = true
  local todo = H.todo()
  H.ov = todo.overlay.new({ theme = "segments" })
  -- The live overlay forgets what it showed when the foreground list is rebuilt; then
  -- this front end repaints (listeners run in the order they were added).
  H.detach_overlay = todo.attach_overlay(H.ov)
  H.detach_listener = todo.listen(H.on_event)
  H.use_editor_locale()
  M.define_highlights()
  M.create_commands()
  local group = vim.api.nvim_create_augroup(H.augroup, { clear = true })
  vim.api.nvim_create_autocmd("VimResized", { group = group, callback = H.request_paint })
  -- The float lives in one tab page; follow the user to the one they enter.
  vim.api.nvim_create_autocmd("TabEnter", { group = group, callback = H.request_paint })
  vim.api.nvim_create_autocmd("ColorScheme", {
    group = group,
    callback = function()
      M.define_highlights()
      H.request_paint()
    end,
  })
  vim.api.nvim_create_autocmd("WinClosed", {
    group = group,
    callback = function(args)
      local closed = tonumber(args.match)
      if closed ~= nil and closed == H.win then
        H.win = nil -- closed by someone else (:only, :fclose); shown again on next paint
      elseif closed ~= nil and closed == H.anchor then
        vim.schedule(H.request_paint) -- the float went with its window: re-anchor
      end
    end,
  })
  H.sync_mapping()
  return M
end

---Undo `attach()`: close the window, drop listeners, autocmds and the key mapping.
function M.detach()
  if not H.attached then
    return
  end
  H.attached = false
  H.hide()
  if H.detach_overlay then
    H.detach_overlay()
  end
  if H.detach_listener then
    H.detach_listener()
  end
  pcall(vim.api.nvim_del_augroup_by_name, H.augroup)
  H.unmap()
end

---Session events: repaint when the foreground session changed in any way.
---@param event string
---@param id string
function H.on_event(event, id)
  if event == "foreground" or id == require("rpiv_todo.session").foreground_id() then
    H.request_paint()
  end
end

-- The locale chain (rpiv_todo.i18n) reads RPIV_TODO_LOCALE, the rpiv-i18n file and
-- LC_ALL/LC_MESSAGES/LANG from the process. In Neovim, v:lang (`:language messages`) is
-- the message locale chosen for this editor, so when it names a language it stands in for
-- the POSIX variables. When it is "C", "POSIX" or "C.<codeset>" the environment decides:
-- Neovim 0.10+ reports "C" when $LANG names a locale that is not installed, yet $LANG
-- still says which language the person reads (and `:language messages C` itself sets
-- $LC_MESSAGES=C, which the chain then reads). Checked before each paint and :Todos, so
-- a `:language messages` at run time reaches the next render; only a change re-resolves.
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
    return
  end
  H.locale_inputs = key
  local i18n = require("rpiv_todo.i18n")
  local base = lang:match("^[^.@]*")
  if base == "" or base == "C" or base == "POSIX" then
    pcall(i18n.set_env, nil)
  else
    pcall(i18n.set_env, { LC_ALL = false, LC_MESSAGES = lang })
  end
end

---Hand Neovim's message locale (v:lang) to the locale chain now; rpiv_todo.locale() then
---answers as the overlay and :Todos will. Called before every paint and :Todos.
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

---@return integer|nil
function H.target_win()
  local win = M.config.win
  if type(win) == "function" then
    local ok, w = pcall(win)
    win = ok and w or nil
  end
  if win == nil or win == 0 then
    win = vim.api.nvim_get_current_win()
  end
  if type(win) ~= "number" or not vim.api.nvim_win_is_valid(win) or win == H.win then
    return nil
  end
  return win
end

---Plain text and highlight ranges of one segments line.
---@param line table list of { text, group, bold?, strikethrough? }
---@return string text
---@return table[] ranges { group, start_col, end_col } in bytes
function H.flatten(line)
  local parts, ranges, col = {}, {}, 0
  for i = 1, #line do
    local seg = line[i]
    local text = seg[1]
    parts[#parts + 1] = text
    local stop = col + #text
    if seg[2] then
      ranges[#ranges + 1] = { seg[2], col, stop }
    end
    if seg.bold then
      ranges[#ranges + 1] = { "RpivTodoBold", col, stop }
    end
    if seg.strikethrough then
      ranges[#ranges + 1] = { "RpivTodoStrikethrough", col, stop }
    end
    col = stop
  end
  return table.concat(parts), ranges
end

-- nvim_set_option_value takes win/buf from 0.8 on; the older per-kind setters are
-- deprecated since 0.10 but are what 0.7 has.
function H.set_option(handle, kind, name, value)
  if vim.fn.has("nvim-0.8") == 1 then
    vim.api.nvim_set_option_value(name, value, { [kind] = handle })
  elseif kind == "win" then
    vim.api.nvim_win_set_option(handle, name, value)
  else
    vim.api.nvim_buf_set_option(handle, name, value)
  end
end

function H.ensure_buf()
  if H.buf == nil or not vim.api.nvim_buf_is_valid(H.buf) then
    H.buf = vim.api.nvim_create_buf(false, true)
    H.set_option(H.buf, "buf", "bufhidden", "hide")
  end
  return H.buf
end

function H.hide()
  local win = H.win
  H.win, H.anchor = nil, nil
  if win ~= nil and vim.api.nvim_win_is_valid(win) then
    vim.api.nvim_win_close(win, true)
  end
end

---Repaint now: render the foreground list into the float (or hide it).
function H.paint()
  if not H.attached then
    return
  end
  H.sync_mapping()
  H.use_editor_locale()
  local target = H.target_win()
  local state = require("rpiv_todo.session").foreground():state()
  if target == nil then
    H.hide()
    return
  end
  local width = vim.api.nvim_win_get_width(target)
  local lines = H.ov:render(state, width)
  if #lines == 0 then
    H.hide()
    return
  end
  local texts, ranges = {}, {}
  local float_width = 1
  for i = 1, #lines do
    texts[i], ranges[i] = H.flatten(lines[i])
    float_width = math.max(float_width, vim.fn.strdisplaywidth(texts[i]))
  end
  float_width = math.min(float_width, width)
  local buf = H.ensure_buf()
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, texts)
  vim.api.nvim_buf_clear_namespace(buf, H.ns, 0, -1)
  for i = 1, #ranges do
    for _, r in ipairs(ranges[i]) do
      -- Extmark highlights combine, so bold and strikethrough layer over the color.
      vim.api.nvim_buf_set_extmark(buf, H.ns, i - 1, r[2], { end_col = r[3], hl_group = r[1] })
    end
  end
  local height = vim.api.nvim_win_get_height(target)
  local config = {
    relative = "win",
    win = target,
    anchor = "SW",
    row = height,
    col = 0,
    width = float_width,
    height = math.max(1, math.min(#texts, height)),
    focusable = false,
    zindex = M.config.zindex,
  }
  if
    H.win ~= nil
    and vim.api.nvim_win_is_valid(H.win)
    and vim.api.nvim_win_get_tabpage(H.win) ~= vim.api.nvim_win_get_tabpage(target)
  then
    H.hide() -- a float cannot move to another tab page: open a new one there
  end
  if H.win ~= nil and vim.api.nvim_win_is_valid(H.win) then
    vim.api.nvim_win_set_config(H.win, config)
  else
    config.style = "minimal"
    config.noautocmd = true
    H.win = vim.api.nvim_open_win(buf, false, config)
    H.set_option(H.win, "win", "winhighlight", "Normal:RpivTodoNormal")
    H.set_option(H.win, "win", "wrap", false)
  end
  H.anchor = target
end

-- Paint, but never let a failure escape into the tool call that triggered it; inside a
-- fast event (a luv callback) the API is off limits, so paint on the main loop.
function H.request_paint()
  if vim.in_fast_event() then
    vim.schedule(H.request_paint)
    return
  end
  local ok, err = pcall(H.paint)
  if not ok and not H.reported then
    H.reported = true
    vim.schedule(function()
      vim.notify("(rpiv_todo) overlay: " .. tostring(err), vim.log.levels.ERROR)
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

---A new agent turn began: completed tasks already shown hide from the overlay.
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

---Choose the session the overlay and :Todos show (or read it, without an argument).
---@param id? string
---@return rpiv_todo.Session
function M.foreground(id)
  M.attach()
  local session = H.todo().foreground(id)
  H.request_paint()
  return session
end

---Anchor the overlay above `win` (nil: follow the current window).
---@param win integer|nil
function M.set_win(win)
  if win ~= nil and (type(win) ~= "number" or not vim.api.nvim_win_is_valid(win)) then
    H.fail("win", "expected a valid window id or nil")
  end
  M.config.win = win
  M.attach()
  H.request_paint()
end

---Collapse or expand the overlay (:TodosToggle and the collapse key).
---@return boolean collapsed
function M.toggle()
  M.attach()
  local collapsed = H.ov:toggle_collapse()
  H.request_paint()
  return collapsed
end

---The host's "show all" mode: every task, no summary row.
---@param on boolean
function M.set_expanded(on)
  M.attach()
  H.ov:set_expanded(on)
  H.request_paint()
end

---:Todos: the foreground list grouped by status, through vim.notify.
---@return string text
---@return string level "info" | "error"
function M.todos()
  M.attach()
  H.use_editor_locale()
  local text, level = H.todo().command.todos(nil, { interactive = true })
  local vim_level = level == "error" and vim.log.levels.ERROR or vim.log.levels.INFO
  vim.notify(text, vim_level, { title = M.config.notify_title })
  return text, level
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
  if H.win ~= nil and vim.api.nvim_win_is_valid(H.win) then
    return H.win, H.buf
  end
  return nil, nil
end

---Is the overlay collapsed?
---@return boolean
function M.collapsed()
  return H.ov ~= nil and H.ov.collapsed or false
end

return M
