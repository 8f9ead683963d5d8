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
H.inputs = nil -- v:lang and the variables above, as last handed to the chain

---Hand v:lang to the locale chain when it or the environment changed since the last call.
---@return boolean changed the inputs changed (the locale may have)
function M.sync()
  local lang = vim.v.lang
  if type(lang) ~= "string" then
    lang = ""
  end
  local inputs = { lang }
  for i, name in ipairs(H.LOCALE_ENV) do
    inputs[i + 1] = os.getenv(name) or ""
  end
  local key = table.concat(inputs, "\0")
  if key == H.inputs then
    return false
  end
  H.inputs = key
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
