-- tests/agents/avante_http_spec.lua: the README's avante setup, run as a user runs it: a
-- prompt asked in avante's sidebar (`require("avante.api").ask`, what :AvanteAsk does),
-- avante's OpenAI provider talking HTTP (plenary.curl, curl) to a scripted
-- OpenAI-compatible server on 127.0.0.1 (tests/agents/server.py) that streams tool calls
-- the way the API does; the server records every request. avante's prompt renderer (a Rust
-- library, avante_templates) is not built here: a stand-in renders the system prompt.
--
--   RPIV_DEPS   folder with the pinned plugins (default ../shared/deps from the repo)
--
-- Without the plugins the spec raises "skipped: ...": it never passes without running.

-- test.sh needs: avante.nvim plenary.nvim nui.nvim

local T = dofile(os.getenv("RPIV_ROOT") .. "/tests/harness.lua")
local A = dofile(T.root() .. "/tests/agents/common.lua")

A.require_deps({ "plenary.nvim", "nui.nvim", "avante.nvim" })

package.preload["avante_templates"] = function()
  return {
    initialize = function() end,
    render = function(_, context)
      return "You are a helpful assistant (system prompt stand-in). " .. tostring(context and context.system_info or "")
    end,
  }
end

local server = A.start_server({
  -- prompt 1
  {
    tool_calls = {
      { "todo", '{"action":"create","subject":"Write the parser"}' },
      { "todo", '{"action":"create","subject":"Test the parser"}' },
      { "todo", '{"action":"update","id":1,"status":"completed"}' },
    },
  },
  { tool_calls = { { "attempt_completion", '{"result":"The parser is written."}' } } },
  -- prompt 2
  { tool_calls = { { "attempt_completion", '{"result":"Nothing more to do."}' } } },
}, "never")

vim.env.OPENAI_API_KEY = "sk-test-not-a-key"

local todo = require("rpiv_todo")
todo.setup({ locale = "en" })
vim.cmd("runtime plugin/rpiv_todo.lua")

-- The README's block runs as written; the test adds only the model endpoint, a scratch
-- history folder and no confirmation prompts for avante's own tools.
local avante = require("avante")
local real_setup = avante.setup
avante.setup = function(config)
  config.provider = "openai"
  config.providers = { openai = { endpoint = server.url .. "/v1", model = "scripted-model", timeout = 10000 } }
  config.history = { storage_path = vim.fn.tempname() }
  config.behaviour = { auto_approve_tool_permissions = true, auto_suggestions = false }
  return real_setup(config)
end
assert(loadstring(A.readme_snippet("readme-test: avante"), "README.md avante block"))()
avante.setup = real_setup

local code_buf = vim.api.nvim_get_current_buf()
vim.api.nvim_buf_set_lines(code_buf, 0, -1, false, { "print('hello')" })

local function panel_lines()
  local win, buf = require("rpiv_todo.nvim").window()
  if win == nil then
    return {}
  end
  return vim.tbl_map(vim.trim, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
end

-- Ask in the sidebar and wait until the server has answered `n` more requests and avante
-- has stopped generating.
local function ask(question, n)
  local before = #server.posts()
  require("avante.api").ask({ question = question, without_selection = true })
  local ok = vim.wait(10000, function()
    local sidebar = require("avante").get(false)
    return #server.posts() >= before + n and sidebar ~= nil and not sidebar.is_generating
  end, 20)
  if not ok then
    error(string.format("timed out: %d of %d requests for %q", #server.posts() - before, n, question), 2)
  end
  local posts = server.posts()
  return vim.list_slice(posts, before + 1, #posts)
end

local function tool_names(body)
  local names = {}
  for _, tool in ipairs(body.tools or {}) do
    names[#names + 1] = tool["function"] and tool["function"].name or tool.name
  end
  table.sort(names)
  return names
end

local POSTS

T.test("avante: the README's setup offers one todo tool, and the first prompt fills the panel", function()
  POSTS = ask("Plan the parser work", 2)
  local names = tool_names(POSTS[1].body)
  T.ok(vim.tbl_contains(names, "todo"), "the todo tool is offered: " .. table.concat(names, ", "))
  T.eq(vim.tbl_contains(names, "write_todos"), false, "avante's write_todos is not")
  T.eq(vim.tbl_contains(names, "read_todos"), false, "avante's read_todos is not")
  local results = A.tool_results(POSTS[2].body)
  T.eq(results["call_1_1"], "Created #1: Write the parser (pending)", "first result")
  T.eq(results["call_1_2"], "Created #2: Test the parser (pending)", "second result")
  T.eq(results["call_1_3"], "Updated #1 (pending → completed)", "third result")
end)

T.test("avante: no model list is asked for", function()
  local gets = vim.tbl_filter(function(r)
    return r.method == "GET"
  end, server.requests())
  T.eq(#gets, 0, "GET requests")
end)

T.test("avante: a completed task shows until the next prompt, then falls away", function()
  vim.api.nvim_set_current_win(vim.fn.bufwinid(code_buf))
  T.same(
    panel_lines(),
    { "● Todos (1/2)", "├─ ✓ Write the parser", "└─ ○ Test the parser" },
    "after prompt 1"
  )
  ask("Anything else?", 1)
  vim.api.nvim_set_current_win(vim.fn.bufwinid(code_buf))
  T.same(panel_lines(), { "● Todos (0/1)", "└─ ○ Test the parser" }, "after prompt 2")
end)

T.test("avante: in the sidebar the panel shows that chat's list, elsewhere the latest call", function()
  local nv = require("rpiv_todo.nvim")
  nv.execute({ action = "create", subject = "Elsewhere" }, { session = "another-front-end" })
  vim.api.nvim_set_current_win(vim.fn.bufwinid(code_buf))
  T.same(panel_lines(), { "● Todos (0/1)", "└─ ○ Elsewhere" }, "code window: the latest call")
  local sidebar = require("avante").get(false)
  vim.api.nvim_set_current_win(sidebar.containers.input.winid)
  T.same(panel_lines(), { "● Todos (0/1)", "└─ ○ Test the parser" }, "avante's input window: its chat")
  vim.api.nvim_set_current_win(sidebar.containers.result.winid)
  T.same(panel_lines(), { "● Todos (0/1)", "└─ ○ Test the parser" }, "avante's result window: its chat")
  vim.api.nvim_set_current_win(vim.fn.bufwinid(code_buf))
  T.same(panel_lines(), { "● Todos (0/1)", "└─ ○ Elsewhere" }, "back in the code window")
end)

server.stop()
T.note(#server.requests() .. " requests served by tests/agents/server.py on 127.0.0.1")
T.finish("avante over HTTP")
