-- tests/nvim/persist_child.lua: run by tests/nvim/persist_spec.lua in a child Neovim
-- started in a project directory, with XDG_STATE_HOME and XDG_CONFIG_HOME pointing at
-- scratch folders, through scripts/nvim-runner.lua. Not a spec of its own (no _spec
-- suffix). RPIV_ROLE says what it does; what it saw goes to RPIV_OUT as JSON.
--
--   write     setup({ persist = true }), three tool calls, :Todos file, :checkhealth
--   read      setup({ persist = true }), then the default session's list (first use)
--   replay    setup({ persist = true }), the host replays history before any other use
--   off       no persist option: three tool calls
--   language  :TodosLanguage through a stubbed vim.ui.select, then :TodosLanguage xx
--   cd        a task, :cd RPIV_OTHER, setup({ persist = true }) again, a list and a create
--   recent    setup({ persist = true }) where saved lists exist: the panel, :Todos, the
--             next call in the shown session, :Todos sessions (picks RPIV_PICK), health
--   prune     setup({ persist = true }) over old files, then :Todos prune RPIV_DAYS

local out = {}
local H = {}

vim.cmd("runtime plugin/rpiv_todo.lua")

H.notes = {}
vim.notify = function(msg, level)
  H.notes[#H.notes + 1] = { msg = msg, level = level }
end

function H.subjects(state)
  local s = {}
  for i, t in ipairs(state.tasks) do
    s[i] = t.subject
  end
  return s
end

local role = assert(os.getenv("RPIV_ROLE"), "RPIV_ROLE")
local todo = require("rpiv_todo")
todo.setup({ locale = "en" })
local nv = require("rpiv_todo.nvim")
out.cwd = vim.fn.getcwd()

if role == "write" or role == "read" or role == "replay" or role == "cd" or role == "recent" or role == "prune" then
  todo.setup({ locale = "en", persist = true })
  -- What the panel shows right after setup, before any tool call.
  local win, buf = nv.window()
  out.panel = win and vim.api.nvim_buf_get_lines(buf, 0, -1, false) or {}
end

if role == "write" or role == "off" then
  nv.execute({ action = "create", subject = "Write the parser" })
  nv.execute({ action = "create", subject = "Test it", blockedBy = { 1 } })
  nv.execute({ action = "update", id = 1, status = "in_progress" })
elseif role == "replay" then
  nv.replay("default", {
    {
      role = "toolResult",
      toolName = "todo",
      details = { tasks = { { id = 7, subject = "From history", status = "pending" } }, nextId = 8 },
    },
  })
elseif role == "cd" then
  nv.execute({ action = "create", subject = "Mine" })
  vim.cmd("cd " .. vim.fn.fnameescape(os.getenv("RPIV_OTHER")))
  todo.setup({ locale = "en", persist = true })
  out.after_cd = {}
  out.after_cd[1] = nv.execute({ action = "list" }).content[1].text
  out.after_cd[2] = nv.execute({ action = "create", subject = "Second" }).content[1].text
  out.cwd_after = vim.fn.getcwd()
elseif role == "recent" then
  local session = require("rpiv_todo.session")
  out.foreground = session.foreground_id()
  H.notes = {}
  vim.cmd("Todos")
  local listwin = require("rpiv_todo.nvim.listwin")
  local lw = listwin.window()
  out.listwin = lw and vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(lw), 0, -1, false) or {}
  out.todos_notes = H.notes
  pcall(vim.cmd, "close")
  out.next_call = nv.execute({ action = "create", subject = "Continued" }, { session = out.foreground }).content[1].text
  vim.ui.select = function(items, opts, on_choice)
    local shown = {}
    local pick = nil
    for i, item in ipairs(items) do
      shown[i] = opts.format_item(item)
      if item.id == os.getenv("RPIV_PICK") then
        pick = item
      end
    end
    H.select = { shown = shown, prompt = opts.prompt }
    on_choice(pick)
  end
  vim.cmd("Todos sessions")
  out.select = H.select
  out.foreground_after_pick = session.foreground_id()
  local win, buf = nv.window()
  out.panel_after_pick = win and vim.api.nvim_buf_get_lines(buf, 0, -1, false) or {}
  vim.cmd("checkhealth rpiv_todo")
  out.health = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  vim.cmd("bwipeout!")
elseif role == "prune" then
  local dir = require("rpiv_todo.nvim.persist").dir()
  local old = os.getenv("RPIV_OLD_FILE")
  -- The startup prune runs on the main loop once setup returned.
  out.startup_pruned = vim.wait(5000, function()
    return vim.loop.fs_stat(dir .. "/" .. old) == nil
  end, 20)
  H.notes = {}
  vim.cmd("Todos prune " .. os.getenv("RPIV_DAYS"))
  out.prune_note = H.notes[1]
  H.notes = {}
  vim.cmd("Todos prune soon")
  out.prune_bad = H.notes[1]
elseif role == "language" then
  H.select = nil
  vim.ui.select = function(items, opts, on_choice)
    local shown = {}
    for i, item in ipairs(items) do
      shown[i] = opts.format_item(item)
    end
    H.select = { items = items, shown = shown, prompt = opts.prompt }
    on_choice("fr")
  end
  vim.cmd("TodosLanguage")
  out.select = H.select
  out.locale_after_pick = todo.locale()
  out.file_after_pick = table.concat(vim.fn.readfile(os.getenv("XDG_CONFIG_HOME") .. "/rpiv-i18n/locale.json"), "\n")
  H.notes = {}
  vim.cmd("TodosLanguage xx")
  out.unknown_note = H.notes[1]
  out.locale_after_unknown = todo.locale()
  out.file_after_unknown = table.concat(vim.fn.readfile(os.getenv("XDG_CONFIG_HOME") .. "/rpiv-i18n/locale.json"), "\n")
end

if role ~= "language" then
  out.subjects = H.subjects(todo.session("default"):state())
  out.path = require("rpiv_todo.persist").path("default")
  H.notes = {}
  vim.cmd("Todos file")
  out.file_note = H.notes[1]
end

if role == "write" then
  vim.cmd("checkhealth rpiv_todo")
  local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  local section = {}
  local inside = false
  for _, line in ipairs(lines) do
    if line:find("rpiv_todo: files", 1, true) then
      inside = true
    elseif inside and line:find("rpiv_todo: ", 1, true) and not line:find("^%s*[-%-]") then
      inside = false
    end
    if inside then
      section[#section + 1] = line
    end
  end
  out.health = table.concat(section, "\n")
  out.health_error = table.concat(lines, "\n"):find("ERROR", 1, true) ~= nil
  vim.cmd("bwipeout!")
end

out.messages = vim.api.nvim_exec("messages", true)
local file = assert(io.open(assert(os.getenv("RPIV_OUT"), "RPIV_OUT"), "w"))
file:write(vim.json.encode(out))
file:close()
