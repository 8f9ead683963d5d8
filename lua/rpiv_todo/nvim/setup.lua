-- rpiv_todo.nvim.setup: the editor's part of `require("rpiv_todo").setup()`, and attaching
-- the whole front end (the panel's workings in rpiv_todo.nvim.frontend, the user commands,
-- keeping lists on disk), which the frontend module itself cannot require without a cycle.

local M = {}
local H = {}

H.commands_created = false
H.warned = false

---Attach the front end and create the user commands (once: plugin/rpiv_todo.lua creates
---them at startup too). Returns the frontend module.
---@return table rpiv_todo.nvim.frontend
function M.attach()
  local frontend = require("rpiv_todo.nvim.frontend")
  frontend.attach()
  if not H.commands_created then
    H.commands_created = true
    require("rpiv_todo.nvim.commands").create()
  end
  return frontend
end

---Put the editor's options in force (an absent one takes its default), attach the front
---end and apply them: the panel repaints, `persist` starts or stops keeping lists on disk.
---Raises `(rpiv_todo) <prefix><key>: …` and changes nothing when one is wrong.
---@param opts? rpiv_todo.NvimOptions
---@param prefix? string before each key in a message
function M.configure(opts, prefix)
  local options = require("rpiv_todo.nvim.options")
  options.set(opts, prefix)
  local frontend = M.attach()
  options.apply()
  require("rpiv_todo.nvim.persist").apply(options.config.persist == true, options.config)
  frontend.sync_mapping()
  frontend.request_paint()
end

---The old `require("rpiv_todo.nvim").setup(opts)`: one deprecation notice per session,
---then the editor's options as before (messages name keys `nvim.<key>`; the tool's own
---options stay as they are).
---@param opts? rpiv_todo.NvimOptions
function M.deprecated(opts)
  if not H.warned then
    H.warned = true
    local what = 'require("rpiv_todo.nvim").setup(opts)'
    local instead = 'require("rpiv_todo").setup(opts) (the editor\'s options go there now)'
    if type(vim.deprecate) == "function" then
      pcall(vim.deprecate, what, instead, "a later release", "rpiv_todo", false)
    else
      vim.notify(
        "(rpiv_todo) " .. what .. " is deprecated: use " .. instead,
        vim.log.levels.WARN,
        { title = "rpiv_todo" }
      )
    end
  end
  M.configure(opts, "nvim.")
end

return M
