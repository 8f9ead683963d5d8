-- tests/nvim/startup_spec.lua: the README's configuration (`require("rpiv_todo").setup({})`
-- in init.lua) loads nothing but rpiv_todo itself at startup: not the native core, not
-- the tool or the overlay, not the editor front end. They load on first use. A child
-- Neovim runs that config and records package.loaded right after setup().

local T = dofile(os.getenv("RPIV_ROOT") .. "/tests/harness.lua")
local H = {}

---Run `lines` as the init.lua of a child Neovim with the repository on 'runtimepath';
---return what the config wrote to the file named by the global `OUT`.
---@param lines string[]
---@return string[]
function H.child(lines)
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, "p")
  local out = dir .. "/out"
  local config = {
    "vim.opt.rtp:prepend(" .. string.format("%q", T.root()) .. ")",
    "OUT = " .. string.format("%q", out),
  }
  vim.list_extend(config, lines)
  vim.fn.writefile(config, dir .. "/init.lua")
  vim.fn.system({ vim.v.progpath, "--headless", "-i", "NONE", "-u", dir .. "/init.lua" })
  local written = vim.fn.filereadable(out) == 1 and vim.fn.readfile(out) or { "(the config wrote nothing)" }
  vim.fn.delete(dir, "rf")
  return written
end

-- The modules the config has loaded, one per line, written to OUT (a Lua snippet).
H.RECORD = table.concat({
  "local names = {}",
  "for name in pairs(package.loaded) do",
  '  if name == "rpiv_todo" or name:sub(1, 10) == "rpiv_todo." then names[#names + 1] = name end',
  "end",
  "table.sort(names)",
  "vim.fn.writefile(names, OUT)",
}, " ")

T.test("setup({}) in init.lua loads rpiv_todo alone: no core, tool, overlay or front end", function()
  local loaded = H.child({
    'require("rpiv_todo").setup({})',
    H.RECORD,
    'vim.cmd("qa!")',
  })
  -- rpiv_todo.host is what tells the plain layer it runs in Neovim (the core is then
  -- checked once startup is over).
  T.eq(table.concat(loaded, ","), "rpiv_todo,rpiv_todo.host", "modules loaded after setup({})")
end)

T.test("setup() with the tool's own options still loads no core and no front end", function()
  local loaded = H.child({
    'require("rpiv_todo").setup({ guidance = { prompt_snippet = "x" } })',
    H.RECORD,
    'vim.cmd("qa!")',
  })
  local text = table.concat(loaded, ",")
  T.eq(text:find("rpiv_todo.native", 1, true), nil, "no core in " .. text)
  T.eq(text:find("rpiv_todo.nvim", 1, true), nil, "no front end in " .. text)
  T.eq(text:find("rpiv_todo.overlay", 1, true), nil, "no overlay in " .. text)
end)

T.test("what setup() recorded is what the first use reads", function()
  local written = H.child({
    "local todo = require('rpiv_todo')",
    "todo.setup({ max_widget_lines = 5, guidance = { prompt_snippet = 'snippet' } })",
    "local c = todo.config",
    "vim.fn.writefile({ tostring(c.max_widget_lines), c.collapse_key, c.guidance.prompt_snippet,",
    "  todo.tool().prompt_snippet, tostring(todo.overlay.config.max_widget_lines) }, OUT)",
    'vim.cmd("qa!")',
  })
  T.eq(table.concat(written, "|"), "5|ctrl+shift+t|snippet|snippet|5", "config, tool and overlay")
end)

T.test("a second setup() before first use: absent keys are back to their defaults", function()
  local written = H.child({
    "local todo = require('rpiv_todo')",
    "todo.setup({ max_widget_lines = 5, guidance = { prompt_snippet = 'snippet' } })",
    "todo.setup({ collapse_key = 'alt+t' })",
    "local c = todo.config",
    "vim.fn.writefile({ tostring(c.max_widget_lines), c.collapse_key, c.guidance.prompt_snippet:sub(1, 32),",
    "  tostring(todo.overlay.config.max_widget_lines), todo.overlay.config.collapse_key }, OUT)",
    'vim.cmd("qa!")',
  })
  T.eq(table.concat(written, "|"), "12|alt+t|todo: a task list for multi-step|12|alt+t", "config and overlay")
end)

T.test("once startup is over the core is checked (a missing build would be reported then)", function()
  local loaded = H.child({
    'require("rpiv_todo").setup({})',
    "vim.schedule(function() vim.schedule(function()",
    H.RECORD,
    'vim.cmd("qa!") end) end)',
  })
  T.contains(table.concat(loaded, ","), "rpiv_todo.native", "the core was loaded after startup")
end)

T.test("setup() with the editor's options puts the panel in place but loads no adapter yet", function()
  local loaded = H.child({
    'require("rpiv_todo").setup({ position = "top-left" })',
    H.RECORD,
    'vim.cmd("qa!")',
  })
  local text = table.concat(loaded, ",")
  T.contains(text, "rpiv_todo.nvim.frontend", "the front end is attached")
  T.eq(text:find("rpiv_todo.adapters", 1, true), nil, "no adapter in " .. text)
end)

T.finish()
