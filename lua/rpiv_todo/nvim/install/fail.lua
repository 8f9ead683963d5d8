-- rpiv_todo.nvim.install.fail: the one shape of the installer's errors: the step that failed,
-- what went wrong, the URL (when there is one) and what to do.
-- Plain Lua.

local M = {}

---An error naming the step, the URL (when there is one) and what to do.
---@param step string
---@param detail any
---@param url? string
---@param todo? string
---@return string
function M.fail(step, detail, url, todo)
  local text = "(rpiv_todo) install: " .. step .. " failed: " .. tostring(detail):gsub("%s+$", "")
  if url then
    text = text .. "\n  URL: " .. url
  end
  if todo then
    text = text .. "\n  What to do: " .. todo
  end
  return text
end

return M
