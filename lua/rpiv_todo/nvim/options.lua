-- rpiv_todo.nvim.options: every option of the editor front end, declared once with its
-- default and its check, and documented once (the `---` lines of rpiv_todo.NvimOptions, from
-- which the help is generated). `require("rpiv_todo").setup(opts)` checks them with the
-- tool's own (`merged_spec`), hands them over (`split`), and rpiv_todo.nvim.setup runs
-- `set(opts)`, then `apply()`. This file requires nothing of the front end.

---@helptext rpiv_todo-panel-place verbatim
--- Where it sits                                         *rpiv_todo-panel-place*
--- Over the current window, in the corner `position` names; bottom-right by
--- default, because that covers the least: code and prose are left-aligned, so
--- the ends of lines on the right are mostly empty, and the top of the window,
--- where you read from, stays clear. It is never wider than that window
--- (rows are cut with "…"), and it moves with the windows: on |WinEnter|,
--- |WinResized| (Neovim 0.9+; before that |WinScrolled|, which 0.7 and 0.8 also
--- fire on a size change), |WinClosed|, |TabEnter|, |VimResized| and when a
--- window shows another buffer. `:only` or closing its window does not lose it.
---
--- It does not sit over help, health, quickfix or prompt windows, nor over the
--- chat input of codecompanion or avante (see `exclude` in
--- |rpiv_todo.setup()|): when you are in one of those it stays over the
--- window you were in (or the largest other one).
---
--- It never covers the cursor line. When the cursor comes under it (`L`, `G`,
--- typing on the last lines), it moves to the other edge (bottom <-> top), and
--- back once its own place is free again. In a window too short for either
--- edge it takes the larger side of the cursor and shows fewer rows (the
--- summary row says how many are left out); with no room at all it hides.
--- `avoid_cursor = false` keeps it in place.
---
--- Looks: `border`, `winblend`, `max_width` and `padding` in
--- |rpiv_todo.setup()|, the colours in |rpiv_todo-highlights|, the text of each
--- line through `overlay`.

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

-- Files of adapters/ that are not adapters.
H.NOT_ADAPTERS = { common = true, options = true }

---The filetypes of every adapter's chat windows (each adapter's `chat_filetypes`), in the
---adapters' name order; the panel keeps off them by default. Adapters are found on
---'runtimepath' (lua/rpiv_todo/adapters/*.lua); one that fails to load adds nothing.
---@return string[]
function M.chat_filetypes()
  local names, seen = {}, {}
  for _, path in ipairs(vim.api.nvim_get_runtime_file("lua/rpiv_todo/adapters/*.lua", true)) do
    local name = path:match("([^/\\]+)%.lua$")
    if name ~= nil and not H.NOT_ADAPTERS[name] and not seen[name] then
      seen[name] = true
      names[#names + 1] = name
    end
  end
  table.sort(names)
  local out = {}
  for _, name in ipairs(names) do
    local ok, adapter = pcall(require, "rpiv_todo.adapters." .. name)
    if ok and type(adapter) == "table" and type(adapter.chat_filetypes) == "table" then
      for _, ft in ipairs(adapter.chat_filetypes) do
        if type(ft) == "string" then
          out[#out + 1] = ft
        end
      end
    end
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

-- The default of each option (what each does: rpiv_todo.NvimOptions above).
M.defaults = {
  win = nil,
  position = "bottom-right",
  border = "none",
  winblend = 0,
  max_width = nil,
  padding = 1,
  avoid_cursor = true,
  exclude = nil, -- H.default_exclude(), below
  zindex = 60,
  map_collapse_key = true,
  notify_title = "Todos",
  persist = false,
  persist_max_age_days = 30,
}

-- The editor's own windows the panel keeps off; the agents' chat windows are added from
-- the adapters (each declares `chat_filetypes`).
H.OWN_FILETYPES = { "help", "checkhealth", "qf", "TelescopePrompt", "lazy", "mason", "rpiv_todo" }

---The default `exclude`, a table of its own. Its `filetypes` are filled in when first read
---(the panel's first paint, not setup()): only then are the adapters loaded to ask them.
---@return table
function H.default_exclude()
  return setmetatable({ buftypes = { "help", "quickfix", "prompt" } }, {
    __index = function(t, k)
      if k ~= "filetypes" then
        return nil
      end
      H.chat_fts = H.chat_fts or M.chat_filetypes()
      local fts = H.concat(H.OWN_FILETYPES, H.chat_fts)
      rawset(t, "filetypes", fts)
      return fts
    end,
  })
end
M.defaults.exclude = H.default_exclude()

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
-- every option passed): name -> fn(value, config). `persist` is applied by
-- rpiv_todo.nvim.setup.
---@type table<string, fun(value: any, config: table)|nil>
H.appliers = {}

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
  if v == M.defaults.exclude then
    return H.default_exclude()
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

---The spec of rpiv_todo.options_check for these options (`prefix` before each key).
---@param prefix? string
---@return rpiv_todo.OptionsSpec
function M.spec(prefix)
  return { names = H.names, checks = H.checks, nil_checked = H.NIL_CHECKED, prefix = prefix, got = true }
end

---`spec` (the tool's own options) with these added after its names.
---@param spec rpiv_todo.OptionsSpec
---@return rpiv_todo.OptionsSpec
function M.merged_spec(spec)
  local checks = {}
  for k, v in pairs(spec.checks or {}) do
    checks[k] = v
  end
  for k, v in pairs(H.checks) do
    checks[k] = v
  end
  local merged = M.spec(spec.prefix)
  merged.names = H.concat(spec.names, H.names)
  merged.checks = checks
  return merged
end

---A setup() table split in two: the tool's keys, and these (nil when it has none).
---@param opts table
---@return table tool
---@return table|nil editor
function M.split(opts)
  local tool, editor = {}, nil
  for k, v in pairs(opts) do
    if H.checks[k] ~= nil then
      editor = editor or {}
      editor[k] = v
    else
      tool[k] = v
    end
  end
  return tool, editor
end

---Check every option of `opts`, then put them in the config (absent ones take their
---defaults). Raises `(rpiv_todo) <prefix><key>: expected …, got …` and changes nothing
---when one is wrong; unknown keys are reported.
---@param opts? rpiv_todo.NvimOptions
---@param prefix? string before each key in a message ("nvim." for the old setup)
function M.set(opts, prefix)
  opts = require("rpiv_todo.options_check").check(opts, M.spec(prefix))
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
