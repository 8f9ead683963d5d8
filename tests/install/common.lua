-- tests/install/common.lua: helpers of the install specs (tests/install/*_spec.lua), which
-- run inside headless Neovim through scripts/nvim-runner.lua with RPIV_ROOT set to a fresh
-- clone of the repository (tests/install/install.sh makes it and serves the release).

local M = {}

M.root = os.getenv("RPIV_ROOT")
M.version = os.getenv("RPIV_VERSION")
M.release = os.getenv("RPIV_RELEASE_URL") -- http://127.0.0.1:<port>, the good release
M.dead = os.getenv("RPIV_DEAD_URL") -- a port nothing listens on
M.log = os.getenv("RPIV_SERVER_LOG")
M.asset = os.getenv("RPIV_ASSET") -- rpiv_todo_core-<triple>.so
M.server_asset = os.getenv("RPIV_SERVER_ASSET") -- rpiv_todo_mcp-<triple>
M.dist = os.getenv("RPIV_DIST") -- the folder holding the good asset and its .sha256

---The whole content of a file, or nil.
function M.read(path)
  local file = io.open(path, "rb")
  if not file then
    return nil
  end
  local data = file:read("*a")
  file:close()
  return data
end

---The record run() left in <clone>/lib, parsed the way the loader parses it.
function M.record()
  return require("rpiv_todo.installed").read(M.root .. "/lib")
end

---A new headless Neovim on this clone makes one tool call; returns the reply text (or the
---error) and the path of the module it loaded.
function M.tool_call_in_new_nvim(extra_env)
  local out = vim.fn.tempname()
  local script = vim.fn.tempname() .. ".lua"
  vim.fn.writefile({
    "local out = io.open(" .. string.format("%q", out) .. ', "w")',
    "local ok, text = pcall(function()",
    '  local result = require("rpiv_todo").tool().execute({ action = "create", subject = "Ship it" })',
    "  return result.content[1].text",
    "end)",
    'local loaded = require("rpiv_todo.installed").loaded',
    -- A Lua error raised through the module's frames (LuaJIT unwinds them with the
    -- system's libgcc_s): answered, never a crash.
    'local _, raised = pcall(require("rpiv_todo.core").list, 5)',
    'out:write(tostring(text), "\\n", tostring(loaded and loaded.path), "\\n", tostring(raised):match("^[^\\n]*"), "\\n")',
    "out:close()",
    'vim.cmd("qa!")',
  }, script)
  local cmd = {
    vim.v.progpath,
    "--headless",
    "-u",
    "NONE",
    "-i",
    "NONE",
    "--cmd",
    "set rtp^=" .. vim.fn.fnameescape(M.root),
    "-c",
    "luafile " .. vim.fn.fnameescape(script),
  }
  if extra_env then
    local saved = {}
    for k, v in pairs(extra_env) do
      saved[k] = vim.env[k]
      vim.env[k] = v
    end
    vim.fn.system(cmd)
    for k in pairs(extra_env) do
      vim.env[k] = saved[k]
    end
  else
    vim.fn.system(cmd)
  end
  local lines = vim.fn.filereadable(out) == 1 and vim.fn.readfile(out) or {}
  os.remove(out)
  os.remove(script)
  return lines[1], lines[2], lines[3]
end

---The MCP server's record run() left in <clone>/lib/mcp.txt, with `path` added.
function M.server_record()
  return require("rpiv_todo.nvim.install").server(M.root .. "/lib")
end

---Start an MCP server as an agent does (tests/install/mcp_probe.py): initialize (timed,
---`starts` times), tools/list, create / list / a rejected update. Returns the probe's
---report (a table), with `failure` set when it could not talk to the server.
---@param command string[] the server command
---@param starts? integer how many times to start it (initialize timed each time)
function M.probe(command, starts)
  local state = vim.fn.tempname()
  local cwd = vim.fn.tempname()
  vim.fn.mkdir(cwd, "p")
  local cmd =
    { "python3", M.root .. "/tests/install/mcp_probe.py", "--cwd", cwd, "--starts", tostring(starts or 1), "--" }
  vim.list_extend(cmd, command)
  vim.list_extend(cmd, { "--state-dir", state })
  local out = vim.fn.system(cmd)
  vim.fn.delete(state, "rf")
  vim.fn.delete(cwd, "rf")
  local ok, report = pcall(vim.json.decode, out)
  if not ok or type(report) ~= "table" then
    return { failure = "mcp_probe.py printed: " .. out }
  end
  return report
end

---The smallest of a list of numbers.
function M.min(list)
  local m = math.huge
  for _, v in ipairs(list or {}) do
    m = math.min(m, v)
  end
  return m
end

---The server log's lines.
function M.log_lines()
  local text = M.read(M.log) or ""
  local lines = {}
  for line in text:gmatch("[^\n]+") do
    lines[#lines + 1] = line
  end
  return lines
end

return M
