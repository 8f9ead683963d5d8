-- rpiv_todo.nvim.commands: every user command of the plugin, defined here only.
--
--   :Todos                  the list window (rpiv_todo.nvim.listwin), grouped by status
--   :Todos add <subject>    create a task            :Todos start N   mark #N in progress
--   :Todos done N           mark #N completed        :Todos delete N  delete #N
--   :Todos hide / show      turn the panel off / on
--   :Todos file / sessions / prune [days]   the lists on disk (rpiv_todo.nvim.persist, .saved)
--   :TodosToggle            collapse or expand the panel
--   :TodosLanguage [xx]     pick the UI language (rpiv_todo.nvim.language)
--   :TodosInstall[!] [download|source]   put the native module in place (rpiv_todo.nvim.install)
--
-- The list is the user's too: an edit goes through the same reducer as the model's calls
-- (in the session :Todos shows), so the same rules hold; a rejected edit is a warning and
-- changes nothing. Every edit fires `User RpivTodoUserEdit` with
-- `data = { session, params, result }` (Neovim 0.8+; on 0.7 the same table is
-- `require("rpiv_todo.nvim").last_user_edit()`), so the agent front end can put it in
-- its history. Extensions add subcommands with `register()` and whole commands with
-- `register_command()`.
--
-- plugin/rpiv_todo.lua calls `create()` at startup, so this file loads nothing else until
-- a command runs: the front end (and with it the native core) loads on first use.

---@helptext :Todos verbatim
--- :Todos          Open the list of the session the panel shows, grouped by
---                 status (Pending, In Progress, Completed), in a floating
---                 scratch window in the middle of the editor. `q` or <Esc>
---                 closes it, and so does leaving it. While it is open it
---                 follows the list. An empty list is a notification instead.
---                 A row is cut to the editor's width (ending in "…"), and
---                 the panel's too: only what fits the screen is drawn,
---                 however long a task's text. A session id is shown with
---                 control characters escaped (`\x00`).

---@helptext rpiv_todo-commands-edit verbatim
--- The list is yours too. These edit it through the same rules as the model's
--- calls (the same reducer); a rejected edit is a warning and changes nothing.
--- Each one that applies is confirmed and fires |RpivTodoUserEdit|. Completion
--- (<Tab>) offers the subcommands, then the ids that fit. An id {N} is a
--- decimal integer (`16`, `016`); anything else (`0x10`, `1e1`, a number past
--- 9007199254740991) is a warning that quotes what you typed, and nothing is
--- edited.
---
--- :Todos add {subject}                                             *:Todos-add*
---                 Create a task, e.g. `:Todos add Write the tests`.
--- :Todos start {N}                                               *:Todos-start*
---                 Mark task #N in progress (completion: pending tasks).
--- :Todos done {N}                                                 *:Todos-done*
---                 Mark task #N completed (completion: pending and in progress).
--- :Todos delete {N}                                             *:Todos-delete*
---                 Delete task #N.
--- :Todos edit                                                     *:Todos-edit*
---                 The list as a Markdown checklist in a buffer of its own,
---                 one task a line: `- [ ] #3 Write the parser ⛓ #1`, with
---                 `[ ]` pending, `[/]` in progress, `[x]` completed, `⛓` what
---                 it waits for, and indented under it `> ` the activeForm and
---                 then the description. |:w| applies the differences as your
---                 own edits: a line without an id is a new task, a changed
---                 box, subject, activeForm, description or `⛓` an update, a
---                 line removed a deletion. A line that cannot apply (an
---                 unknown id, a cycle, a task another writer changed since the
---                 buffer was made) is reported with its number and nothing of
---                 it is written; then the buffer shows the list as saved.
--- :Todos export [{file}]                                         *:Todos-export*
---                 The same checklist, written to {file}, or to a new buffer.
--- :Todos import {file}                                           *:Todos-import*
---                 Add every checklist item of a Markdown file as a task, with
---                 its box's status; `⛓ #n` between items of the file kept.
--- :Todos hide                                                     *:Todos-hide*
---                 Turn the panel off; tool calls go on, |:Todos| still works.
--- :Todos show                                                     *:Todos-show*
---                 Turn it on again.
--- :Todos file                                                     *:Todos-file*
---                 Where the shown session's list is saved with `persist =
---                 true` (|rpiv_todo-persist|), and the last failure if any.
--- :Todos sessions                                             *:Todos-sessions*
---                 The lists saved for this working directory, newest first
---                 (|vim.ui.select()|): the first unfinished task as title,
---                 done/total and open counts, when it last changed, and the
---                 session. The chosen one shows in the panel (pinned until
---                 `require("rpiv_todo").foreground(nil)`) and in
---                 |:Todos|; edits go to its file.
--- :Todos prune [{days}]                                          *:Todos-prune*
---                 Remove saved lists (of every directory, and files moved
---                 aside as unreadable) not changed for {days} days, default
---                 `persist_max_age_days` (30). The lists of sessions open in
---                 this editor stay. Says how many went.

---@helptext :TodosInstall verbatim
--- :TodosInstall[!] [download|source]
---                 Install the native module and the MCP server:
---                 |rpiv_todo.nvim.install.start()|, so on Neovim 0.10+ the
---                 editor stays usable while it downloads or builds, and
---                 each step shows in the notifications (headless, it is
---                 |rpiv_todo.nvim.install.run()|, done before the next
---                 command). With ! install
---                 again even when this version's module is in place;
---                 `download` never builds, `source` only builds (cargo).

---@helptext :TodosToggle verbatim
--- :TodosToggle    Collapse the panel to its heading and one hint line, or
---                 expand it again. With nothing to show it says so and
---                 changes nothing. The `collapse_key` is mapped to the same
---                 in normal and insert mode (`ctrl+shift+t` becomes <C-S-t>),
---                 and the collapsed hint names that key, or `:TodosToggle`
---                 when no key is mapped (`collapse_key = "off"`, a key without
---                 a modifier, `map_collapse_key = false`). See
---                 |rpiv_todo-surprises| about <C-S-t> in terminals.

local M = {}
local H = {}

---@class rpiv_todo.Subcommand
---@field run fun(rest: string) what follows the subcommand's name, trimmed
---@field complete? fun(arglead: string): string[] completion of its argument
---@field usage string e.g. "add <subject>"

---@type table<string, rpiv_todo.Subcommand>
M.subcommands = {}
---@type string[] names in the order completion offers them
M.order = {}
-- Extra commands: { name, fn(opts), opts } (nvim_create_user_command arguments).
M.extra = {}

---The front end, attached (the panel's workings: rpiv_todo.nvim.frontend).
---@return table
function H.nv()
  return require("rpiv_todo.nvim.frontend").attach()
end

---The user's own edit (rpiv_todo.nvim.edit), with the front end attached.
---@param params table
function H.edit(params)
  H.nv()
  require("rpiv_todo.nvim.edit").edit(params)
end

---Add a :Todos subcommand (other front-end files; later ones replace earlier ones).
---@param name string
---@param spec rpiv_todo.Subcommand
function M.register(name, spec)
  if M.subcommands[name] == nil then
    M.order[#M.order + 1] = name
  end
  M.subcommands[name] = spec
end

---Add a whole user command, created with the others (and at once when they exist).
---@param name string
---@param fn fun(opts: table)
---@param opts table nvim_create_user_command options
function M.register_command(name, fn, opts)
  M.extra[#M.extra + 1] = { name, fn, opts }
  if H.created then
    vim.api.nvim_create_user_command(name, fn, opts)
  end
end

---@param msg string
---@param level integer
function H.notify(msg, level)
  vim.notify(msg, level, { title = require("rpiv_todo.nvim.options").config.notify_title })
end

-- Statuses a subcommand's ids are offered from.
H.ID_STATUSES = {
  start = { pending = true },
  done = { pending = true, in_progress = true },
  delete = { pending = true, in_progress = true, completed = true },
}

---Ids of the foreground list's tasks in the given statuses, as completion candidates.
---@param statuses table<string, boolean>
---@param arglead string
---@return string[]
function H.ids(statuses, arglead)
  local common = require("rpiv_todo.common")
  local ok, state = pcall(function()
    local session = require("rpiv_todo.session")
    if not session.exists(session.foreground_id()) then
      return nil
    end
    return session.state_of(nil, "Todos")
  end)
  local out = {}
  if not ok or type(state) ~= "table" then
    return out
  end
  for _, task in ipairs(state.tasks or {}) do
    if statuses[task.status] then
      local id = common.num(task.id)
      if id:sub(1, #arglead) == arglead then
        out[#out + 1] = id
      end
    end
  end
  return out
end

-- The largest id a task can have (2^53 - 1, the largest integer a double holds exactly),
-- as text: longer or larger digit strings would be read as another number.
H.MAX_ID = "9007199254740991"

---A task id typed by the user: decimal digits only (`tonumber` would also take `0x10`,
---`1e1` or ` 3`), no larger than any id can be. Returns nil and what is wrong otherwise.
---@param text string
---@return integer|nil id
---@return string|nil err
function H.id(text)
  if not text:match("^%d+$") then
    return nil, "expected a task id (a decimal integer such as 3), got " .. H.quoted(text)
  end
  local digits = text:gsub("^0+(%d)", "%1")
  if #digits > #H.MAX_ID or (#digits == #H.MAX_ID and digits > H.MAX_ID) then
    return nil, "expected a task id of at most " .. H.MAX_ID .. ", got " .. H.quoted(text)
  end
  return tonumber(digits), nil
end

---What the user typed, quoted and shown whole: control bytes escaped, cut when long.
---@param text string
---@return string
function H.quoted(text)
  local shown = text
  if #shown > 40 then
    shown = shown:sub(1, 40) .. "…"
  end
  return (string.format("%q", shown):gsub("\\\n", "\\n"))
end

---@param name string
---@param status string|nil
---@return rpiv_todo.Subcommand
function H.id_command(name, status)
  return {
    usage = name .. " N",
    run = function(rest)
      if rest == "" or rest:find("%s") then
        H.notify(":Todos " .. name .. ": expected one task id, e.g. :Todos " .. name .. " 3", vim.log.levels.WARN)
        return
      end
      local id, err = H.id(rest)
      if id == nil then
        H.notify(":Todos " .. name .. ": " .. err, vim.log.levels.WARN)
        return
      end
      if status then
        H.edit({ action = "update", id = id, status = status })
      else
        H.edit({ action = "delete", id = id })
      end
    end,
    complete = function(arglead)
      return H.ids(H.ID_STATUSES[name], arglead)
    end,
  }
end

M.register("add", {
  usage = "add <subject>",
  run = function(rest)
    if rest == "" then
      H.notify(":Todos add: expected a subject, e.g. :Todos add Write the tests", vim.log.levels.WARN)
      return
    end
    H.edit({ action = "create", subject = rest })
  end,
})
M.register("start", H.id_command("start", "in_progress"))
M.register("done", H.id_command("done", "completed"))
M.register("delete", H.id_command("delete", nil))
M.register("edit", {
  usage = "edit",
  run = function()
    H.nv()
    require("rpiv_todo.nvim.checklist").edit()
  end,
})
M.register("export", {
  usage = "export [file]",
  run = function(rest)
    require("rpiv_todo.nvim.checklist").export(rest)
  end,
  complete = function(arglead)
    return vim.fn.getcompletion(arglead, "file")
  end,
})
M.register("import", {
  usage = "import <file>",
  run = function(rest)
    H.nv()
    require("rpiv_todo.nvim.checklist").import(rest)
  end,
  complete = function(arglead)
    return vim.fn.getcompletion(arglead, "file")
  end,
})
M.register("hide", {
  usage = "hide",
  run = function()
    H.nv().hide()
  end,
})
M.register("show", {
  usage = "show",
  run = function()
    H.nv().show()
  end,
})
M.register("file", {
  usage = "file",
  run = function()
    local text, level = require("rpiv_todo.nvim.persist").file_report()
    H.notify(text, level)
  end,
})
M.register("sessions", {
  usage = "sessions",
  run = function()
    require("rpiv_todo.nvim.saved").sessions_command()
  end,
})
M.register("prune", {
  usage = "prune [days]",
  run = function(rest)
    require("rpiv_todo.nvim.saved").prune_command(rest)
  end,
})

---Run `:Todos <args>`.
---@param args string
function M.run(args)
  args = (args or ""):gsub("^%s+", ""):gsub("%s+$", "")
  if args == "" then
    H.nv().todos()
    return
  end
  local name, rest = args:match("^(%S+)%s*(.*)$")
  local sub = M.subcommands[name]
  if sub == nil then
    local usages = {}
    for _, n in ipairs(M.order) do
      usages[#usages + 1] = M.subcommands[n].usage
    end
    H.notify(
      ":Todos: unknown subcommand " .. string.format("%q", name) .. " (expected " .. table.concat(usages, ", ") .. ")",
      vim.log.levels.WARN
    )
    return
  end
  sub.run(rest)
end

---Completion of `:Todos`: subcommand names, then what the subcommand completes.
---@param arglead string
---@param cmdline string
---@return string[]
function M.complete(arglead, cmdline)
  local words = {}
  for w in (cmdline or ""):gmatch("%S+") do
    words[#words + 1] = w
  end
  -- words[1] is the command itself; a trailing space means a new word is being typed.
  local typing = #words + ((arglead == "" and #words >= 1) and 1 or 0)
  if typing <= 2 then
    return H.prefixed(M.order, arglead)
  end
  local sub = M.subcommands[words[2]]
  if typing == 3 and sub and sub.complete then
    return sub.complete(arglead)
  end
  return {}
end

---`fn` for a command: an error (no native library, say) is one notification, not a
---traceback.
---@param fn function
---@return function
function M.guarded(fn)
  return function(...)
    local ok, err = pcall(fn, ...)
    if not ok then
      vim.notify(tostring(err), vim.log.levels.ERROR, { title = "rpiv_todo" })
    end
  end
end

---`:TodosInstall[!] [download|source]`: put the native module in place, prebuilt and
---checked (download) or built with cargo (source); without a word, prebuilt when one is
---published, else built.
---@param args string
---@param force boolean the bang: install again even when this version's module is there
function M.install(args, force)
  local from_source = ({ download = false, source = true })[args]
  if args ~= "" and from_source == nil then
    error("(rpiv_todo) :TodosInstall takes download or source, not " .. args, 0)
  end
  local install = require("rpiv_todo.nvim.install")
  local opts = { force = force, from_source = from_source }
  if #vim.api.nvim_list_uis() > 0 then
    -- Someone is at the screen: don't block it (Neovim 0.10+; a source build takes
    -- minutes). start() tells them how it went.
    install.start(opts)
  else
    -- Headless (`nvim --headless -c TodosInstall -c q`): done before the next command.
    install.run(opts)
  end
end

---The words of `words` that start with `arglead`.
---@param words string[]
---@param arglead string
---@return string[]
function H.prefixed(words, arglead)
  local out = {}
  for _, w in ipairs(words) do
    if w:sub(1, #arglead) == arglead then
      out[#out + 1] = w
    end
  end
  return out
end

---Completion that never raises into the command line.
---@return string[]
function H.safe_complete(arglead, cmdline, pos)
  local ok, out = pcall(M.complete, arglead, cmdline, pos)
  return ok and out or {}
end

---Create :Todos, :TodosToggle and the registered commands.
function M.create()
  vim.api.nvim_create_user_command(
    "Todos",
    M.guarded(function(opts)
      M.run(opts.args)
    end),
    {
      nargs = "*",
      complete = H.safe_complete,
      desc = "rpiv_todo: the todo list; add|start|done|delete|edit|import edit it, export|hide|show",
    }
  )
  vim.api.nvim_create_user_command(
    "TodosToggle",
    M.guarded(function()
      H.nv().toggle()
    end),
    { nargs = 0, desc = "rpiv_todo: collapse or expand the todo panel" }
  )
  vim.api.nvim_create_user_command(
    "TodosLanguage",
    M.guarded(function(opts)
      require("rpiv_todo.nvim.language").language_command(opts.args)
    end),
    {
      nargs = "?",
      complete = function(arglead)
        return require("rpiv_todo.nvim.language").complete_language(arglead)
      end,
      desc = "rpiv_todo: pick the UI language (saved to rpiv-i18n's locale.json)",
    }
  )
  -- ! installs again even when this version's module is there.
  vim.api.nvim_create_user_command(
    "TodosInstall",
    M.guarded(function(opts)
      M.install(opts.args, opts.bang)
    end),
    {
      nargs = "?",
      bang = true,
      complete = function(arglead)
        return H.prefixed({ "download", "source" }, arglead)
      end,
      desc = "rpiv_todo: install the native module (prebuilt, else built with cargo)",
    }
  )
  for _, c in ipairs(M.extra) do
    vim.api.nvim_create_user_command(c[1], c[2], c[3])
  end
  H.created = true
end

return M
