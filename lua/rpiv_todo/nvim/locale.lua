-- rpiv_todo.nvim.locale: hands Neovim's message locale (v:lang) to the locale chain.
--
-- The locale chain (rpiv_todo.i18n) reads RPIV_TODO_LOCALE, the rpiv-i18n file and
-- LC_ALL/LC_MESSAGES/LANG from the process. In Neovim, v:lang (`:language messages`) is
-- the message locale chosen for this editor, so when it names a language it stands in for
-- the POSIX variables. When it is "C", "POSIX" or "C.<codeset>" the environment decides:
-- Neovim 0.10+ reports "C" when $LANG names a locale that is not installed, yet $LANG
-- still says which language the person reads (and `:language messages C` itself sets
-- $LC_MESSAGES=C, which the chain then reads). The front end calls `sync()` before each
-- paint and :Todos, and after each command line (CmdlineLeave), so a `:language messages`
-- typed at run time repaints at once; only a change re-resolves.

local M = {}
local H = {}

H.LOCALE_ENV = { "RPIV_TODO_LOCALE", "XDG_CONFIG_HOME", "HOME", "LC_ALL", "LC_MESSAGES", "LANG" }
H.inputs = {} -- v:lang and the variables above, as last handed to the chain

---Hand v:lang to the locale chain when it or the environment changed since the last call
---(compared in place: a paint that changes nothing allocates nothing here).
---@return boolean changed the inputs changed (the locale may have)
function M.sync()
  local lang = vim.v.lang
  if type(lang) ~= "string" then
    lang = ""
  end
  local inputs = H.inputs
  local changed = inputs[1] ~= lang
  inputs[1] = lang
  for i = 1, #H.LOCALE_ENV do
    local value = os.getenv(H.LOCALE_ENV[i]) or ""
    if inputs[i + 1] ~= value then
      changed = true
      inputs[i + 1] = value
    end
  end
  if not changed then
    return false
  end
  local i18n = require("rpiv_todo.i18n")
  local base = lang:match("^[^.@]*")
  if base == "" or base == "C" or base == "POSIX" then
    pcall(i18n.set_env, nil)
  else
    pcall(i18n.set_env, { LC_ALL = false, LC_MESSAGES = lang })
  end
  return true
end

return M
