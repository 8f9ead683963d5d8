-- rpiv_todo.nvim.panelbuf: the panel's scratch buffer: the rendered lines as text and
-- highlight ranges, written where they changed.

local M = {}
local H = {}

H.ns = vim.api.nvim_create_namespace("rpiv_todo")
H.buf = nil -- the scratch buffer

---Is this Neovim 0.8 or later (asked once: a Vimscript call costs on every paint)?
---@return boolean
function M.has_08()
  if H.has_08 == nil then
    H.has_08 = vim.fn.has("nvim-0.8") == 1
  end
  return H.has_08
end

---@param handle integer
---@param kind "win"|"buf"
---@param name string
---@param value any
function M.set_option(handle, kind, name, value)
  -- nvim_set_option_value takes win/buf from 0.8 on; the older setters are what 0.7 has.
  if M.has_08() then
    vim.api.nvim_set_option_value(name, value, { [kind] = handle })
  elseif kind == "win" then
    vim.api.nvim_win_set_option(handle, name, value)
  else
    vim.api.nvim_buf_set_option(handle, name, value)
  end
end

---Plain text and highlight ranges of one segments line, `pad` spaces on each side.
---@param line table list of { text, group, bold?, strikethrough? }
---@param pad integer
---@return string text
---@return table[] ranges { group, start_col, end_col } in bytes
function M.flatten(line, pad)
  local lead = string.rep(" ", pad)
  local parts, ranges, col = { lead }, {}, #lead
  for i = 1, #line do
    local seg = line[i]
    local text = seg[1]
    parts[#parts + 1] = text
    local stop = col + #text
    if seg[2] then
      ranges[#ranges + 1] = { seg[2], col, stop }
    end
    if seg.bold then
      ranges[#ranges + 1] = { "RpivTodoBold", col, stop }
    end
    if seg.strikethrough then
      ranges[#ranges + 1] = { "RpivTodoStrikethrough", col, stop }
    end
    col = stop
  end
  parts[#parts + 1] = lead
  return table.concat(parts), ranges
end

-- What the buffer holds (`{ buf, texts, ranges }`): a paint writes only the lines that
-- changed.
H.shown = nil

---Are two lists of highlight ranges the same?
---@param a table[]
---@param b table[]|nil
---@return boolean
function H.same_ranges(a, b)
  if b == nil or #a ~= #b then
    return false
  end
  for i = 1, #a do
    local x, y = a[i], b[i]
    if x[1] ~= y[1] or x[2] ~= y[2] or x[3] ~= y[3] then
      return false
    end
  end
  return true
end

---Put `texts` (and their highlight ranges) in `buf`: every line when the count changed or
---the buffer is new, else only the lines that differ from what it holds.
---@param buf integer
---@param texts string[]
---@param ranges table[][]
function M.write(buf, texts, ranges)
  local api = vim.api
  local shown = H.shown
  local whole = shown == nil or shown.buf ~= buf or #shown.texts ~= #texts
  if whole then
    api.nvim_buf_set_lines(buf, 0, -1, false, texts)
    api.nvim_buf_clear_namespace(buf, H.ns, 0, -1)
  end
  for i = 1, #texts do
    if whole or texts[i] ~= shown.texts[i] or not H.same_ranges(ranges[i], shown.ranges[i]) then
      if not whole then
        api.nvim_buf_set_lines(buf, i - 1, i, false, { texts[i] })
        api.nvim_buf_clear_namespace(buf, H.ns, i - 1, i)
      end
      for _, r in ipairs(ranges[i]) do
        -- Extmark highlights combine, so bold and strikethrough layer over the colour.
        api.nvim_buf_set_extmark(buf, H.ns, i - 1, r[2], { end_col = r[3], hl_group = r[1] })
      end
    end
  end
  H.shown = { buf = buf, texts = texts, ranges = ranges }
end

function M.ensure()
  if H.buf == nil or not vim.api.nvim_buf_is_valid(H.buf) then
    H.buf = vim.api.nvim_create_buf(false, true)
    M.set_option(H.buf, "buf", "bufhidden", "hide")
  end
  return H.buf
end

---The buffer, or nil before the first paint.
---@return integer|nil
function M.buf()
  return H.buf
end

return M
