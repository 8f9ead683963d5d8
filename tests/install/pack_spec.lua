-- tests/install/pack_spec.lua: Neovim's own vim.pack installs the plugin from a file://
-- git remote, and the README's PackChanged autocommand runs the installer (base URL from
-- RPIV_TODO_BASE_URL, no cargo on PATH); a new Neovim with the same config then makes a
-- tool call. Needs vim.pack (Neovim 0.12). Run by tests/install/install.sh.

local T = dofile(os.getenv("RPIV_ROOT") .. "/tests/harness.lua")
local C = dofile(os.getenv("RPIV_ROOT") .. "/tests/install/common.lua")
local H = {}

H.dir = vim.fn.resolve(vim.fn.tempname())
vim.fn.mkdir(H.dir, "p")
H.data = H.dir .. "/data"
H.plugin = H.data .. "/nvim/site/pack/core/opt/rpiv_todo"

-- The user's config: the README's vim.pack block (after `<!-- readme-test: vim-pack -->`),
-- with the project's URL pointing at the local remote and vim.pack's question answered
-- (headless), then a tool call whose reply this test reads.
function H.readme_block()
  return dofile(os.getenv("RPIV_ROOT") .. "/tests/agents/common.lua").readme_snippet("readme-test: vim-pack")
end
H.block = H.readme_block()
  :gsub("https://github%.com/rpiv%-todo/rpiv_todo", function()
    return os.getenv("RPIV_REMOTE")
  end)
  :gsub('name = "rpiv_todo" } }%)', 'name = "rpiv_todo" } }, { confirm = false })')
H.config = H.dir .. "/init.lua"
vim.fn.writefile(vim.split(H.block, "\n"), H.config)
vim.fn.writefile({
  "if os.getenv('RPIV_CALL') then",
  "  local out = io.open(os.getenv('RPIV_CALL'), 'w')",
  "  local ok, text = pcall(function()",
  '    return require("rpiv_todo").tool().execute({ action = "create", subject = "From vim.pack" }).content[1].text',
  "  end)",
  "  local loaded = require('rpiv_todo.installed').loaded",
  "  out:write(tostring(text), '\\n', tostring(loaded and loaded.path), '\\n')",
  "  out:close()",
  "end",
}, H.config, "a")

function H.nvim(env)
  local set = vim.tbl_extend("force", { XDG_DATA_HOME = H.data }, env or {})
  local saved = {}
  for k, v in pairs(set) do
    saved[k] = vim.env[k]
    vim.env[k] = v
  end
  local output = vim.fn.system({ vim.v.progpath, "--headless", "-i", "NONE", "-u", H.config, "+qa!" })
  for k in pairs(set) do
    vim.env[k] = saved[k]
  end
  return output
end

T.test("vim.pack clones the plugin and the PackChanged autocommand installs the module", function()
  T.eq(type(vim.pack), "table", "this Neovim has vim.pack")
  local output = H.nvim()
  T.eq(vim.fn.isdirectory(H.plugin), 1, "cloned into " .. H.plugin .. "\n" .. output)
  local record = require("rpiv_todo.installed").read(H.plugin .. "/lib")
  T.eq(record and record.source, "downloaded", "record: source\n" .. output)
  T.eq(record and record.url, C.release .. "/v" .. C.version .. "/" .. C.asset, "record: url")
end)

T.test("a new Neovim with the same config makes a tool call", function()
  local out = H.dir .. "/call"
  local output = H.nvim({ RPIV_CALL = out })
  local lines = vim.fn.filereadable(out) == 1 and vim.fn.readfile(out) or {}
  T.eq(lines[1], "Created #1: From vim.pack (pending)", "tool reply\n" .. output)
  T.eq(lines[2], require("rpiv_todo.installed").read(H.plugin .. "/lib").path, "the installed module")
end)

vim.fn.delete(H.dir, "rf")
T.finish("tests/install/pack_spec.lua")
