-- tests/mcp/editor_spec.lua: the editor and the MCP server together, as a user has them with
-- an agent in a terminal beside Neovim. This headless Neovim runs setup({ persist = true })
-- in a project directory and starts scripts/mcp.sh there (no --state-dir: the server finds
-- Neovim's state directory itself, from the same XDG_STATE_HOME), speaking MCP to it over
-- its stdio by hand. Checks: the server's tasks show in the editor's panel within 2 s
-- (the editor watches the list file), and a `:Todos done N` typed in the editor is seen by
-- the server's next `list`. scripts/test.sh builds the server first; run by hand:
--   cargo build --release -p rpiv_todo_mcp && RPIV_ROOT=$PWD RPIV_SPEC=tests/mcp/editor_spec.lua \
--     nvim --headless -u NONE -i NONE --noplugin -c "luafile scripts/nvim-runner.lua"

local T = dofile(os.getenv("RPIV_ROOT") .. "/tests/harness.lua")
local H = {}

H.root = T.root()
H.project = vim.fn.resolve(vim.fn.tempname())
vim.fn.mkdir(H.project, "p")
vim.cmd("cd " .. vim.fn.fnameescape(H.project))

vim.cmd("runtime plugin/rpiv_todo.lua")
require("rpiv_todo").setup({ locale = "en", persist = true })
local nv = require("rpiv_todo.nvim")

---The panel's text ("" while hidden).
function H.panel()
  local win, buf = nv.window()
  return win and table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n") or ""
end

-- The server, spoken to line by line (JSON-RPC messages, one per line).
H.replies = {}
H.partial = ""
H.stderr = {}
H.job = vim.fn.jobstart({ H.root .. "/scripts/mcp.sh" }, {
  cwd = H.project,
  on_stdout = function(_, data)
    data[1] = H.partial .. data[1]
    H.partial = table.remove(data)
    for _, line in ipairs(data) do
      if line ~= "" then
        local ok, msg = pcall(vim.json.decode, line)
        if ok and type(msg) == "table" and msg.id ~= nil then
          H.replies[msg.id] = msg
        end
      end
    end
  end,
  on_stderr = function(_, data)
    vim.list_extend(H.stderr, data)
  end,
})
assert(H.job > 0, "could not start scripts/mcp.sh")
H.next_id = 0

---Send a request; wait for its answer (the first call may still be building the server).
function H.request(method, params)
  H.next_id = H.next_id + 1
  local id = H.next_id
  vim.fn.chansend(H.job, vim.json.encode({ jsonrpc = "2.0", id = id, method = method, params = params }) .. "\n")
  local done = vim.wait(600000, function()
    return H.replies[id] ~= nil
  end, 20)
  if not done then
    error("no answer to " .. method .. "; server stderr: " .. table.concat(H.stderr, "\n"), 2)
  end
  return H.replies[id]
end

---A todo call; the reply text.
function H.call(arguments)
  local reply = H.request("tools/call", { name = "todo", arguments = arguments })
  assert(reply.result, "a result: " .. vim.inspect(reply))
  return reply.result.content[1].text
end

T.test("the server answers in the editor's directory", function()
  local init = H.request("initialize", {
    protocolVersion = "2025-11-25",
    capabilities = vim.empty_dict(),
    clientInfo = { name = "editor_spec", version = "1" },
  })
  T.eq(init.result.serverInfo.name, "rpiv_todo", "initialize")
  vim.fn.chansend(H.job, vim.json.encode({ jsonrpc = "2.0", method = "notifications/initialized" }) .. "\n")
  T.eq(H.panel(), "", "nothing in the panel yet")
  T.eq(H.call({ action = "create", subject = "Write the parser" }), "Created #1: Write the parser (pending)")
  T.eq(H.call({ action = "create", subject = "Ship it", blockedBy = { 1 } }), "Created #2: Ship it (pending)")
end)

T.test("the server's tasks show in the editor's panel within 2 s", function()
  local shown = vim.wait(2000, function()
    return H.panel():find("Ship it", 1, true) ~= nil
  end, 20)
  T.eq(shown, true, "the panel shows the server's list; panel:\n" .. H.panel())
  T.eq(
    H.panel(),
    table.concat({ -- padding = 1: a space on each side
      " ● Todos (0/2) ",
      " ├─ ○ #1 Write the parser ",
      " └─ ○ #2 Ship it ⛓ #1 ",
    }, "\n"),
    "the panel"
  )
end)

T.test(":Todos done N typed in the editor is seen by the server's next list", function()
  vim.cmd("Todos done 1")
  T.eq(
    H.call({ action = "list" }),
    "[completed] #1 Write the parser\n[pending] #2 Ship it ⛓ #1"
      -- The user's edit, told once to the server's next reply (issue 38).
      .. "\n(Changed by others since your last call: #1 completed by the user.)",
    "the server's list after the editor's edit"
  )
  T.eq(H.call({ action = "update", id = 2, status = "in_progress" }), "Updated #2 (pending → in_progress)")
  local shown = vim.wait(2000, function()
    return H.panel():find("◐ #2 Ship it", 1, true) ~= nil
  end, 20)
  T.eq(shown, true, "and the editor follows the server again; panel:\n" .. H.panel())
end)

vim.fn.chanclose(H.job, "stdin")
vim.fn.jobwait({ H.job }, 5000)
T.finish()
