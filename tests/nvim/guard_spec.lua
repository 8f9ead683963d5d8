-- tests/nvim/guard_spec.lua: the guarded load of the native module, seen from Neovim.
-- A copy of the Lua scripts on a temporary 'runtimepath' without core.so must fail with
-- a message naming the build step; a core reporting another version must be refused and
-- the message must say to rebuild. In-process: the repository leaves 'runtimepath' and
-- package.loaded for the duration, and both come back afterwards.

local N = dofile(os.getenv("RPIV_ROOT") .. "/tests/nvim/helpers.lua")
local T = N.T
local H = {}

H.root = T.root()
H.version = T.cargo_version()

---Copy the Lua scripts (lua/rpiv_todo/**/*.lua) into `dir`/lua/rpiv_todo/.
function H.copy_scripts(dir)
  local dest = dir .. "/lua/rpiv_todo"
  local from = H.root .. "/lua/rpiv_todo/"
  for _, file in ipairs(vim.fn.glob(from .. "**/*.lua", false, true)) do
    local target = dest .. "/" .. file:sub(#from + 1)
    vim.fn.mkdir(vim.fn.fnamemodify(target, ":h"), "p")
    vim.fn.writefile(vim.fn.readfile(file, "b"), target, "b")
  end
  return dest
end

T.test("the real build loads first (baseline)", function()
  local todo = require("rpiv_todo")
  T.eq(todo.core.version, H.version, "version")
end)

T.test("a missing native library is one notification naming the plugin's path and the build command", function()
  local dir = vim.fn.resolve(vim.fn.tempname())
  H.copy_scripts(dir)
  local notes = {}
  local saved_notify = vim.notify
  vim.notify = function(msg, level)
    notes[#notes + 1] = { msg = msg, level = level }
  end
  local ok, err = pcall(N.isolated, dir, function()
    -- What a config does at startup: it must not stop the rest of the config.
    local loaded, todo = pcall(require, "rpiv_todo")
    T.eq(loaded, true, "require does not raise in Neovim: " .. tostring(todo))
    T.eq(pcall(todo.setup, {}), true, "setup({}) works without the library")
    require("rpiv_todo.nvim") -- the front end loads too
    -- Using the core raises the same short message.
    local used, msg = pcall(function()
      return todo.session("x"):execute({ action = "list" })
    end)
    T.eq(used, false, "a tool call cannot run")
    T.contains(tostring(msg), "scripts/build-module.sh luajit", "the call's error names the build command")
    T.eq(select(2, tostring(msg):gsub("\n", "")) <= 3, true, "a short message, not a search list")
    -- The commands say the same in one notification, without a traceback.
    require("rpiv_todo.nvim.commands").create()
    vim.cmd("Todos")
    vim.cmd("TodosToggle")
    -- The commands attached this copy's front end: take it out again (its autocmds
    -- would outlive the copy).
    require("rpiv_todo.nvim.frontend").detach()
    pcall(vim.api.nvim_del_user_command, "Todos")
    pcall(vim.api.nvim_del_user_command, "TodosToggle")
  end)
  vim.notify = saved_notify
  if not ok then
    error(err, 0)
  end
  T.eq(#notes, 3, "one notification at load, one per command")
  for i = 2, 3 do
    T.eq(notes[i].level, vim.log.levels.ERROR, "command " .. i .. ": an error")
    T.contains(notes[i].msg, "scripts/build-module.sh luajit", "command " .. i .. ": the build command")
    T.eq(notes[i].msg:find("traceback", 1, true), nil, "command " .. i .. ": no traceback")
  end
  T.eq(notes[1].level, vim.log.levels.ERROR, "an error")
  T.contains(notes[1].msg, "cd " .. dir .. " && scripts/build-module.sh luajit", "absolute path and exact command")
  T.contains(notes[1].msg, ":checkhealth rpiv_todo", "where to read more")
  T.eq(notes[1].msg:find("no file", 1, true), nil, "no search list of tried files")
  T.eq(notes[1].msg:find("traceback", 1, true), nil, "no traceback")
  vim.fn.delete(dir, "rf")
end)

T.test("a missing native library at startup: one message, the rest of the config still runs", function()
  local dir = vim.fn.resolve(vim.fn.tempname())
  H.copy_scripts(dir)
  local config = dir .. "/init.lua"
  vim.fn.writefile({
    "vim.opt.rtp:prepend(" .. string.format("%q", dir) .. ")",
    'require("rpiv_todo").setup({})',
    "vim.g.after_setup = 1",
    'vim.cmd("runtime plugin/rpiv_todo.lua")',
    "vim.defer_fn(function()",
    "  local out = io.open(" .. string.format("%q", dir .. "/out") .. ', "w")',
    '  out:write(tostring(vim.g.after_setup), "\\n", vim.fn.execute("messages"))',
    "  out:close()",
    '  vim.cmd("qa!")',
    "end, 10)",
  }, config)
  vim.fn.system({ vim.v.progpath, "--headless", "-i", "NONE", "-u", config })
  local out = vim.fn.readfile(dir .. "/out")
  T.eq(out[1], "1", "the config ran past setup()")
  local text = table.concat(out, "\n", 2)
  T.contains(text, "cd " .. dir .. " && scripts/build-module.sh luajit", "the message")
  T.eq(text:find("traceback", 1, true), nil, "no traceback in:\n" .. text)
  T.eq(select(2, text:gsub("native module is not built", "")), 1, "said once")
  vim.fn.delete(dir, "rf")
end)

T.test("a native library of another version is refused: one message with both versions and :TodosInstall", function()
  local dir = vim.fn.tempname()
  local dest = H.copy_scripts(dir)
  -- A stand-in core (Lua files are found before .so on 'runtimepath').
  vim.fn.writefile({ 'return { version = "0.0.0-stale", flavour = "luajit" }' }, dest .. "/core.lua")
  local notes = {}
  local saved_notify = vim.notify
  vim.notify = function(msg, level)
    notes[#notes + 1] = { msg = msg, level = level }
  end
  local ok, err = pcall(N.isolated, dir, function()
    local loaded, todo = pcall(require, "rpiv_todo")
    T.eq(loaded, true, "require does not raise in Neovim: " .. tostring(todo))
    local used, msg = pcall(function()
      return todo.session("x"):execute({ action = "list" })
    end)
    T.eq(used, false, "a tool call cannot run")
    T.contains(tostring(msg), "0.0.0-stale", "the call's error names the library's version")
  end)
  vim.notify = saved_notify
  if not ok then
    error(err, 0)
  end
  T.eq(#notes, 1, "one notification")
  local msg = notes[1] and notes[1].msg or ""
  T.eq(notes[1] and notes[1].level, vim.log.levels.ERROR, "an error")
  T.contains(msg, "version 0.0.0-stale", "names the library's version")
  T.contains(msg, "version " .. H.version, "names the scripts' version")
  T.contains(msg, ":TodosInstall", "names the fix")
  T.contains(msg, "rebuild", "and the rebuild step")
  vim.fn.delete(dir, "rf")
end)

T.test("a native library of another version at startup: one error once the config has run", function()
  local dir = vim.fn.resolve(vim.fn.tempname())
  local dest = H.copy_scripts(dir)
  vim.fn.writefile({ 'return { version = "0.0.0-stale", flavour = "luajit" }' }, dest .. "/core.lua")
  local config = dir .. "/init.lua"
  vim.fn.writefile({
    "vim.opt.rtp:prepend(" .. string.format("%q", dir) .. ")",
    'require("rpiv_todo").setup({})',
    "vim.g.after_setup = 1",
    "vim.defer_fn(function()",
    "  local out = io.open(" .. string.format("%q", dir .. "/out") .. ', "w")',
    '  out:write(tostring(vim.g.after_setup), "\\n", vim.fn.execute("messages"))',
    "  out:close()",
    '  vim.cmd("qa!")',
    "end, 10)",
  }, config)
  vim.fn.system({ vim.v.progpath, "--headless", "-i", "NONE", "-u", config })
  local out = vim.fn.readfile(dir .. "/out")
  T.eq(out[1], "1", "the config ran past setup()")
  local text = table.concat(out, "\n", 2)
  T.contains(text, "0.0.0-stale", "names the library's version in:\n" .. text)
  T.contains(text, "rebuild", "says to rebuild")
  T.eq(select(2, text:gsub("but the Lua scripts are version", "")), 1, "said once in:\n" .. text)
  vim.fn.delete(dir, "rf")
end)

T.test(":checkhealth reports the missing library as an ERROR with the build step", function()
  local dir = vim.fn.tempname()
  H.copy_scripts(dir)
  N.isolated(dir, function()
    require("rpiv_todo.health") -- from the copy
    vim.cmd("checkhealth rpiv_todo")
    local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
    T.contains(text, "ERROR", "an error is reported")
    T.contains(text, "scripts/build-module.sh luajit", "the advice names the build script")
  end)
  vim.fn.delete(dir, "rf")
end)

---:checkhealth rpiv_todo's text; the health buffer is wiped afterwards.
function H.health()
  vim.cmd("checkhealth rpiv_todo")
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  vim.cmd("bwipeout!")
  return text
end

T.test(":checkhealth reports a stale library as an ERROR naming both versions and the rebuild step", function()
  local dir = vim.fn.tempname()
  local dest = H.copy_scripts(dir)
  vim.fn.writefile({ 'return { version = "0.0.0-stale", flavour = "luajit" }' }, dest .. "/core.lua")
  N.isolated(dir, function()
    local text = H.health()
    T.contains(text, "ERROR", "an error is reported")
    T.contains(text, "0.0.0-stale", "the library's version")
    T.contains(text, H.version, "the scripts' version")
    T.contains(text, "scripts/build-module.sh luajit", "the advice names the build script")
  end)
  vim.fn.delete(dir, "rf")
end)

T.test(":checkhealth reports a library built for another Lua as an ERROR", function()
  local dir = vim.fn.tempname()
  local dest = H.copy_scripts(dir)
  vim.fn.writefile({ 'return { version = "' .. H.version .. '", flavour = "lua54" }' }, dest .. "/core.lua")
  N.isolated(dir, function()
    local text = H.health()
    T.contains(text, "ERROR", "an error is reported")
    T.contains(text, "lua54", "names the flavour found")
    T.contains(text, "scripts/build-module.sh luajit", "the advice names the build script")
  end)
  vim.fn.delete(dir, "rf")
end)

T.test(":checkhealth warns about a second core.so on 'runtimepath' and about an unmappable collapse key", function()
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir .. "/lua/rpiv_todo", "p")
  vim.fn.writefile(vim.fn.readfile(H.root .. "/lua/rpiv_todo/core.so", "b"), dir .. "/lua/rpiv_todo/core.so", "b")
  local saved = vim.o.runtimepath
  vim.cmd("set rtp+=" .. vim.fn.fnameescape(dir))
  require("rpiv_todo").setup({ locale = "en", collapse_key = "t" })
  local ok, text = pcall(H.health)
  vim.o.runtimepath = saved
  require("rpiv_todo").setup({ locale = "en" })
  vim.fn.delete(dir, "rf")
  if not ok then
    error(text, 0)
  end
  T.eq(text:find("ERROR", 1, true), nil, "no ERROR in:\n" .. text)
  T.contains(text, "several builds on 'runtimepath'", "second build")
  T.contains(text, dir .. "/lua/rpiv_todo/core.so", "names the second build")
  T.contains(text, 'collapse_key "t" is not mapped', "bare key")
  T.contains(text, "WARN", "warnings are reported")
end)

T.test("the real build still works afterwards", function()
  local todo = require("rpiv_todo")
  local result = todo.session("after"):execute({ action = "create", subject = "Still here" })
  T.eq(result.content[1].text, "Created #1: Still here (pending)", "content")
end)

T.test("a missing native library: a value the scripts read (array_mt) raises the build message", function()
  local dir = vim.fn.resolve(vim.fn.tempname())
  H.copy_scripts(dir)
  local notify = vim.notify
  vim.notify = function() end
  N.isolated(dir, function()
    local ok, err = pcall(function()
      return require("rpiv_todo.native").array_mt
    end)
    T.eq(ok, false, "reading array_mt raised")
    T.contains(tostring(err), "cd " .. dir .. " && scripts/build-module.sh luajit", "the build message")
    -- A tool call whose JSON text holds an empty array reaches the same message, not
    -- a setmetatable error about a function.
    ok, err = pcall(function()
      return require("rpiv_todo").tool().execute('{"action":"create","subject":"a","blockedBy":[]}')
    end)
    T.eq(ok, false, "the call raised")
    T.contains(tostring(err), "native module is not built", "the build message")
    T.eq(tostring(err):find("setmetatable", 1, true), nil, "no setmetatable error: " .. tostring(err))
  end)
  vim.notify = notify
  vim.fn.delete(dir, "rf")
end)

T.finish()
