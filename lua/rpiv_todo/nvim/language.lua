-- rpiv_todo.nvim.language: the UI language picker.
--
--   :TodosLanguage [xx]   pick the UI language (vim.ui.select over the nine locales, or the
--                         code given); the pick is saved to rpiv-i18n's locale.json, which
--                         every later start reads

---@helptext :TodosLanguage verbatim
--- :TodosLanguage [{code}]
---                 Pick the language of the panel and |:Todos| from the nine
---                 (|vim.ui.select()|), or switch to {code} (de, en, es, fr,
---                 pt, pt-BR, ru, uk, zh; <Tab> completes). The panel repaints
---                 at once, and the pick is saved to rpiv-i18n's locale.json
---                 (|rpiv_todo-locale|) for every later start.

local M = {}
local H = {}

-- The nine locales as people find them in a list: the code, then the language's own name.
M.LANGUAGE_NAMES = {
  de = "Deutsch",
  en = "English",
  es = "Español",
  fr = "Français",
  pt = "Português",
  ["pt-BR"] = "Português (Brasil)",
  ru = "Русский",
  uk = "Українська",
  zh = "中文",
}

---@param msg string
---@param level integer
function H.notify(msg, level)
  vim.notify(msg, level, { title = require("rpiv_todo.nvim.options").config.notify_title })
end

---Switch the UI language to `code` and save the pick; tell the user either way.
---@param code string
---@return boolean ok
function M.pick(code)
  local ok, err = require("rpiv_todo.i18n").switch(code, { persist = true })
  local frontend = require("rpiv_todo.nvim.frontend")
  if frontend.attached() then
    frontend.refresh()
  end
  if ok then
    H.notify(
      "language: " .. code .. " (saved to " .. tostring(require("rpiv_todo.i18n").locale_file()) .. ")",
      vim.log.levels.INFO
    )
    return true
  end
  H.notify("language: " .. tostring(err), vim.log.levels.WARN)
  return false
end

---:TodosLanguage: with a code, switch to it; without, offer the nine through vim.ui.select.
---@param args string
function M.language_command(args)
  args = (args or ""):gsub("^%s+", ""):gsub("%s+$", "")
  if args ~= "" then
    M.pick(args)
    return
  end
  local current = require("rpiv_todo.i18n").locale()
  vim.ui.select(require("rpiv_todo.i18n").locales(), {
    prompt = "rpiv_todo language",
    format_item = function(code)
      local name = M.LANGUAGE_NAMES[code] or code
      return code .. "  " .. name .. (code == current and "  (current)" or "")
    end,
  }, function(choice)
    if choice ~= nil then
      M.pick(choice)
    end
  end)
end

---Completion of :TodosLanguage: the locale codes starting with `arglead`; never raises.
---@param arglead string
---@return string[]
function M.complete_language(arglead)
  local ok, codes = pcall(function()
    return require("rpiv_todo.i18n").locales()
  end)
  local out = {}
  for _, c in ipairs(ok and codes or {}) do
    if c:sub(1, #(arglead or "")) == (arglead or "") then
      out[#out + 1] = c
    end
  end
  return out
end

return M
