-- tests/nvim/vim_pack_spec.lua: the README's vim.pack block, run in Neovim 0.12 with the
-- real vim.pack against a stand-in repository (a local git repository reached through a
-- file:// URL, whose scripts/build-module.sh only counts its runs): a first install builds
-- once (vim.pack fires "update" and then "install" for it), an update builds once more,
-- and git says nothing about `--filter`. Neovim releases without vim.pack run nothing but
-- the check that they are older than 0.12.

local T = dofile(os.getenv("RPIV_ROOT") .. "/tests/harness.lua")
local A = {}

if vim.pack == nil then
  T.test("vim.pack is missing only before Neovim 0.12", function()
    T.eq(vim.fn.has("nvim-0.12"), 0, "has('nvim-0.12')")
  end)
  T.finish("vim_pack_spec")
  return
end

---The README's code block after `<!-- readme-test: vim-pack -->`.
function A.readme_snippet()
  return dofile(os.getenv("RPIV_ROOT") .. "/tests/agents/common.lua").readme_snippet("readme-test: vim-pack")
end

---Run a command, raising with its output when it fails.
function A.run(cmd, cwd)
  local out = vim.system(cmd, { cwd = cwd, text = true }):wait()
  if out.code ~= 0 then
    error(table.concat(cmd, " ") .. ": " .. (out.stderr or ""), 2)
  end
  return out.stdout
end

-- A home of its own: ~/src/rpiv_todo is the stand-in repository the block installs from.
local home = vim.fn.tempname()
local repo = home .. "/src/rpiv_todo"
local count = home .. "/builds.txt"
vim.fn.mkdir(repo .. "/scripts", "p")
vim.fn.writefile({
  "#!/bin/sh",
  "# the stand-in build: one line per run, naming the folder it ran in and its argument",
  'echo "$(pwd) $1" >> ' .. vim.fn.shellescape(count),
}, repo .. "/scripts/build-module.sh")
vim.fn.setfperm(repo .. "/scripts/build-module.sh", "rwxr-xr-x")
vim.fn.writefile({ "stand-in" }, repo .. "/README")
local git = { "git", "-c", "user.name=test", "-c", "user.email=test@example.invalid", "-c", "init.defaultBranch=main" }
A.run(vim.list_extend(vim.deepcopy(git), { "init", "-q" }), repo)
A.run(vim.list_extend(vim.deepcopy(git), { "add", "-A" }), repo)
A.run(vim.list_extend(vim.deepcopy(git), { "commit", "-q", "-m", "first" }), repo)

vim.env.HOME = home
-- 'packpath' was set at startup from the old home: add the new data folder, as a Neovim
-- started with this home would have it (the block's `packadd` looks there).
vim.opt.packpath:prepend(vim.fn.stdpath("data") .. "/site")
-- The block installs the prebuilt module (require("rpiv_todo.nvim.install").run()); here each
-- such run is counted instead (tests/install/pack_spec.lua runs the real installer).
package.loaded["rpiv_todo.nvim.install"] = {
  run = function()
    local path = vim.fn.stdpath("data") .. "/site/pack/core/opt/rpiv_todo"
    vim.fn.writefile({ vim.fn.resolve(path) .. " luajit" }, count, "a")
    return true
  end,
}
local messages = {}
local notify = vim.notify
vim.notify = function(msg, level, opts)
  messages[#messages + 1] = tostring(msg)
  return notify(msg, level, opts)
end
-- Headless: vim.pack's "These plugins will be installed" question answered Yes.
local confirm = vim.fn.confirm
vim.fn.confirm = function()
  return 1
end

local function builds()
  return vim.fn.filereadable(count) == 1 and vim.fn.readfile(count) or {}
end

T.test("a first install builds once, in the installed folder", function()
  -- The block as a user copies it, with the project's URL pointing at the stand-in.
  local block, n = A.readme_snippet():gsub("https://github%.com/rpiv%-todo/rpiv_todo", "file://" .. repo)
  T.eq(n, 1, "the block names the project's URL once")
  assert(loadstring(block, "README.md vim.pack block"))()
  local path = vim.fn.stdpath("data") .. "/site/pack/core/opt/rpiv_todo"
  T.eq(vim.fn.isdirectory(path), 1, "installed under stdpath('data')")
  T.same(builds(), { vim.fn.resolve(path) .. " luajit" }, "one build, in the plugin's folder")
end)

T.test("no --filter warning from git for the file:// source", function()
  for _, m in ipairs(messages) do
    T.eq(m:find("filter", 1, true), nil, "message: " .. m)
  end
end)

T.test("an update builds once more", function()
  vim.fn.writefile({ "stand-in, changed" }, repo .. "/README")
  A.run(vim.list_extend(vim.deepcopy(git), { "commit", "-q", "-am", "second" }), repo)
  vim.pack.update({ "rpiv_todo" }, { force = true })
  T.eq(#builds(), 2, "builds after the update")
end)

vim.fn.confirm = confirm
vim.notify = notify
T.finish("vim_pack_spec")
