-- rpiv_todo.nvim.shown: which session the panel shows, the front end's policy apart from
-- its painting (rpiv_todo.nvim.frontend). Unless the host pinned a session
-- (`require("rpiv_todo").foreground(id)`), the panel follows the chat in the current
-- window (as the chat front ends registered it, `register_chat`), else the session of the
-- latest tool call. Each function says whether the foreground moved, so the caller paints
-- once. Not a public API.

local M = {}
local H = {}

H.pinned = nil -- the session the host pinned; nil: follow
H.last_call = nil -- the session of the latest tool call
H.switching = false -- this module is moving the foreground (not a host pin)
-- The session of the chat in the current buffer, as the chat front ends last said:
-- { buf = bufnr, id = id|false }. Asked again when another window or buffer becomes
-- current, a buffer gets its filetype (a chat opening) or a chat front end registers; a
-- tool call reads it without asking the front ends.
H.window_chat = nil

---@return table
function H.session()
  return require("rpiv_todo.session")
end

---Forget everything (the front end detached).
function M.reset()
  H.pinned, H.last_call, H.window_chat, H.switching = nil, nil, nil, false
end

---Move the foreground to {id} as this module's own choice (not a host's pin).
---@param id string
---@return boolean ok
---@return any err
function H.switch(id)
  H.switching = true
  local ok, err = pcall(H.session().foreground, id)
  H.switching = false
  return ok, err
end

---The session of the chat in the current window, when a chat front end knows it.
---@return string|nil
function M.window_session()
  local session = H.session()
  if not session.has_chats() then
    return nil
  end
  local buf = vim.api.nvim_get_current_buf()
  local known = H.window_chat
  if known == nil or known.buf ~= buf then
    known = { buf = buf, id = session.chat_session(buf) or false }
    H.window_chat = known
  end
  return known.id or nil
end

---A tool call ran in session {id}: unless a session is pinned, the chat in the current
---window's session (else {id}) comes to the foreground. True when the panel should paint
---(the foreground moved, or the call was in the foreground session).
---@param id string
---@return boolean paint
function M.executed(id)
  local session = H.session()
  H.last_call = id
  local want = M.window_session() or id
  if H.pinned == nil and want ~= session.foreground_id() then
    -- The "foreground" event this emits does not paint: the caller paints once.
    local ok, err = H.switch(want)
    if not ok then
      error(err, 0)
    end
    return true
  end
  return id == session.foreground_id()
end

---The session layer's foreground moved to {id}: a host's choice pins it, this module's own
---move does not. True when the panel should paint.
---@param id string
---@return boolean paint
function M.foreground_event(id)
  if H.switching then
    return false -- this module moves the foreground, and its caller paints
  end
  H.pinned = id -- a host chose it through require("rpiv_todo").foreground(id)
  return true
end

---Another window or buffer is current (or a chat registered): unless a session is pinned,
---show the list of the chat there, else the session of the latest call. True when the
---foreground moved.
---@return boolean moved
function M.follow_window()
  H.window_chat = nil
  local want = M.window_session() or H.last_call
  local session = H.session()
  if H.pinned == nil and want ~= nil and want ~= session.foreground_id() then
    H.switch(want)
    return true
  end
  return false
end

---Pin session {id} (the host's choice), or follow again with nil.
---@param id string|nil
function M.pin(id)
  if id == nil then
    H.pinned = nil
    M.follow_window()
    return
  end
  -- Validated by the session layer (a non-empty string id).
  H.session().foreground(id)
  H.pinned = H.session().foreground_id()
end

---The pinned session's id, or nil while following.
---@return string|nil
function M.pinned()
  return H.pinned
end

return M
