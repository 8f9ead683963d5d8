-- rpiv_todo.nvim.keys: the collapse key in Neovim's notation, and its mapping.
--
--   keys.key_notation("ctrl+shift+t")   --> "<C-S-t>"; nil for "off", "clear" or a bare
--                                           character (it would shadow typing)
--   keys.sync(lhs, fn)                  map lhs (or nothing, when nil) in normal and insert
--                                           mode, replacing the previous mapping
--   keys.unmap()                        remove the mapping
--   keys.mapped()                       the mapped key, or nil

---@helptext rpiv_todo-surprises-key verbatim
--- <C-S-t> needs an extended keyboard protocol.
---     Most terminals send CTRL-SHIFT-T exactly like CTRL-T, so Neovim never
---     sees <C-S-t> and CTRL-T keeps its own meaning (the tag stack). Terminals
---     with an extended keyboard protocol (kitty's, or xterm's modifyOtherKeys,
---     which foot, WezTerm, Ghostty and recent iTerm2 speak) send it. Elsewhere
---     use |:TodosToggle|, or pick another key: `collapse_key = "alt+t"`
---     (<M-t>), or map your own: `vim.keymap.set("n", "<leader>tt",
---     "<Cmd>TodosToggle<CR>")`.

local M = {}
local H = {}

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

H.mapped = nil -- { lhs = string, modes = string[] } of the collapse key mapping

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

---Remove the collapse key mapping, if any.
function M.unmap()
  local mapped = H.mapped
  if mapped then
    for _, mode in ipairs(mapped.modes) do
      pcall(vim.keymap.del, mode, mapped.lhs)
    end
    H.mapped = nil
  end
end

---Map `lhs` to `fn` in normal and insert mode (nil: map nothing), replacing the
---previous mapping; nothing happens when `lhs` is already the mapped key.
---@param lhs string|nil
---@param fn function
function M.sync(lhs, fn)
  if H.mapped and H.mapped.lhs == lhs then
    return
  end
  M.unmap()
  if lhs then
    local modes = { "n", "i" }
    vim.keymap.set(modes, lhs, fn, { silent = true, desc = "rpiv_todo: collapse or expand the todo overlay" })
    H.mapped = { lhs = lhs, modes = modes }
  end
end

---The mapped collapse key (Neovim notation), or nil when none is mapped.
---@return string|nil
function M.mapped()
  return H.mapped and H.mapped.lhs or nil
end

return M
