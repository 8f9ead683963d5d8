-- rpiv_todo.i18n: UI chrome strings (overlay, /todos, status words) in the user's language.
-- Everything the model reads stays English; only what a person sees goes through here.
--
-- The messages are Fluent files compiled into the native core (locales/<code>/todo.ftl);
-- this module only decides which locale to ask for. The locale is resolved lazily on the
-- first use, through the chain
--   set_locale() / setup{ locale = ... } -> RPIV_TODO_LOCALE
--   -> $XDG_CONFIG_HOME/rpiv-i18n/locale.json -> LC_ALL, LC_MESSAGES, LANG -> "en"
-- and then cached; set_locale() switches at run time, and the next render uses it.
--
-- Message ids (the stable vocabulary of the Lua layer):
--   overlay-heading, overlay-more {count, completed, pending}, overlay-expand-hint {key},
--   overlay-collapsed, status-pending, status-in_progress, status-completed, status-deleted,
--   todos-completed {done, total}, todos-in-progress {count}, todos-pending {count},
--   todos-section-pending, todos-section-in-progress, todos-section-completed,
--   todos-empty, todos-noninteractive.
-- Counts must be passed as numbers: translations pick plural forms from them.

---@helptext rpiv_todo-locale verbatim
--- Without `locale`, the first of these that names a supported language wins:
---   1. $RPIV_TODO_LOCALE, e.g. "de" or "pt_BR.UTF-8";
---   2. `{"locale": "de"}` in $XDG_CONFIG_HOME/rpiv-i18n/locale.json
---      (~/.config when XDG_CONFIG_HOME is unset or relative); a malformed file
---      is ignored silently;
---   3. |v:lang| (|:language| messages) when it names a language; when it is
---      "C" or "POSIX" the environment decides (Neovim 0.10+ reports "C" when
---      $LANG names a locale that is not installed);
---   4. LC_ALL, then LC_MESSAGES, then LANG (the first one set decides; "C"
---      and "POSIX" mean English);
---   5. English.
--- Region-aware: pt_BR gives pt-BR, pt_PT gives pt, de_AT gives de. A
--- `:language messages` typed while Neovim runs repaints the panel as soon as
--- the command line closes (one run from a script or mapping applies at the
--- next repaint or |:Todos|). `require("rpiv_todo").locale()` returns the code
--- in use, and |:checkhealth| shows it with v:lang and the variables it was
--- chosen from.
---
--- |:TodosLanguage| picks the language and writes it to that file (item 2), so
--- it holds for every later start, here and in the other rpiv tools.

local M = {}
local H = {}

-- State: the locale set explicitly (nil: follow the chain), the chain's cached answer,
-- and the environment overrides handed to the chain (nil: the process environment).
H.explicit = nil
H.resolved = nil
H.env = nil

H.core = require("rpiv_todo.common").core

---Translate a message id with optional arguments, in the active locale.
---@param id string message id, e.g. "overlay-heading"
---@param args? table<string, string|number> Fluent variables; counts as numbers
---@return string
function M.t(id, args)
  return H.core().tr(M.locale(), id, args)
end

---The active locale code, e.g. "pt-BR".
---@return string
function M.locale()
  if H.explicit ~= nil then
    return H.explicit
  end
  if H.resolved == nil then
    H.resolved = H.core().resolve_locale(nil, H.env)
  end
  return H.resolved
end

---Switch the active locale; the next render uses it.
---@param code string one of `M.locales()`, e.g. "de" or "pt-BR"
function M.set_locale(code)
  local codes = M.locales()
  for _, c in ipairs(codes) do
    if c == code then
      H.explicit = code
      return
    end
  end
  error("(rpiv_todo) locale: expected one of " .. table.concat(codes, ", "), 0)
end

---Where rpiv-i18n keeps the chosen locale (the file the chain reads):
---`$XDG_CONFIG_HOME/rpiv-i18n/locale.json`, or `~/.config/rpiv-i18n/locale.json` when
---XDG_CONFIG_HOME is unset; nil when neither it nor HOME is set.
---@return string|nil
function M.locale_file()
  return H.core().locale_file(H.env)
end

---Write `code` to rpiv-i18n's locale file, atomically, keeping the file's other keys.
---Does not switch the active locale (set_locale does).
---@param code string one of `M.locales()`
---@return true|nil ok
---@return string|nil err names the file and what went wrong; nothing is written then
function M.save_locale(code)
  local path = M.locale_file()
  if path == nil then
    return nil, "rpiv-i18n/locale.json: no config directory (neither XDG_CONFIG_HOME nor HOME is set)"
  end
  return H.core().save_locale(path, code)
end

---Override environment variables the locale chain reads, e.g. `{ LANG = vim.v.lang }`
---from Neovim (a name mapped to `false` counts as unset; names not in the table are
---read from the process). Forgets the cached answer so the next use re-resolves.
---@param env? table<string, string|false> nil: the process environment only
function M.set_env(env)
  if env ~= nil and type(env) ~= "table" then
    error("(rpiv_todo) locale env: expected a table of environment variables or nil", 0)
  end
  H.env = env
  H.resolved = nil
end

---Forget the explicit locale and the cached resolution: the next use walks the chain again.
function M.reset()
  H.explicit = nil
  H.resolved = nil
end

---Every supported locale code.
---@return string[]
function M.locales()
  return H.core().locales()
end

---`require("rpiv_todo").set_locale(code, opts)`: switch to a known locale (and with
---`{ persist = true }` save it); true, or nil and why not.
---@param code string
---@param opts? { persist?: boolean }
---@return true|nil ok
---@return string|nil err
function M.switch(code, opts)
  opts = require("rpiv_todo.options_check").check(opts, {
    prefix = "set_locale.",
    names = { "persist" },
    checks = {
      persist = function(v)
        if type(v) ~= "boolean" then
          return "expected a boolean"
        end
      end,
    },
    not_table = "set_locale: expected a table of options { persist = boolean } or nil",
  })
  local persist = opts.persist == true
  local i18n = M
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

return M
