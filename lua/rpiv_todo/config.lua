-- rpiv_todo.config: the tool's own options, their checks and the live configuration every
-- module reads (`require("rpiv_todo").config` is `get()`). `require("rpiv_todo").setup()`
-- checks a call with `NAMES` and `checks` (and the editor's options in Neovim), then
-- `apply()` puts it in place. Nothing here loads another module until it is needed, so a
-- config calling setup({}) at startup pays for the facade and this file only.

local M = {}
local H = {}

---@return table rpiv_todo.guidance
function H.guidance()
  return require("rpiv_todo.guidance")
end

---@return table rpiv_todo.common
function H.common()
  return require("rpiv_todo.common")
end

---Defaults of every setup() key (`require("rpiv_todo").defaults`, built on first read) so
---an override can start from them; `setup()` never changes this table. Each key is
---documented once, in rpiv_todo.SetupOptions (types.lua).
---@return rpiv_todo.Config
function M.defaults()
  local common = H.common()
  return {
    guidance = H.guidance().defaults,
    max_widget_lines = common.defaults.max_widget_lines,
    collapse_key = common.defaults.collapse_key,
    overlay = {},
  }
end

-- What setup() recorded before anything read the configuration (nil: the defaults). The
-- first read builds the live table from it, so setup({}) at startup loads no other module.
H.recorded = nil
-- The live configuration, once built.
H.live = nil

---The live configuration (built on first read). The overlay and others read it at render
---time (`require("rpiv_todo").config`), so a later setup() takes effect on the next render.
---@return rpiv_todo.Config
function M.get()
  if H.live == nil then
    H.live = H.build()
  end
  return H.live
end

---@return rpiv_todo.Config
function H.build()
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

-- Functions called after every successful setup() with the new config (front ends that
-- repaint at once: a new locale, collapse key or layout). See M.on_setup.
H.setup_listeners = {}

---What checking the `overlay` key needs of the overlay: its layout (the defaults and their
---check) and its shipped themes; two small modules, loaded when the key is given, not the
---overlay package (its renderer, the live overlay and the native core stay unloaded).
---@return { default_layout: rpiv_todo.OverlayLayout, check_layout: fun(layout: any): boolean, string?, themes: table }
function H.overlay()
  local layout = require("rpiv_todo.overlay.layout")
  return {
    default_layout = layout.default_layout,
    check_layout = layout.check,
    themes = require("rpiv_todo.overlay.themes").themes,
  }
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

-- The overlay's settings from the last setup() (nil before one): see M.configure_overlay.
H.overlay_settings = nil

---Put the overlay settings of the last setup() into the overlay's renderer
---(rpiv_todo.overlay.render calls this when it loads; setup() when it is loaded already).
---@param render table rpiv_todo.overlay.render
function M.configure_overlay(render)
  local s = H.overlay_settings
  if s == nil then
    return
  end
  render.configure({ max_widget_lines = s.max_widget_lines, collapse_key = s.collapse_key })
  -- configure() skips nil values; an absent theme or layout means the default again.
  render.config.theme = s.theme
  render.config.layout = s.layout
end

-- The tallest panel setup accepts. Far beyond any screen (expanded mode shows everything),
-- and small enough that every flavour and host converts it exactly (1e300 did not).
H.MAX_WIDGET_LINES = 1000000

-- Every key of the tool's setup(), in the order the checks run.
M.NAMES = { "guidance", "max_widget_lines", "collapse_key", "locale", "overlay" }

-- The checks rpiv_todo.options_check runs on a given key: nil when fine, else what was
-- expected. guidance and overlay are checked as they are resolved (H.check_overlay and
-- rpiv_todo.guidance), in the same message shape.
M.checks = {
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

---Put the tool's options of a checked setup() call in place (an absent key takes its
---default; an absent `locale` keeps the one in use), then run the setup listeners. Every
---listener runs even when one raises; the first error is returned, not raised, so the
---caller finishes its own part first.
---@param opts table checked already (rpiv_todo.options_check with NAMES and checks)
---@return any first_err
function M.apply(opts)
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
  local live = H.live
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
  -- The overlay's own settings: kept here, and handed to the overlay's renderer when it is
  -- loaded already; a renderer loaded later takes them when it loads (overlay_settings),
  -- so setup() never loads the overlay package.
  local common = H.common()
  H.overlay_settings = {
    max_widget_lines = config.max_widget_lines or common.defaults.max_widget_lines,
    collapse_key = config.collapse_key or common.defaults.collapse_key,
    theme = theme,
    layout = layout,
  }
  local render = package.loaded["rpiv_todo.overlay.render"]
  if type(render) == "table" then
    M.configure_overlay(render)
  end
  -- Every listener runs even when one raises (the settings are in place already).
  local first_err
  for _, fn in ipairs(H.setup_listeners) do
    local ok, err = pcall(fn, M.get())
    if not ok and first_err == nil then
      first_err = err
    end
  end
  return first_err
end

---Call `fn(config)` after every successful setup() (a UI repaints with the new locale,
---key or layout at once). Returns a function that removes it. When one raises, the others
---still run and setup() then raises that first error.
---@param fn fun(config: rpiv_todo.Config)
---@return fun() remove
function M.on_setup(fn)
  if type(fn) ~= "function" then
    error("(rpiv_todo) on_setup: expected a function, " .. H.common().got(fn), 0)
  end
  return H.common().add_listener(H.setup_listeners, fn)
end

return M
