-- rpiv_todo.nvim.options: every option of the editor front end, declared once with its
-- default, its check and its doc line (the `---` lines of rpiv_todo.NvimOptions, from which
-- the help is generated). `require("rpiv_todo.nvim").setup(opts)` runs `set(opts)`, then
-- `apply()`. The tool's own options go to require("rpiv_todo").setup.

local common = require("rpiv_todo.common")

local M = {}
local H = {}

---The items of `a`, then those of `b`.
---@param a string[]
---@param b string[]
---@return string[]
function H.concat(a, b)
  local out = {}
  for _, x in ipairs(a) do
    out[#out + 1] = x
  end
  for _, x in ipairs(b) do
    out[#out + 1] = x
  end
  return out
end

---@class rpiv_todo.NvimOptions
---Window the panel sits over: a window id, a function returning one, or nil (default)
---for the current window at each repaint.
---@field win? integer|fun(): integer window the panel sits over; nil: the current window at paint time
---Where the panel sits in its window: "bottom-right" (default), "top-right",
---"bottom-left", "top-left", or the middle of an edge, "bottom" or "top".
---@field position? "bottom-right"|"top-right"|"bottom-left"|"top-left"|"bottom"|"top" corner or edge of that window
---"none" (default) or any border |nvim_open_win()| takes ("single", "rounded", a
---list of characters).
---@field border? string|table a border for nvim_open_win ("none", "single", "rounded", ...)
---0 (default, opaque) to 100; see 'winblend'.
---@field winblend? integer 0-100, transparency of the panel
---The widest the panel gets: columns (e.g. 60), or a fraction of its window (0.5).
---Default nil: the window's width. Longer rows are cut with "…".
---@field max_width? integer|number|nil columns, or a fraction of the window (0 < x <= 1); nil: the window's width
---Blank columns left and right of the text. Default 1.
---@field padding? integer blank columns left and right of the text
---Move out of the cursor line's way. Default true.
---@field avoid_cursor? boolean move out of the way of the cursor line
---Windows the panel never sits over: a table `{ filetypes = {...}, buftypes =
---{...} }` (default: help, checkhealth, qf, TelescopePrompt, lazy, mason, rpiv_todo,
---and the chat windows of every agent front end rpiv_todo has an adapter for:
---codecompanion, Avante, AvanteInput, AvanteSelectedFiles, AvanteSelectedCode,
---AvanteTodos, AvantePromptInput, AvanteConfirm; buftypes help, quickfix, prompt), or a
---function(win, buf) returning true for a window to skip. Floating
---windows are always skipped. `exclude = {}` puts it over any window.
---@field exclude? table|fun(win: integer, buf: integer): boolean windows the panel does not sit over
---Stacking order of the floating window. Default 60.
---@field zindex? integer stacking order of the floating window
---Map `collapse_key` to |:TodosToggle| in normal and insert mode. Default true.
---A key without a modifier that types a character ("t") is never mapped.
---@field map_collapse_key? boolean map rpiv_todo's collapse_key to :TodosToggle
---Title of the notifications. Default "Todos".
---@field notify_title? string title passed to vim.notify
---Keep each session's list on disk so that it survives an editor restart: true,
---or false (default: nothing is read or written). See |rpiv_todo-persist|.
---@field persist? boolean
---With `persist`, saved lists not changed for this many days are removed (checked at
---startup, at most once a day). Default 30; 0 keeps them forever. See |:Todos-prune|.
---@field persist_max_age_days? integer

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
  -- (win, buf) returning true to skip one. Floating windows are always skipped. The
  -- agents' chat windows come from the adapters (each declares its `chat_filetypes`).
  exclude = {
    filetypes = H.concat(
      { "help", "checkhealth", "qf", "TelescopePrompt", "lazy", "mason", "rpiv_todo" },
      require("rpiv_todo.adapters.common").chat_filetypes()
    ),
    buftypes = { "help", "quickfix", "prompt" },
  },
  -- Above ordinary floats (50) so a chat window does not cover the list.
  zindex = 60,
  -- Map the tool's collapse_key (e.g. ctrl+shift+t -> <C-S-t>) to the toggle. Keys that
  -- type a character without a modifier are never mapped: they would shadow editing.
  map_collapse_key = true,
  -- The title of the notifications (used by notification plugins).
  notify_title = "Todos",
  -- Keep each session's list on disk (rpiv_todo.nvim.persist); false reads and writes
  -- nothing.
  persist = false,
  -- With persist, saved lists unchanged for this many days go (0: never).
  persist_max_age_days = 30,
}

H.POSITIONS = {
  ["bottom-right"] = true,
  ["top-right"] = true,
  ["bottom-left"] = true,
  ["top-left"] = true,
  bottom = true,
  top = true,
}

---@param v any
---@return boolean
function H.is_int(v)
  return type(v) == "number" and v == math.floor(v) and v > -math.huge and v < math.huge
end

---@param v any
---@return string|nil
function H.boolean(v)
  if type(v) ~= "boolean" then
    return "expected a boolean"
  end
end

---@param low integer
---@param high integer
---@return fun(v: any): string|nil
function H.int_between(low, high)
  return function(v)
    if not H.is_int(v) or v < low or v > high then
      return "expected an integer from " .. low .. " to " .. high
    end
  end
end

-- Checks of each option: a function returning nil when the value is fine, or what was
-- expected.
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
  winblend = H.int_between(0, 100),
  max_width = function(v)
    if v ~= nil and (type(v) ~= "number" or v <= 0 or v ~= v or v == math.huge or (v > 1 and not H.is_int(v))) then
      return "expected a number of columns, a fraction of the window (0 < x <= 1), or nil"
    end
  end,
  padding = H.int_between(0, 8),
  avoid_cursor = H.boolean,
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
        return k .. ": expected a list of strings, " .. common.got(list)
      end
      for _, item in ipairs(list) do
        if type(item) ~= "string" then
          return k .. ": expected a list of strings, " .. common.got(item)
        end
      end
    end
  end,
  zindex = function(v)
    if not H.is_int(v) or v < 1 then
      return "expected an integer >= 1"
    end
  end,
  map_collapse_key = H.boolean,
  notify_title = function(v)
    if type(v) ~= "string" then
      return "expected a string"
    end
  end,
  persist = H.boolean,
  persist_max_age_days = function(v)
    if type(v) ~= "number" or v < 0 or v ~= math.floor(v) then
      return "expected a whole number of days >= 0 (0: never remove old lists)"
    end
  end,
}

-- What setup() does with an option once the new config is in place (after the checks of
-- every option passed): name -> fn(value, config).
---@type table<string, fun(value: any, config: table)|nil>
H.appliers = {
  persist = function(value, config)
    require("rpiv_todo.nvim.persist").apply(value == true, config)
  end,
}

-- Every option's name, in a fixed order. Loops over the options go through this list, not
-- pairs(): the LuaJIT of Neovim 0.7.2 was seen to skip a key in a compiled pairs() loop
-- (see overlay/layout.lua), and a skipped option would go unchecked or lose its default.
H.names = {}
for name in pairs(H.checks) do
  H.names[#H.names + 1] = name
end
table.sort(H.names)

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

-- The options in force (`require("rpiv_todo.nvim").config` is this table).
M.config = {}
for _, name in ipairs(H.names) do
  M.config[name] = H.copy(M.defaults[name])
end

---Add an option of the editor front end (for a user's or another plugin's extension,
---before setup). `apply(value, config)`, when given, runs at every setup() once the new
---config is in place (after the checks of every option passed).
---@param name string
---@param default any
---@param check fun(value: any): string|nil nil when fine, else what was expected
---@param apply? fun(value: any, config: table)
function M.register(name, default, check, apply)
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

-- Options whose nil is a value of its own (checked like any other).
H.NIL_CHECKED = { win = true, max_width = true }

---Check every option of `opts`, then put them in the config (absent ones take their
---defaults). Raises `(rpiv_todo) nvim.<key>: expected …, got …` and changes nothing
---when one is wrong; unknown keys are reported.
---@param opts? rpiv_todo.NvimOptions
function M.set(opts)
  opts = common.check_options(opts, H.names, H.checks, "nvim.", H.NIL_CHECKED)
  for _, k in ipairs(H.names) do
    local v = opts[k]
    if v == nil then
      v = H.copy(M.defaults[k])
    end
    M.config[k] = v
  end
end

---Run what each option does once set (its `apply`), in the options' order.
function M.apply()
  for _, name in ipairs(H.names) do
    local apply = H.appliers[name]
    if apply then
      apply(M.config[name], M.config)
    end
  end
end

return M
