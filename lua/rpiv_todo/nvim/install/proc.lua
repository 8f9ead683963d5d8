-- rpiv_todo.nvim.install.proc: the installer's programs (curl, cargo, the server's
-- `--version`, the SHA-256 tool) and the task that waits for them.
--
-- An install started with start() on Neovim 0.10+ runs as a coroutine: each program is
-- started with vim.system, the coroutine yields, and the program's exit resumes it on the
-- main loop, so the editor stays usable while curl downloads or cargo builds. Anywhere
-- else (run(), or Neovim 0.7-0.9 without vim.system) each program runs to its end before
-- the next line of the install.
-- Neovim glue: vim.system, vim.fn.system, vim.schedule.

local M = {}
local H = {}

-- The running task's coroutine (nil when none), and what to call when it ends.
H.task = nil
H.on_done = nil

---Whether start() runs without blocking here (vim.system exists: Neovim 0.10+).
---@return boolean
function M.can_wait()
  return type(vim.system) == "function"
end

---Whether an install is running now.
---@return boolean
function M.busy()
  return H.task ~= nil
end

---Run `fn` as the install task: without blocking where M.can_wait(), else at once.
---`on_done` gets what `fn` returned, or nil and the error it raised.
---@param fn fun(): any
---@param on_done fun(...)
function M.start(fn, on_done)
  H.task, H.on_done = coroutine.create(fn), on_done
  H.resume(H.task)
end

function H.resume(co, ...)
  local result = { coroutine.resume(co, ...) }
  if coroutine.status(co) ~= "dead" then
    return
  end
  local on_done = H.on_done
  H.task, H.on_done = nil, nil
  if result[1] then
    on_done(unpack(result, 2, table.maxn(result)))
  else
    on_done(nil, "(rpiv_todo) install: internal error: " .. tostring(result[2]))
  end
end

---Run a program (argument list) with `env` added to the environment. Returns its exit
---code and its output (stdout, then stderr), or nil and why it did not start.
---@param cmd string[]
---@param env? table<string, string>
---@return integer|nil code, string output
function M.run(cmd, env)
  if vim.fn.executable(cmd[1]) ~= 1 then
    return nil, cmd[1] .. " is not on PATH"
  end
  local co = coroutine.running()
  if M.can_wait() then
    local waits = co ~= nil and co == H.task
    local on_exit = waits
        and function(res)
          vim.schedule(function()
            H.resume(co, res)
          end)
        end
      or nil
    local ok, job = pcall(vim.system, cmd, { text = true, env = env }, on_exit)
    if not ok then
      return nil, tostring(job)
    end
    local res = waits and coroutine.yield() or job:wait()
    return res.code, (res.stdout or "") .. (res.stderr or "")
  end
  -- Neovim 0.7-0.9: vim.fn.system, the environment set around it.
  local saved = {}
  for k, v in pairs(env or {}) do
    saved[k] = vim.env[k] or false
    vim.env[k] = v
  end
  local ok, output = pcall(vim.fn.system, cmd)
  local code = vim.v.shell_error
  for k, v in pairs(saved) do
    vim.env[k] = v or nil
  end
  if not ok then
    return nil, tostring(output)
  end
  return code, tostring(output)
end

-- The programs that print a file's SHA-256, tried in this order: coreutils, Perl's
-- shasum (macOS), Windows' certutil.
H.HASHERS = {
  function(path)
    return { "sha256sum", path }
  end,
  function(path)
    return { "shasum", "-a", "256", path }
  end,
  function(path)
    return { "certutil", "-hashfile", path, "SHA256" }
  end,
}

---The 64 hex digits a hasher printed: at the start of a line (sha256sum, shasum: "<hash>
---<name>", a backslash first when the name is escaped) or a line of its own, perhaps
---in pairs separated by spaces (certutil).
---@param output string
---@return string|nil
function H.hash_in(output)
  for line in output:gmatch("[^\r\n]+") do
    local hex = line:match("^\\?(%x+)%s") or line:gsub("%s", ""):match("^(%x+)$")
    if hex and #hex == 64 then
      return hex:lower()
    end
  end
  return nil
end

---A file's SHA-256, as 64 lowercase hex digits, from the system's own tool (a download is
---checked before anything of it is loaded, so not with the module).
---@param path string
---@return string|nil hash, string|nil err
function M.sha256_file(path)
  for _, hasher in ipairs(H.HASHERS) do
    local cmd = hasher(path)
    if vim.fn.executable(cmd[1]) == 1 then
      local code, output = M.run(cmd)
      local hash = code == 0 and H.hash_in(output)
      if hash then
        return hash
      end
      return nil, cmd[1] .. " could not hash " .. path .. ": " .. tostring(output):gsub("%s+$", ""):sub(1, 300)
    end
  end
  return nil, "no SHA-256 program on PATH (sha256sum, shasum or certutil): install coreutils"
end

return M
