-- rpiv_todo plugin entry: sourced at startup, so it does as little as possible.
--
-- It defines :Todos, :TodosToggle, :TodosLanguage and :TodosInstall, which load the editor front end
-- (lua/rpiv_todo/nvim/, and with it the native core) on first use, and registers one
-- small listener on the session layer: on the first tool call of any session it attaches
-- the front end (panel, autocmds, highlight groups, collapse key), hands it that first
-- event (so the panel shows that call's session) and removes itself. Nothing native is
-- loaded until then, so a missing build only shows up when the tool is used. It also
-- shows the errors of failing session listeners with vim.notify (once per listener and
-- message). rpiv_todo.session is plain Lua and loads no native code.

if vim.g.loaded_rpiv_todo == 1 then
  return
end
vim.g.loaded_rpiv_todo = 1

-- A command that fails (no native library, say) reports one message, not a traceback.
local function guarded(fn)
  return function(...)
    local ok, err = pcall(fn, ...)
    if not ok then
      vim.notify(tostring(err), vim.log.levels.ERROR, { title = "rpiv_todo" })
    end
  end
end

-- Completion by `require(module)[name]`, loaded on first use; an error offers nothing.
local function lazy_complete(module, name)
  return function(...)
    local ok, out = pcall(function(...)
      return require(module)[name](...)
    end, ...)
    return ok and out or {}
  end
end

vim.api.nvim_create_user_command(
  "Todos",
  guarded(function(opts)
    require("rpiv_todo.nvim.commands").run(opts.args)
  end),
  {
    nargs = "*",
    complete = lazy_complete("rpiv_todo.nvim.commands", "complete"),
    desc = "rpiv_todo: the todo list; add|start|done|delete|hide|show edit it",
  }
)

vim.api.nvim_create_user_command(
  "TodosToggle",
  guarded(function()
    require("rpiv_todo.nvim").toggle_command()
  end),
  { nargs = 0, desc = "rpiv_todo: collapse or expand the todo panel" }
)

vim.api.nvim_create_user_command(
  "TodosLanguage",
  guarded(function(opts)
    require("rpiv_todo.nvim.language").language_command(opts.args)
  end),
  {
    nargs = "?",
    complete = lazy_complete("rpiv_todo.nvim.language", "complete_language"),
    desc = "rpiv_todo: pick the UI language (saved to rpiv-i18n's locale.json)",
  }
)

-- :TodosInstall[!] [download|source]: put the native module in place (prebuilt, checked;
-- or built with cargo). ! installs again even when this version's module is there.
vim.api.nvim_create_user_command(
  "TodosInstall",
  guarded(function(opts)
    local from_source = ({ download = false, source = true })[opts.args]
    if opts.args ~= "" and from_source == nil then
      error("(rpiv_todo) :TodosInstall takes download or source, not " .. opts.args, 0)
    end
    require("rpiv_todo.install").run({ force = opts.bang, from_source = from_source })
  end),
  {
    nargs = "?",
    bang = true,
    complete = function(lead)
      return vim.tbl_filter(function(word)
        return word:sub(1, #lead) == lead
      end, { "download", "source" })
    end,
    desc = "rpiv_todo: install the native module (prebuilt, else built with cargo)",
  }
)

local done, stop = false, nil
stop = require("rpiv_todo.session").listen(function(event, id)
  if done then
    return
  end
  done = true
  -- Removing a listener while the session layer walks its list would skip the next
  -- one, so the removal waits for the main loop.
  vim.schedule(stop)
  local nv = require("rpiv_todo.nvim")
  -- attach() adds the front end's own listeners; they start with the next event, so
  -- this one is handed over by hand.
  local attached = nv.attached()
  nv.attach()
  if not attached then
    nv.session_event(event, id)
  end
end)

-- A todo.listen callback that raises (the user's, or another plugin's) no longer breaks
-- the tool call it heard about; its error is shown here, once per callback and message,
-- from the main loop (listeners can run inside a fast event).
require("rpiv_todo.session").on_listener_error(function(message)
  vim.schedule(function()
    vim.notify(message, vim.log.levels.WARN, { title = "rpiv_todo" })
  end)
end)
