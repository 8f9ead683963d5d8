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

return M
