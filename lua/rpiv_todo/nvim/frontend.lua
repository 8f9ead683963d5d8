-- rpiv_todo.nvim.frontend: the Neovim front end's state and workings, behind the public
-- functions of rpiv_todo.nvim (which documents them). Not a public API: its functions may
-- change with any release.
--
-- Once attached (`attach()`, called by every public function, and by plugin/rpiv_todo.lua
-- on the first session event that is not a chat registration):
--   * the panel (rpiv_todo.nvim.panel), a floating window over the current window that
--     shows the foreground session's list: by default the chat in the current window
--     (a chat front end's `register_chat` on the session layer), else the session of the
--     most recent tool call; it moves with the windows, out of the cursor's way, hides
--     where it does not belong, and repaints after each tool call, each setup() and
--     locale change;
--   * the RpivTodo* highlight groups (rpiv_todo.nvim.highlights);
--   * the collapse_key mapped to the toggle.
-- Painting never raises into a tool call: a failure is reported once through vim.notify.
-- This file requires none of rpiv_todo.nvim, .setup, .commands or .persist (they require
-- it), so the front end's modules form no cycle.

local M = {}
local H = {}

local options = require("rpiv_todo.nvim.options")
local keys = require("rpiv_todo.nvim.keys")
local locale = require("rpiv_todo.nvim.locale")
local listing = require("rpiv_todo.nvim.listing")
local shown = require("rpiv_todo.nvim.shown")

-- The editor options in force (rpiv_todo.nvim.options).
M.config = options.config

---The Neovim key notation of a collapse key ("ctrl+shift+t" -> "<C-S-t>"), or nil.
M.key_notation = keys.key_notation

H.attached = false
H.ov = nil -- the live overlay (rpiv_todo.overlay.new)
H.reported = false -- a paint failure was already reported
H.user_hidden = false -- :Todos hide

---@return table
function H.tool_config()
  return require("rpiv_todo.config").get()
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
    local overlay = require("rpiv_todo.overlay")
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

---Wire the front end into the editor: panel, autocommands, highlight groups, key
---mapping. Idempotent; every other function here calls it, and so does the first
---tool call of any session. Returns the module.
---@return table the module
function M.attach()
  if H.attached then
    return M
  end
  H.attached = true
  local session = H.session()
  H.ov = require("rpiv_todo.overlay").new({ theme = "segments", layout = H.layout })
  -- What the panel showed is remembered per session (H.lives), so going back to a chat
  -- does not bring back the completed tasks of its earlier turns; a session's memory is
  -- forgotten when its list is rebuilt (replay, load, shutdown). Then this front end
  -- repaints (listeners run in the order they were added).
  H.detach_overlay = session.listen(function(event, id)
    if H.REBUILT[event] and H.lives[id] ~= nil then
      H.lives[id]:reset()
    end
  end)
  H.detach_listener = session.listen(M.session_event)
  H.detach_setup = require("rpiv_todo.config").on_setup(H.on_setup)
  locale.sync()
  M.define_highlights()
  require("rpiv_todo.nvim.autocmds").create(H.augroup, {
    paint = M.request_paint,
    follow_window = H.follow_window,
    colors = function()
      M.define_highlights()
      M.request_paint()
    end,
    check_locale = H.check_locale,
    exiting = function()
      H.exiting = true
    end,
  })
  M.sync_mapping()
  return M
end

H.augroup = "RpivTodo"

-- Session events after which a session's list is another one: the panel forgets what it
-- showed of it.
H.REBUILT = { replayed = true, loaded = true, reloaded = true, shutdown = true }

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
  shown.reset()
  H.user_hidden = false
  H.lives = {}
end

---Session events (also handed over by plugin/rpiv_todo.lua for the first one). While
---no session is pinned, a tool call brings its session to the foreground; a new turn
---hides the completed tasks shown; a chat front end that registers is followed.
---@param event string
---@param id string|nil
function M.session_event(event, id)
  if event == "chat" then
    H.follow_window()
    return
  elseif event == "turn_started" then
    H.turn_started(id)
    M.request_paint()
    return
  elseif event == "executed" then
    if shown.executed(id) then
      M.request_paint()
    end
    return
  elseif event == "foreground" then
    if shown.foreground_event(id) then
      M.request_paint()
    end
    return
  end
  if id == H.session().foreground_id() then
    M.request_paint()
  end
end

---A new turn in session {id} (nil: every session): its completed tasks shown hide.
---@param id string|nil
function H.turn_started(id)
  if id ~= nil then
    H.memory(id):turn_started()
  else
    H.memory(H.session().foreground_id())
    for _, live in pairs(H.lives) do
      live:turn_started()
    end
  end
end

---Another window or buffer is current: the panel follows its chat (rpiv_todo.nvim.shown).
function H.follow_window()
  if shown.follow_window() then
    M.request_paint()
  end
end

---A setup() of the tool (locale, collapse key, layout, max_widget_lines): repaint now.
function H.on_setup()
  pcall(M.sync_mapping)
  M.request_paint()
end

---Look at v:lang again; repaint when the locale changed.
function H.check_locale()
  if H.attached and locale.sync() then
    M.request_paint()
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
function M.sync_mapping()
  local lhs = nil
  if M.config.map_collapse_key and H.attached then
    lhs = keys.key_notation(H.tool_config().collapse_key)
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

-- How many paints in a row may wait for a closing window before the panel gives up until
-- the next event.
H.MAX_LATER = 20

---Repaint now: the panel over its window (or hidden), and the list window if open.
function H.paint()
  if not H.attached then
    return
  end
  locale.sync()
  local panel = require("rpiv_todo.nvim.panel")
  if H.user_hidden then
    panel.hide()
  elseif panel.paint({ config = M.config, ov = H.overlay(), state = listing.shown_session() }) == "later" then
    -- A window or a buffer is closing: paint once that is over (a bounded number of times).
    H.later = (H.later or 0) + 1
    if H.later <= H.MAX_LATER then
      vim.schedule(M.request_paint)
    end
  else
    H.later = 0
  end
  local listwin = require("rpiv_todo.nvim.listwin")
  if listwin.window() then
    local lines, title = listing.list_text()
    if lines then
      listwin.update(lines, title)
    end
  end
end

-- Paint, but never let a failure escape into the tool call that triggered it; inside a
-- fast event (a luv callback) the API is off limits, so paint on the main loop.
function M.request_paint()
  if H.exiting then
    return -- windows and buffers are going away
  end
  if vim.in_fast_event() then
    vim.schedule(M.request_paint)
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

---`require("rpiv_todo").foreground` in Neovim (registered by plugin/rpiv_todo.lua): pin, follow, read.
---@param ... string|nil
---@return rpiv_todo.Session
function M.foreground(...)
  M.attach()
  local session = H.session()
  if select("#", ...) == 0 then
    return session.foreground()
  end
  shown.pin((...))
  M.request_paint()
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
  return shown.pinned()
end

---Put the panel over window {win}; nil follows the current window.
---@param win integer|nil
function M.set_win(win)
  if win ~= nil and (type(win) ~= "number" or not vim.api.nvim_win_is_valid(win)) then
    H.fail("win", "expected a valid window id or nil, " .. require("rpiv_todo.common").got(win))
  end
  M.config.win = win
  M.attach()
  M.request_paint()
end

---Would the panel show anything (the foreground list has a task to show)?
---@return boolean
function H.has_tasks()
  return #H.overlay():render(listing.shown_session(), 80) > 0
end

---rpiv_todo.nvim.toggle: collapse or expand the panel; with nothing to show, say so.
---@return boolean collapsed
function M.toggle()
  M.attach()
  locale.sync()
  if not H.has_tasks() then
    vim.notify(require("rpiv_todo.i18n").t("todos-empty"), vim.log.levels.INFO, { title = M.config.notify_title })
    return H.ov.collapsed
  end
  local collapsed = H.ov:toggle_collapse()
  M.request_paint()
  return collapsed
end

---Show every task and no summary row ({on} true), or go back to the
---`max_widget_lines` budget (false).
---@param on boolean
function M.set_expanded(on)
  M.attach()
  H.ov:set_expanded(on)
  M.request_paint()
end

---rpiv_todo.nvim.hide.
function M.hide()
  M.attach()
  H.user_hidden = true
  require("rpiv_todo.nvim.panel").hide()
end

---rpiv_todo.nvim.show.
function M.show()
  M.attach()
  H.user_hidden = false
  M.request_paint()
end

---rpiv_todo.nvim.todos.
---@return string text
---@return string level "info" | "error"
function M.todos()
  M.attach()
  locale.sync()
  local lines, title, text, level = listing.list_text()
  if lines == nil then
    local vim_level = level == "error" and vim.log.levels.ERROR or vim.log.levels.INFO
    vim.notify(text, vim_level, { title = M.config.notify_title })
  else
    require("rpiv_todo.nvim.listwin").open(lines, title)
  end
  return text, level
end

---Repaint now (a window moved or resized without an autocommand firing).
function M.refresh()
  M.attach()
  M.request_paint()
end

---rpiv_todo.nvim.window.
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
