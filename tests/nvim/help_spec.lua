-- tests/nvim/help_spec.lua: doc/rpiv_todo.txt as Neovim reads it. It is generated whole
-- from the annotations (scripts/gen-help.lua; scripts/test.sh checks it is fresh); here:
-- :helptags takes the file without an error, every link to one of our tags lands on a tag
-- of the file, and every function the help documents exists.

local T = dofile(os.getenv("RPIV_ROOT") .. "/tests/harness.lua")
local H = {}

---The help file copied into a fresh doc/ folder, and its tags after :helptags.
---@return string[] lines, table<string, boolean> tags
function H.helptags()
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir .. "/doc", "p")
  local lines = vim.fn.readfile(T.root() .. "/doc/rpiv_todo.txt")
  vim.fn.writefile(lines, dir .. "/doc/rpiv_todo.txt")
  local ok, err = pcall(vim.cmd, "helptags " .. vim.fn.fnameescape(dir .. "/doc"))
  T.eq(ok, true, "helptags raised no error (E154 on a duplicate tag): " .. tostring(err))
  local tags = {}
  for _, line in ipairs(vim.fn.readfile(dir .. "/doc/tags")) do
    tags[line:match("^[^\t]+")] = true
  end
  return lines, tags
end

T.test(":helptags takes the help, and the generated tags are there", function()
  local _, tags = H.helptags()
  for _, tag in ipairs({
    "rpiv_todo.setup()",
    "rpiv_todo.nvim.setup()",
    "rpiv_todo-api",
    "rpiv_todo.nvim.execute()",
    "rpiv_todo.foreground()",
    "rpiv_todo.turn_started()",
    "rpiv_todo.register_chat()",
    "rpiv_todo.nvim.follow()",
    "rpiv_todo.nvim.hide()",
    "rpiv_todo.nvim.last_user_edit()",
    "RpivTodoUserEdit",
  }) do
    T.eq(tags[tag], true, "tag " .. tag)
  end
end)

T.test("every |link| to one of the plugin's tags lands on a tag of the file", function()
  local lines, tags = H.helptags()
  local broken = {}
  local in_code = false
  for lnum, line in ipairs(lines) do
    if in_code then
      in_code = not (line:match("^<") or line:match("^%S"))
    end
    if not in_code then
      for link in line:gmatch("|([^|%s]+)|") do
        local ours = link:match("^rpiv_todo") or link:match("^RpivTodo") or link:match("^:Todos")
        if ours and not tags[link] then
          broken[#broken + 1] = lnum .. ": |" .. link .. "|"
        end
      end
      in_code = line == ">" or line:match("%s>$") ~= nil
    end
  end
  T.eq(table.concat(broken, ", "), "", "broken links")
end)

T.test("every function the help documents exists in the module its tag names", function()
  local _, tags = H.helptags()
  local modules = {
    ["rpiv_todo.nvim"] = require("rpiv_todo.nvim"),
    ["rpiv_todo.persist"] = require("rpiv_todo.persist"),
    ["rpiv_todo.nvim.install"] = require("rpiv_todo.nvim.install"),
    ["rpiv_todo.core"] = require("rpiv_todo.core"),
    ["rpiv_todo"] = require("rpiv_todo"),
    ["rpiv_todo.session:"] = getmetatable(require("rpiv_todo").session("help-spec")).__index,
  }
  local missing, count = {}, 0
  for tag in pairs(tags) do
    local module, name = tag:match("^(rpiv_todo[%w_.]-)%.([%w_]+)%(%)$")
    if module == nil then
      module, name = tag:match("^(rpiv_todo%.session:)([%w_]+)%(%)$")
    end
    if module ~= nil then
      count = count + 1
      local m = modules[module]
      if m == nil or type(m[name]) ~= "function" then
        missing[#missing + 1] = tag
      end
    end
  end
  table.sort(missing)
  T.eq(table.concat(missing, ", "), "", "documented but not a function of the module named")
  T.eq(count >= 30, true, "the help documents the API (" .. count .. " functions)")
end)

T.finish()
