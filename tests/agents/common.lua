-- tests/agents/common.lua: what the specs that drive the real agent plugins share: finding
-- the pinned plugins ($RPIV_DEPS), a recording stand-in for plenary.curl (nothing is
-- sent), waiting for scheduled work, finding the todo tool in a request body of any
-- provider, and writing what was recorded to $RPIV_CAPTURE for check_requests.py.
-- Runs inside Neovim only; loaded with dofile().

local M = {}
local H = {}

---The folder of the pinned plugins.
---@return string
function M.deps()
  local deps = os.getenv("RPIV_DEPS")
  if deps == nil or deps == "" then
    deps = os.getenv("RPIV_ROOT") .. "/../shared/deps"
  end
  return deps
end

---Put the pinned plugins on 'runtimepath'; raise "skipped: ..." when one is missing, so a
---spec without them never passes.
---@param names string[]
function M.require_deps(names)
  local deps = M.deps()
  for _, name in ipairs(names) do
    local dir = deps .. "/" .. name
    if vim.fn.isdirectory(dir) == 0 then
      error("skipped: " .. dir .. " not found (set RPIV_DEPS to the folder of the pinned agent plugins)", 0)
    end
    vim.opt.runtimepath:append(dir)
  end
end

---Read a request body: a file path (codecompanion writes the body to a file) or the text.
---@param body any
---@return any decoded
function H.body(body)
  if type(body) == "string" and vim.fn.filereadable(body) == 1 then
    body = table.concat(vim.fn.readfile(body, "b"), "\n")
  end
  if type(body) == "string" then
    local ok, decoded = pcall(vim.json.decode, body)
    return ok and decoded or body
  end
  return body
end

---Replace plenary.curl with a recorder before any plugin loads it. Every call is kept as
---{ url, body, opts }; `M.replies` (if set) is called with (opts, record) to play an answer.
---@param label string names the capture files
---@return table[] requests
function M.stub_curl(label)
  M.label = label
  local requests = {}
  local function record(method)
    return function(url, opts)
      if type(url) == "table" then
        opts, url = url, url.url
      end
      opts = opts or {}
      local rec = { method = method, url = url, body = H.body(opts.body), raw_body = opts.body }
      requests[#requests + 1] = rec
      if M.replies then
        M.replies(opts, rec)
      end
      return { args = {}, shutdown = function() end, pid = -1, is_shutdown = false }
    end
  end
  package.loaded["plenary.curl"] = {
    post = record("post"),
    get = record("get"),
    request = record("request"),
    put = record("put"),
    patch = record("patch"),
    delete = record("delete"),
    head = record("head"),
  }
  return requests
end

---Wait (running scheduled callbacks) until `cond()` holds; raise naming `what` otherwise.
---@param cond fun(): boolean
---@param what string
function M.wait_for(cond, what)
  if not vim.wait(5000, cond, 10) then
    error("timed out waiting for " .. what, 2)
  end
end

---The todo tool's entry in a request body (OpenAI chat and responses, Anthropic, Gemini).
---@param body table
---@param name string
---@return table|nil
function M.find_tool(body, name)
  for _, tool in ipairs(type(body) == "table" and body.tools or {}) do
    if tool.name == name or (type(tool["function"]) == "table" and tool["function"].name == name) then
      return tool
    end
    for _, decl in ipairs(tool.functionDeclarations or tool.function_declarations or {}) do
      if decl.name == name then
        return decl
      end
    end
  end
  return nil
end

---Write `value` as JSON to $RPIV_CAPTURE/<name>.json (nothing when RPIV_CAPTURE is unset).
---@param name string
---@param value any
function M.capture_json(name, value)
  local dir = os.getenv("RPIV_CAPTURE")
  if dir == nil or dir == "" then
    return
  end
  vim.fn.mkdir(dir, "p")
  vim.fn.writefile({ vim.json.encode(value) }, dir .. "/" .. name .. ".json", "b")
end

---Write every recorded request to $RPIV_CAPTURE/<label>-request-<n>.json.
---@param requests table[]
function M.save_requests(requests)
  for i, req in ipairs(requests) do
    M.capture_json(string.format("%s-request-%02d", M.label, i), { url = req.url, body = req.body, label = M.label })
  end
end

---Start tests/agents/server.py (a scripted OpenAI-compatible server on 127.0.0.1) with the
---answers in `script` (see the server's docstring); `models` says how it answers a model
---list ("ok", "slow", "never"). Returns { url, port, requests(), stop() }: `requests()`
---reads what the server has received so far ({ method, path, body } each, in order). The
---server stops with stop(), when Neovim exits, or after 120 seconds on its own.
---`call_prefix` starts its tool call ids (default "call": `call_<request>_<call>`).
---@param script table[]
---@param models? string
---@param call_prefix? string
---@return table server
function M.start_server(script, models, call_prefix)
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, "p")
  local script_path, log_path = dir .. "/script.json", dir .. "/requests.jsonl"
  vim.fn.writefile({ vim.json.encode(script) }, script_path, "b")
  local port
  local job = vim.fn.jobstart({
    "python3",
    os.getenv("RPIV_ROOT") .. "/tests/agents/server.py",
    "--script",
    script_path,
    "--log",
    log_path,
    "--models",
    models or "ok",
    "--lifetime",
    "120",
    "--call-prefix",
    call_prefix or "call",
  }, {
    on_stdout = function(_, lines)
      for _, line in ipairs(lines) do
        port = port or tonumber(line:match("^PORT (%d+)"))
      end
    end,
  })
  if job <= 0 then
    error("could not start tests/agents/server.py", 2)
  end
  M.wait_for(function()
    return port ~= nil
  end, "the scripted server to listen")
  local server = { port = port, url = "http://127.0.0.1:" .. port }
  function server.requests()
    local out = {}
    if vim.fn.filereadable(log_path) == 1 then
      for _, line in ipairs(vim.fn.readfile(log_path)) do
        out[#out + 1] = vim.json.decode(line)
      end
    end
    return out
  end
  function server.posts()
    return vim.tbl_filter(function(r)
      return r.method == "POST"
    end, server.requests())
  end
  function server.stop()
    pcall(vim.fn.chanclose, job, "stdin")
    vim.fn.jobwait({ job }, 5000)
    pcall(vim.fn.jobstop, job)
  end
  vim.api.nvim_create_autocmd("VimLeavePre", { callback = server.stop })
  return server
end

---The `todo` tool results in an OpenAI chat-completions request body, by call id.
---@param body table
---@return table<string, string>
function M.tool_results(body)
  local out = {}
  for _, m in ipairs(type(body) == "table" and body.messages or {}) do
    if m.role == "tool" then
      out[m.tool_call_id] = type(m.content) == "string" and m.content or vim.json.encode(m.content)
    end
  end
  return out
end

---The README's code block that follows the line `<!-- <marker> -->`, as text.
---@param marker string
---@return string
function M.readme_snippet(marker)
  local lines = vim.fn.readfile(os.getenv("RPIV_ROOT") .. "/README.md")
  for i, line in ipairs(lines) do
    if line == "<!-- " .. marker .. " -->" then
      local out = {}
      local j = i + 1
      if not (lines[j] or ""):match("^```") then
        break
      end
      j = j + 1
      while lines[j] ~= nil and not lines[j]:match("^```") do
        out[#out + 1] = lines[j]
        j = j + 1
      end
      return table.concat(out, "\n")
    end
  end
  error("README.md has no code block after <!-- " .. marker .. " -->", 2)
end

-- ---------------------------------------------------------------------------
-- The compaction story both compaction specs play (avante, codecompanion)
-- ---------------------------------------------------------------------------

---The scripted turns: turn 1 creates #1 Write the parser, #2 Test the parser (blocked by
---#1), #3 Document the parser and completes #1; the summary names no task; turn 2 sets #2
---in_progress and creates #4; turn 3 (after a restart) lists and creates a task.
M.STORY = {
  TURN1 = {
    tool_calls = {
      { "todo", '{"action":"create","subject":"Write the parser"}' },
      { "todo", '{"action":"create","subject":"Test the parser","blockedBy":[1]}' },
      { "todo", '{"action":"create","subject":"Document the parser"}' },
      { "todo", '{"action":"update","id":1,"status":"completed"}' },
    },
  },
  TURN2 = {
    tool_calls = {
      { "todo", '{"action":"update","id":2,"status":"in_progress"}' },
      { "todo", '{"action":"create","subject":"Benchmark the parser"}' },
    },
  },
  SUMMARY = "The user asked for work on a parser. Part of it is done; the rest continues.",
  TURN3 = {
    tool_calls = {
      { "todo", '{"action":"list"}' },
      { "todo", '{"action":"create","subject":"Release the parser"}' },
    },
  },
  -- The marker of the list's text (session.lua's compact form).
  LIST_MARK = "The todo list as it stands",
}

---In a child Neovim of a story (RPIV_PHASE set, see tests/nvim/child.lua): run
---`child(phase, out)`, write `out` (with `error` when it raised) to RPIV_OUT as JSON, and
---return true. In the parent: return false.
---@param child fun(phase: string, out: table)
---@return boolean
function M.child_phase(child)
  local phase = os.getenv("RPIV_PHASE")
  if phase == nil then
    return false
  end
  local out = {}
  local ok, err = xpcall(child, debug.traceback, phase, out)
  if not ok then
    out.error = tostring(err)
  end
  vim.fn.writefile({ vim.json.encode(out) }, os.getenv("RPIV_OUT"), "b")
  return true
end

---rpiv_todo as the README sets it up in Neovim, with or without `persist`.
---@param persist boolean|nil
function M.setup_todo(persist)
  local todo = require("rpiv_todo")
  todo.setup({ locale = "en" })
  vim.cmd("runtime plugin/rpiv_todo.lua")
  if persist then
    todo.setup({ locale = "en", persist = true })
  end
end

---The names of the saved lists under XDG_STATE_HOME (persist's directory), sorted.
---@return string[]
function M.saved_files()
  local dir = os.getenv("XDG_STATE_HOME") .. "/nvim/rpiv_todo"
  local names = {}
  for _, path in ipairs(vim.fn.glob(dir .. "/*.json", true, true)) do
    names[#names + 1] = vim.fn.fnamemodify(path, ":t")
  end
  table.sort(names)
  return names
end

---The text of a message's content: a string, or a list of parts with `text`.
---@param content any
---@return string
function M.text_of(content)
  if type(content) == "string" then
    return content
  end
  local parts = {}
  for _, part in ipairs(type(content) == "table" and content or {}) do
    parts[#parts + 1] = type(part) == "table" and type(part.text) == "string" and part.text or ""
  end
  return table.concat(parts, "\n")
end

---How many times `needle` occurs in the messages of a chat-completions request body (the
---system prompt among them); `text_of(content)` gives a message's text (default
---`M.text_of`).
---@param body table
---@param needle string
---@param text_of? fun(content: any): string
---@return integer
function M.count_in(body, needle, text_of)
  text_of = text_of or M.text_of
  local n = 0
  for _, m in ipairs(body.messages or {}) do
    local text = text_of(m.content)
    local from = 1
    while true do
      local at = text:find(needle, from, true)
      if at == nil then
        break
      end
      n, from = n + 1, at + #needle
    end
  end
  return n
end

return M
