-- rpiv_todo plugin entry: sourced at startup, so it does as little as possible.
--
-- It creates the user commands (:Todos, :TodosToggle, :TodosLanguage, :TodosInstall,
-- through rpiv_todo.nvim.commands), which load the editor front end (lua/rpiv_todo/nvim/,
-- and with it the native core) on first use, and registers one small listener on the
-- session layer: on the first session event of any session (a tool call, a new turn, a
-- replay; a chat front end registering does not count) it attaches
-- the front end (panel, autocmds, highlight groups, collapse key), hands it that first
-- event (so the panel shows that call's session) and removes itself. Nothing native is
-- loaded until then, so a missing build only shows up when the tool is used. It also
-- shows the errors of failing session listeners with vim.notify (once per listener and
-- message). rpiv_todo.session is plain Lua and loads no native code.

-- What the editor adds to `require("rpiv_todo").setup()`: its options and its setup step;
-- and to `require("rpiv_todo").foreground()`: the panel's pin (see rpiv_todo.nvim.shown).
-- The plain layer asks rpiv_todo.host for them and never requires the editor's modules.
-- Registered at every sourcing (a host that reloaded rpiv_todo.host sources it again).
require("rpiv_todo.host").register_editor({
  options = function()
    return require("rpiv_todo.nvim.options")
  end,
  configure = function(opts)
    require("rpiv_todo.nvim.setup").configure(opts)
  end,
  foreground = function(...)
    return require("rpiv_todo.nvim.frontend").foreground(...)
  end,
})

if vim.g.loaded_rpiv_todo == 1 then
  return
end
vim.g.loaded_rpiv_todo = 1

-- Every user command, defined in one place (lua/rpiv_todo/nvim/commands.lua, which loads
-- nothing else until a command runs).
require("rpiv_todo.nvim.commands").create()

local done, stop = false, nil
stop = require("rpiv_todo.session").listen(function(event, id)
  -- A chat front end registering (at chat creation) is no tool call yet.
  if done or event == "chat" then
    return
  end
  done = true
  -- Removing a listener while the session layer walks its list would skip the next
  -- one, so the removal waits for the main loop.
  vim.schedule(stop)
  local frontend = require("rpiv_todo.nvim.frontend")
  -- attach() adds the front end's own listeners; they start with the next event, so
  -- this one is handed over by hand.
  local attached = frontend.attached()
  require("rpiv_todo.nvim.setup").attach()
  if not attached then
    frontend.session_event(event, id)
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
