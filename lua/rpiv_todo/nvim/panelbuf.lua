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

-- Pads by width, and a scratch list for the pieces of a line (a paint flattens a dozen).
H.leads = {}
H.parts = {}

---Plain text and highlight ranges of one segments line, `pad` spaces on each side.
---@param line table list of { text, group, bold?, strikethrough? }
---@param pad integer
---@return string text
---@return table ranges flat: group, start_col, end_col (bytes), then the next range's
function M.flatten(line, pad)
  local lead = H.leads[pad]
  if lead == nil then
    lead = string.rep(" ", pad)
    H.leads[pad] = lead
  end
  local parts, ranges, col, n, r = H.parts, {}, #lead, 1, 0
  parts[1] = lead
  for i = 1, #line do
    local seg = line[i]
    local text = seg[1]
    n = n + 1
    parts[n] = text
    local stop = col + #text
    if seg[2] then
      ranges[r + 1], ranges[r + 2], ranges[r + 3] = seg[2], col, stop
      r = r + 3
    end
    if seg.bold then
      ranges[r + 1], ranges[r + 2], ranges[r + 3] = "RpivTodoBold", col, stop
      r = r + 3
    end
    if seg.strikethrough then
      ranges[r + 1], ranges[r + 2], ranges[r + 3] = "RpivTodoStrikethrough", col, stop
      r = r + 3
    end
    col = stop
  end
  n = n + 1
  parts[n] = lead
  local text = table.concat(parts, "", 1, n)
  for i = n, 1, -1 do
    parts[i] = nil
  end
  return text, ranges
end

-- What the buffer holds (`{ buf, texts, ranges }`): a paint writes only the lines that
-- changed.
H.shown = nil

---Are two (flat) lists of highlight ranges the same?
---@param a table
---@param b table|nil
---@return boolean
function H.same_ranges(a, b)
  if b == nil or #a ~= #b then
    return false
  end
  for i = 1, #a do
    if a[i] ~= b[i] then
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
      local r = ranges[i]
      for j = 1, #r, 3 do
        -- Extmark highlights combine, so bold and strikethrough layer over the colour.
        api.nvim_buf_set_extmark(buf, H.ns, i - 1, r[j + 1], { end_col = r[j + 2], hl_group = r[j] })
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
