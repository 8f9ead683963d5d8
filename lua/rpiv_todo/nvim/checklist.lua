-- rpiv_todo.nvim.checklist: the shown list as a Markdown checklist, both ways (`:Todos edit`,
-- `:Todos export`, `:Todos import`). The checklist and the calls that turn an edited one
-- back into the list are the core's (`core.markdown`, `core.markdown_plan`); this file
-- keeps the buffer. Every change goes through the session as the user's own call, so it
-- takes the same transaction and rules as the model's, and the model hears of it.
--
--   - [ ] #3 Write the parser ⛓ #1      [ ] pending, [/] in progress, [x] completed
--     > Writing the parser               the activeForm
--     The grammar; errors name the line. the description

local M = {}
local H = {}

-- bufnr -> { session = id, base = the list as the buffer was made from it (JSON text) }
H.buffers = {}
H.HEADER = "<!-- rpiv_todo: %s. :w applies the changes. [ ] pending, [/] in progress, [x] completed; "
  .. "a line without #id is a new task, a line removed a deletion. -->"

function H.core()
  return require("rpiv_todo.native")
end

function H.session()
  return require("rpiv_todo.session")
end

---@param msg string
---@param level? integer
function H.notify(msg, level)
  vim.notify(msg, level or vim.log.levels.INFO, { title = require("rpiv_todo.nvim.options").config.notify_title })
end

---The lines of the checklist of session {id}, with its heading.
---@param id string
---@return string[] lines, string base
function H.render(id)
  local list = H.session().get(id).list
  local base = list:state_json()
  local lines = { string.format(H.HEADER, "session " .. id), "" }
  for line in H.core().markdown(list):gmatch("[^\n]*\n") do
    lines[#lines + 1] = line:sub(1, -2)
  end
  return lines, base
end

---Fill buffer {buf} with the checklist of its session, as unmodified.
---@param buf integer
function H.fill(buf)
  local state = H.buffers[buf]
  local lines, base = H.render(state.session)
  state.base = base
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modified = false
end

---`:Todos edit`: the shown list as a checklist in a buffer of its own; `:w` applies it.
function M.edit()
  local id = H.session().foreground_id()
  local name = "rpiv-todo://checklist/" .. id
  local buf = vim.fn.bufnr(name)
  if buf == -1 then
    buf = vim.api.nvim_create_buf(true, false)
    vim.api.nvim_buf_set_name(buf, name)
    vim.bo[buf].buftype = "acwrite"
    vim.bo[buf].swapfile = false
    vim.bo[buf].filetype = "markdown"
    vim.api.nvim_create_autocmd("BufWriteCmd", {
      buffer = buf,
      callback = function(ev)
        M.write(ev.buf)
      end,
    })
    vim.api.nvim_create_autocmd("BufWipeout", {
      buffer = buf,
      callback = function(ev)
        H.buffers[ev.buf] = nil
      end,
    })
  end
  H.buffers[buf] = { session = id }
  H.fill(buf)
  vim.api.nvim_set_current_buf(buf)
  return buf
end

---Run one planned call as the user's; the result.
---@param session rpiv_todo.Session
---@param params table
---@return table result
function H.run(session, params)
  return session:execute(params, "user")
end

---The first line of a result's text (the rest, if any, is the note about other writers).
function H.text(result)
  return (result.content[1].text:match("^[^\n]*"))
end

---Apply plan {plan} to {session}; the messages, one a change or refusal.
---@param session rpiv_todo.Session
---@param plan table
---@param refs? table file id -> new id (an import)
---@return string[] done, string[] refused
function H.apply(session, plan, refs)
  local done, refused = {}, {}
  local function at(line)
    return line > 0 and ("line " .. line .. ": ") or ""
  end
  for _, e in ipairs(plan.errors) do
    refused[#refused + 1] = at(e.line) .. e.message
  end
  for _, step in ipairs(plan.steps) do
    local params = step.params
    if refs ~= nil and params.blockedBy ~= nil then
      local mapped = {}
      for _, ref in ipairs(params.blockedBy) do
        if refs[ref] ~= nil then
          mapped[#mapped + 1] = refs[ref]
        else
          refused[#refused + 1] = at(step.line) .. "waits for #" .. ref .. ", which is not in the file; left out"
        end
      end
      params.blockedBy = #mapped > 0 and mapped or nil
    end
    local result = H.run(session, params)
    if result.details.error ~= nil then
      refused[#refused + 1] = at(step.line) .. H.text(result)
    else
      done[#done + 1] = H.text(result)
      local new_id = params.action == "create" and result.details.nextId - 1 or nil
      if new_id ~= nil and step.reference ~= nil and refs ~= nil then
        refs[step.reference] = new_id
      end
      if new_id ~= nil and step.then_status ~= nil then
        local r = H.run(session, { action = "update", id = new_id, status = step.then_status })
        if r.details.error ~= nil then
          refused[#refused + 1] = at(step.line) .. H.text(r)
        else
          done[#done + 1] = H.text(r)
        end
      end
    end
  end
  return done, refused
end

---Report what {done} and {refused} say, in one notification.
function H.report(what, done, refused)
  local parts = { what .. ": " .. #done .. (#done == 1 and " change" or " changes") }
  for _, d in ipairs(done) do
    parts[#parts + 1] = "  " .. d
  end
  for _, r in ipairs(refused) do
    parts[#parts + 1] = "  not applied: " .. r
  end
  H.notify(table.concat(parts, "\n"), #refused > 0 and vim.log.levels.WARN or vim.log.levels.INFO)
end

---`:w` of a checklist buffer: the differences made into calls, each applied as the user's
---own; then the buffer shows the list as saved.
---@param buf integer
function M.write(buf)
  local state = H.buffers[buf]
  if state == nil then
    return
  end
  local session = H.session().get(state.session)
  local text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n") .. "\n"
  -- A shared file may hold another writer's newer list: plan against it.
  session:sync()
  local plan = H.core().markdown_plan(text, state.base, session.list)
  local done, refused = H.apply(session, plan)
  H.fill(buf)
  H.report("rpiv_todo: checklist", done, refused)
  return done, refused
end

---The checklist of the shown list.
---@return string
function M.markdown()
  return H.core().markdown(H.session().foreground().list)
end

---`:Todos export [file]`: the checklist to {file}, or to a new buffer.
---@param file string
function M.export(file)
  local text = M.markdown()
  if file == "" then
    vim.cmd("enew")
    local lines = vim.split(text, "\n", { plain = true })
    if lines[#lines] == "" then
      lines[#lines] = nil
    end
    vim.api.nvim_buf_set_lines(0, 0, -1, false, lines)
    vim.bo.filetype = "markdown"
    return
  end
  local path = vim.fn.expand(file)
  local f, err = io.open(path, "wb")
  if f == nil then
    H.notify(":Todos export: " .. tostring(err), vim.log.levels.WARN)
    return
  end
  f:write(text)
  f:close()
  H.notify("rpiv_todo: the list written to " .. path)
end

---`:Todos import {file}`: every checklist item of a Markdown file added as a task.
---@param file string
function M.import(file)
  if file == "" then
    H.notify(":Todos import: expected a file, e.g. :Todos import plan.md", vim.log.levels.WARN)
    return
  end
  local path = vim.fn.expand(file)
  local f, err = io.open(path, "rb")
  if f == nil then
    H.notify(":Todos import: " .. tostring(err), vim.log.levels.WARN)
    return
  end
  local text = f:read("*a")
  f:close()
  local session = H.session().foreground()
  local plan = H.core().markdown_plan(text, nil)
  local done, refused = H.apply(session, plan, {})
  H.report("rpiv_todo: import of " .. path, done, refused)
  return done, refused
end

return M
