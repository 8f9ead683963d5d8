-- rpiv_todo: the `todo` tool of an LLM agent, for hosts that script through Lua.
--
--   local todo = require("rpiv_todo")
--   todo.setup({ guidance = function(d) d.prompt_guidelines[1] = "..." return d end })
--   host.register_tool(todo.tool())                 -- name, schema, prompt text, execute
--   local text, level = todo.command.todos(todo.session("default"), { interactive = true })
--
-- This file holds the configuration every other module reads (`M.config`) and re-exports the
-- public API. The tool, the sessions and the overlay load on first use (fields listed in
-- H.LAZY, filled in by the metatable at the end), and `setup()` only checks and records its
-- options. The native core (through `rpiv_todo.native`, which checks its version) loads at
-- require time outside Neovim; in Neovim once startup is over (see the end of the file), so
-- a config calling setup() at startup pays for this one file.

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

-- Modules behind the fields of M, loaded when a field is first read.
-- `core`: the one guarded load of the native module (rpiv_todo.native), which says how to
-- build the library when it is missing and refuses a stale build.
H.LAZY = {
  core = "rpiv_todo.native",
  guidance = "rpiv_todo.guidance",
  command = "rpiv_todo.command",
  sessions = "rpiv_todo.session",
  overlay = "rpiv_todo.overlay",
}

-- Lifecycle a host drives (see rpiv_todo.session): fields of M read from the session layer.
H.SESSION_FIELDS = {
  on_session_start = true,
  on_compaction = true,
  on_branch_change = true,
  shutdown = true,
  listen = true,
  on_listener_error = true,
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

---Defaults, also the documentation of every setup() key. Exported (`M.defaults`, built on
---first read) so an override can start from them; `setup()` never changes this table.
---@return rpiv_todo.Config
function H.defaults()
  local common = H.common()
  return {
    -- Prompt text: { prompt_snippet = string, prompt_guidelines = { string... } } (fields
    -- replace the defaults, the list whole) or function(defaults) -> that table.
    guidance = H.guidance().defaults,
    -- Lines the overlay may use, heading included; at least 3.
    max_widget_lines = common.defaults.max_widget_lines,
    -- Key that collapses/expands the overlay (modifiers ctrl/shift/alt/super + one key), or "off".
    collapse_key = common.defaults.collapse_key,
    -- Overlay look: layout functions heading/row/summary/collapsed_hint/spacer, glyphs, theme.
    overlay = {},
  }
end

-- What setup() recorded before anything read `M.config` (nil: the defaults). The first read
-- builds the live table from it, so setup({}) at startup loads no other module.
H.recorded = nil

---The live configuration (`M.config`, built on first read). The overlay and others read it
---at render time (`require("rpiv_todo").config`), so a later setup() takes effect on the
---next render.
---@return rpiv_todo.Config
function H.config()
  local recorded = H.recorded or {}
  H.recorded = nil
  return {
    guidance = recorded.guidance or H.guidance().copy_defaults(),
    max_widget_lines = recorded.max_widget_lines or H.common().defaults.max_widget_lines,
    collapse_key = recorded.collapse_key or H.common().defaults.collapse_key,
    overlay = recorded.overlay or {},
  }
end

---@param key string
---@param expected string
function H.fail(key, expected)
  error("(rpiv_todo) " .. key .. ": " .. expected, 0)
end

---`, got <type> <value>`: what an error message adds after what it expected.
---@param value any
---@return string
function H.got(value)
  return ", " .. H.common().got(value)
end

-- Functions called after every successful setup() with the new config (front ends that
-- repaint at once: a new locale, collapse key or layout). See M.on_setup.
H.setup_listeners = {}

---The overlay module (loaded on demand: it is only needed by setup and the UI).
---@return table
function H.overlay()
  return require("rpiv_todo.overlay")
end

---`overlay = { <layout overrides>, theme = ... }` or `overlay = function(default_layout)`.
---Returns the theme and the layout override, both nil when absent.
---@param value any
---@return table|string|nil theme, table|function|nil layout
function H.check_overlay(value)
  local overlay = H.overlay()
  if type(value) == "function" then
    -- The overlay calls it with the default layout when it renders; call it once now so
    -- a bad result is reported here, by key, rather than at the first render.
    local called, produced = pcall(value, overlay.default_layout)
    if not called then
      H.fail("overlay", "the function raised an error: " .. tostring(produced))
    end
    local ok, what = overlay.check_layout(produced)
    if not ok then
      H.fail("overlay", "the function returned an invalid layout: " .. tostring(what))
    end
    return nil, value
  end
  if type(value) ~= "table" then
    H.fail(
      "overlay",
      "expected a table of layout overrides (heading, row, summary, collapsed_hint, spacer, glyphs) and/or theme, or a function(default_layout) returning the overrides"
    )
  end
  local theme = value.theme
  if theme ~= nil then
    if type(theme) == "string" then
      if type(overlay.themes[theme]) ~= "table" then
        H.fail("overlay", "theme: expected a theme table or the name of a shipped theme (plain, ansi, segments)")
      end
    elseif type(theme) == "table" then
      for _, fn in ipairs({ "fg", "bold", "strikethrough" }) do
        if type(theme[fn]) ~= "function" then
          H.fail("overlay", "theme." .. fn .. ": expected a function")
        end
      end
      if theme.finish ~= nil and type(theme.finish) ~= "function" then
        H.fail("overlay", "theme.finish: expected a function")
      end
    else
      H.fail("overlay", "theme: expected a theme table { fg, bold, strikethrough } or a theme name")
    end
  end
  local layout = nil
  for k, v in pairs(value) do
    if k ~= "theme" then
      layout = layout or {}
      layout[k] = v
    end
  end
  if layout ~= nil then
    local ok, what = overlay.check_layout(layout)
    if not ok then
      H.fail("overlay", tostring(what))
    end
  end
  return theme, layout
end

-- The tallest panel setup accepts. Far beyond any screen (expanded mode shows everything),
-- and small enough that every flavour and host converts it exactly (1e300 did not).
H.MAX_WIDGET_LINES = 1000000

-- Every key of setup(), in the order the checks run.
H.OPTION_NAMES = { "guidance", "max_widget_lines", "collapse_key", "locale", "overlay" }

-- The checks common.check_options runs on a given key: nil when fine, else what was
-- expected. guidance and overlay are checked as they are resolved (H.check_overlay and
-- rpiv_todo.guidance), in the same message shape.
H.checks = {
  max_widget_lines = function(lines)
    if type(lines) ~= "number" or lines ~= math.floor(lines) or lines < 3 or lines > H.MAX_WIDGET_LINES then
      return "expected an integer >= 3 and <= " .. H.MAX_WIDGET_LINES
    end
  end,
  collapse_key = function(key)
    -- Blank is lenient at render time (it means the default) but a mistake in a config.
    if type(key) ~= "string" or not key:find("%S") or require("rpiv_todo.overlay.keys").normalize(key) == nil then
      return 'expected [ctrl+][shift+][alt+][super+]<character or named key>, e.g. "ctrl+shift+t", or "off"'
    end
  end,
  locale = function(locale)
    if type(locale) ~= "string" then
      return 'expected a locale code string such as "de" or "pt-BR"'
    end
  end,
}

---Configures the tool. Every key is optional; a wrong type, an invalid value or an
---unknown key raises `(rpiv_todo) <key>: <what was expected>, got <what came>`, e.g.
---`(rpiv_todo) max_widget_lines: expected an integer >= 3 and <= 1000000, got string "x"`,
---and changes nothing. An absent key takes its default (an absent `locale` keeps the one
---in use). The panel repaints with the new settings at once.
---@param opts? rpiv_todo.SetupOptions
---@return table the module
function M.setup(opts)
  -- An empty table needs no check, so setup({}) at startup loads no other module.
  if opts == nil then
    opts = {}
  elseif type(opts) ~= "table" or next(opts) ~= nil then
    opts = H.common().check_options(opts, H.OPTION_NAMES, H.checks)
  end
  -- Only what was given is resolved (and only that loads a module); an absent key means
  -- its default, filled in below.
  local config = {
    guidance = opts.guidance ~= nil and H.guidance().resolve(opts.guidance, "guidance") or nil,
    overlay = {},
  }
  local theme, layout = nil, nil
  config.max_widget_lines = opts.max_widget_lines
  if opts.collapse_key ~= nil then
    config.collapse_key = require("rpiv_todo.overlay.keys").normalize(opts.collapse_key)
  end
  if opts.overlay ~= nil then
    theme, layout = H.check_overlay(opts.overlay)
    config.overlay = opts.overlay
  end
  -- The locale goes last: it is the one change outside this table, made only when
  -- everything else was valid.
  local locale = opts.locale
  if locale ~= nil then
    local ok, err = pcall(require("rpiv_todo.i18n").set_locale, locale)
    if not ok then
      local msg = tostring(err)
      if msg:find("(rpiv_todo) locale:", 1, true) then
        error(msg, 0)
      end
      H.fail("locale", msg)
    end
  end
  local live = rawget(M, "config")
  if live == nil then
    -- Nothing has read the configuration yet: record it; the first read builds it.
    H.recorded = config
  else
    -- Update in place: modules holding M.config see the new values.
    config.guidance = config.guidance or H.guidance().copy_defaults()
    config.max_widget_lines = config.max_widget_lines or H.common().defaults.max_widget_lines
    config.collapse_key = config.collapse_key or H.common().defaults.collapse_key
    for k, v in pairs(config) do
      live[k] = v
    end
  end
  -- The overlay's own settings. An overlay not loaded yet starts from the defaults, so
  -- setup() loads it only to set something else.
  local custom = config.max_widget_lines ~= nil or config.collapse_key ~= nil or theme ~= nil or layout ~= nil
  if custom or package.loaded["rpiv_todo.overlay"] ~= nil then
    local common = H.common()
    local overlay = H.overlay()
    overlay.configure({
      max_widget_lines = config.max_widget_lines or common.defaults.max_widget_lines,
      collapse_key = config.collapse_key or common.defaults.collapse_key,
    })
    -- configure() skips nil values; an absent theme or layout means the default again.
    overlay.config.theme = theme
    overlay.config.layout = layout
  end
  -- Every listener runs even when one raises (the settings are in place already); the
  -- first error is then raised, so the host sees its callback's fault.
  local first_err
  for _, fn in ipairs(H.setup_listeners) do
    local ok, err = pcall(fn, M.config)
    if not ok and first_err == nil then
      first_err = err
    end
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
  if type(fn) ~= "function" then
    error("(rpiv_todo) on_setup: expected a function" .. H.got(fn), 0)
  end
  return H.common().add_listener(H.setup_listeners, fn)
end

---@helptext rpiv_todo-lua
---The tool's own module, `local todo = require("rpiv_todo")`, is the same in every
---host (Neovim, another Lua host, a Rust host through mlua); the README's "API
---reference" has the rest (sessions, the overlay, the native core).

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
  if type(opts) ~= "table" then
    H.fail("tool", "expected a table of options { strict = boolean } or nil")
  end
  for k in pairs(opts) do
    if k ~= "strict" then
      H.fail("tool", tostring(k) .. ": unknown option (expected strict)")
    end
  end
  if opts.strict ~= nil and type(opts.strict) ~= "boolean" then
    H.fail("tool", "strict: expected a boolean")
  end
  return tool.spec(M.config.guidance, opts.strict == true)
end

---End-of-turn reminder for the model when the turn ends with tasks left in_progress:
---a short English text naming them, or nil when nothing is in progress. A host injects it
---into the conversation (codecompanion: the adapter does; avante: see the README).
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

---Name the session the UI shows (or, without an argument, read it). Returns that session.
---In Neovim this pins the panel's session, like |rpiv_todo.nvim.foreground()|.
---@param id? string
---@return rpiv_todo.Session
function M.foreground(id)
  return H.session().foreground(id)
end

---Keep a live overlay (`todo.overlay.new()`) in step with the sessions: it forgets which
---completed tasks it showed when the foreground list is replayed, shut down, or another
---session comes to the foreground. Returns a function that detaches it.
---@param ov rpiv_todo.Overlay
---@return fun() detach
function M.attach_overlay(ov)
  if type(ov) ~= "table" or type(ov.reset) ~= "function" then
    error("(rpiv_todo) attach_overlay: expected an overlay from todo.overlay.new()", 0)
  end
  local session = H.session()
  return session.listen(function(event, id)
    if event == "foreground" or (event ~= "executed" and id == session.foreground_id()) then
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
  if opts ~= nil and type(opts) ~= "table" then
    H.fail("set_locale", "expected a table of options { persist = boolean } or nil")
  end
  local persist = false
  if opts ~= nil then
    for k in pairs(opts) do
      if k ~= "persist" then
        H.fail("set_locale." .. tostring(k), "unknown option (expected persist)")
      end
    end
    if opts.persist ~= nil and type(opts.persist) ~= "boolean" then
      H.fail("set_locale.persist", "expected a boolean")
    end
    persist = opts.persist == true
  end
  local i18n = require("rpiv_todo.i18n")
  local known = false
  for _, c in ipairs(i18n.locales()) do
    known = known or c == code
  end
  if not known then
    local shown = type(code) == "string" and string.format("%q", code) or tostring(code)
    return nil, "unknown locale " .. shown .. " (expected one of " .. table.concat(i18n.locales(), ", ") .. ")"
  end
  i18n.set_locale(code)
  if persist then
    return i18n.save_locale(code)
  end
  return true
end

-- The lazy fields: each is loaded on first read and kept. (`todo.overlay` was lazy before
-- the rest: the overlay reads `require("rpiv_todo").config`, and a lazy field keeps the
-- two modules from requiring each other while loading.)
setmetatable(M, {
  __index = function(t, k)
    local value
    if H.LAZY[k] then
      value = require(H.LAZY[k])
    elseif k == "version" then
      -- The Lua scripts' version, which the native core matches.
      value = require("rpiv_todo.native").version
    elseif k == "defaults" then
      value = H.defaults()
    elseif k == "config" then
      value = H.config()
    elseif H.SESSION_FIELDS[k] then
      value = H.session()[k]
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
-- first tool call.
H.vim = rawget(_G, "vim")
if type(H.vim) == "table" and type(H.vim.schedule) == "function" then
  H.vim.schedule(function()
    local ok, err = pcall(require, "rpiv_todo.native")
    if not ok then
      H.vim.notify(tostring(err), H.vim.log.levels.ERROR, { title = "rpiv_todo" })
    end
  end)
else
  require("rpiv_todo.native")
end

return M
