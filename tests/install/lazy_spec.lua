-- tests/install/lazy_spec.lua: the real lazy.nvim (RPIV_LAZY, the pinned copy from
-- $RPIV_DEPS) installs the plugin from a file:// git remote with the README's build
-- function, RPIV_TODO_BASE_URL pointing at the local release and no cargo on PATH; a new
-- Neovim with the same config then makes a tool call. Run by tests/install/install.sh.

local T = dofile(os.getenv("RPIV_ROOT") .. "/tests/harness.lua")
local C = dofile(os.getenv("RPIV_ROOT") .. "/tests/install/common.lua")
local H = {}

H.dir = vim.fn.resolve(vim.fn.tempname())
H.root = H.dir .. "/lazy"
H.plugin = H.root .. "/rpiv_todo"
vim.fn.mkdir(H.dir, "p")

-- The user's config: the README's lazy.nvim snippet, with the test's own folders.
H.config = H.dir .. "/init.lua"
vim.fn.writefile({
  "vim.opt.rtp:prepend(" .. string.format("%q", os.getenv("RPIV_LAZY")) .. ")",
  'require("lazy").setup({',
  "  {",
  "    url = " .. string.format("%q", os.getenv("RPIV_REMOTE")) .. ",",
  '    name = "rpiv_todo",',
  '    build = function() require("rpiv_todo.nvim.install").run() end,',
  "    config = function() require('rpiv_todo').setup({}) end,",
  "  },",
  "}, {",
  "  root = " .. string.format("%q", H.root) .. ",",
  "  lockfile = " .. string.format("%q", H.dir .. "/lazy-lock.json") .. ",",
  "  change_detection = { enabled = false },",
  "})",
  "if os.getenv('RPIV_CALL') then",
  "  local out = io.open(os.getenv('RPIV_CALL'), 'w')",
  "  local ok, text = pcall(function()",
  '    return require("rpiv_todo").tool().execute({ action = "create", subject = "From lazy" }).content[1].text',
  "  end)",
  "  local loaded = require('rpiv_todo.installed').loaded",
  "  out:write(tostring(text), '\\n', tostring(loaded and loaded.path), '\\n')",
  "  out:close()",
  "end",
}, H.config)

function H.nvim(env)
  local saved = {}
  for k, v in pairs(env or {}) do
    saved[k] = vim.env[k]
    vim.env[k] = v
  end
  local output = vim.fn.system({ vim.v.progpath, "--headless", "-i", "NONE", "-u", H.config, "+qa!" })
  for k in pairs(env or {}) do
    vim.env[k] = saved[k]
  end
  return output
end

T.test("no cargo on PATH, RPIV_TODO_BASE_URL set", function()
  T.eq(vim.fn.executable("cargo"), 0, "no cargo")
  T.eq(vim.env.RPIV_TODO_BASE_URL, C.release, "base URL")
end)

T.test("lazy.nvim clones the plugin and its build function installs the module", function()
  local output = H.nvim()
  T.eq(vim.fn.isdirectory(H.plugin .. "/.git"), 1, "cloned into " .. H.plugin .. "\n" .. output)
  local record = require("rpiv_todo.installed").read(H.plugin .. "/lib")
  T.eq(record and record.source, "downloaded", "record: source\n" .. output)
  T.eq(record and record.url, C.release .. "/v" .. C.version .. "/" .. C.asset, "record: url")
  T.eq(C.read(record.path), C.read(C.dist .. "/" .. C.asset), "the release's asset")
  T.eq(vim.fn.filereadable(H.plugin .. "/lua/rpiv_todo/core.so"), 0, "nothing was built")
end)

T.test("a new Neovim with the same config makes a tool call", function()
  local out = H.dir .. "/call"
  local output = H.nvim({ RPIV_CALL = out })
  local lines = vim.fn.filereadable(out) == 1 and vim.fn.readfile(out) or {}
  T.eq(lines[1], "Created #1: From lazy (pending)", "tool reply\n" .. output)
  T.eq(lines[2], require("rpiv_todo.installed").read(H.plugin .. "/lib").path, "the installed module")
end)

vim.fn.delete(H.dir, "rf")
T.finish("tests/install/lazy_spec.lua")
