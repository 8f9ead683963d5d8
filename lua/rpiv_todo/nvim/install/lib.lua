-- rpiv_todo.nvim.install.lib: the installer's folder, <plugin>/lib. Its files (temporary
-- names no other run uses, renames over a file), the two records that name the current
-- module (rpiv_todo.installed.RECORD) and server (M.SERVER_RECORD), and the one move that
-- puts a checked file in place: a name of its own (version and content hash), then the
-- record replaced in one rename, then earlier files of that kind swept. No file is ever
-- rewritten in place.
-- Neovim glue: libuv for stat and rename, vim.fn for the pid and the folder's listing.

local installed = require("rpiv_todo.installed")
local proc = require("rpiv_todo.nvim.install.proc")

local M = {}
local H = {}

-- The MCP server's record inside lib/ (the module's is rpiv_todo.installed.RECORD).
M.SERVER_RECORD = "mcp.txt"

-- ---------------------------------------------------------------------------
-- Files
-- ---------------------------------------------------------------------------

---@return table uv
function H.uv()
  return vim.uv or vim.loop
end

---A file's bytes, or nil when it cannot be read.
---@param path string
---@return string|nil
function M.read(path)
  local file = io.open(path, "rb")
  if not file then
    return nil
  end
  local data = file:read("*a")
  file:close()
  return data
end

---Write `data` to `path` (removed again when the write fails).
---@param path string
---@param data string
---@return true|nil ok, string|nil err
function M.write(path, data)
  local file, err = io.open(path, "wb")
  if not file then
    return nil, err
  end
  local ok, werr = file:write(data)
  local closed, cerr = file:close()
  if not ok or not closed then
    os.remove(path)
    return nil, werr or cerr
  end
  return true
end

---@param path string
---@return boolean
function M.exists(path)
  return H.uv().fs_stat(path) ~= nil
end

---A name in lib/ no other run (or Neovim) uses: pid and a high-resolution clock.
---@param dir string
---@param what string
---@return string
function M.temp(dir, what)
  H.counter = (H.counter or 0) + 1
  return string.format("%s/.%s-%d-%d-%d", dir, what, vim.fn.getpid(), H.uv().hrtime(), H.counter)
end

---Rename over `to` (libuv replaces an existing file on every platform).
---@param from string
---@param to string
---@return true|nil ok, string|nil err
function M.rename(from, to)
  local ok, err = H.uv().fs_rename(from, to)
  if not ok then
    return nil, err
  end
  return true
end

-- ---------------------------------------------------------------------------
-- Records
-- ---------------------------------------------------------------------------

---The installed MCP server: its record (lib/mcp.txt) with `path` added, or nil and why.
---@param dir? string the lib folder (default rpiv_todo.installed.dir())
---@return table<string, string>|nil record, string|nil why
function M.server(dir)
  return installed.read(dir, M.SERVER_RECORD)
end

---What the current record points at, when it is this version's module and intact.
---@param dir string
---@param version string
---@return table|nil record
function M.current_ok(dir, version)
  local record = installed.read(dir)
  if record == nil or record.flavour ~= "luajit" then
    return nil
  end
  return H.intact(record, version)
end

---What the server record points at, when it is this version's server and intact.
---@param dir string
---@param version string
---@return table|nil record
function M.server_ok(dir, version)
  return H.intact(M.server(dir), version)
end

---`record` when it is of `version` and the file it names is there with its SHA-256.
---@param record table|nil
---@param version string
---@return table|nil
function H.intact(record, version)
  if record == nil or record.version ~= version then
    return nil
  end
  if not M.exists(record.path) or (record.sha256 and proc.sha256_file(record.path) ~= record.sha256) then
    return nil
  end
  return record
end

-- ---------------------------------------------------------------------------
-- Placing
-- ---------------------------------------------------------------------------

-- The two things run() installs: the file names each gets in lib/ and the record that
-- names the current one.
H.KINDS = {
  module = {
    what = "the native module",
    record = installed.RECORD,
    prefix = "rpiv_todo_core",
    pattern = "^rpiv_todo_core%-%d[^/]*%-%x+%.%a+$",
  },
  server = {
    what = "the MCP server",
    record = M.SERVER_RECORD,
    prefix = "rpiv_todo_mcp",
    pattern = "^rpiv_todo_mcp%-%d[^/]*%-%x+$",
    pattern_exe = "^rpiv_todo_mcp%-%d[^/]*%-%x+%.exe$",
  },
}

---Move a checked file (`tmp`, in lib/) to its versioned name and point the record at it.
---`kind` is "module" (the default) or "server".
---@param ctx table the run's context (dir, version, ext, exe)
---@param tmp string
---@param hash string its SHA-256
---@param record table the record's other keys (source, url, triple)
---@param kind? "module"|"server"
---@return string|nil path, string|nil err
function M.place(ctx, tmp, hash, record, kind)
  local spec = H.KINDS[kind or "module"]
  local name
  if spec == H.KINDS.module then
    name = string.format("rpiv_todo_core-%s-%s.%s", ctx.version, hash:sub(1, 16), ctx.ext)
  else
    name = string.format("rpiv_todo_mcp-%s-%s%s", ctx.version, hash:sub(1, 16), ctx.exe)
  end
  local final = ctx.dir .. "/" .. name
  if M.exists(final) then
    -- The same bytes are already there (a forced reinstall): keep that file, which a
    -- running Neovim may have loaded, and drop the copy.
    if proc.sha256_file(final) == hash then
      os.remove(tmp)
    else
      return nil, final .. " exists with other content; remove it and run :TodosInstall again"
    end
  else
    local ok, err = M.rename(tmp, final)
    if not ok then
      return nil, "cannot rename " .. tmp .. " to " .. final .. ": " .. tostring(err)
    end
  end
  record.version, record.file, record.sha256 = ctx.version, name, hash
  if spec == H.KINDS.module then
    record.flavour = "luajit"
  end
  local rec_tmp = M.temp(ctx.dir, "record")
  local ok, err = M.write(rec_tmp, installed.format(record))
  if ok then
    ok, err = M.rename(rec_tmp, ctx.dir .. "/" .. spec.record)
  end
  if not ok then
    os.remove(rec_tmp)
    return nil, "cannot write " .. ctx.dir .. "/" .. spec.record .. ": " .. tostring(err)
  end
  H.sweep(ctx.dir, name, spec)
  return final
end

-- Remove earlier files of one kind (never the current one, nor the module this Neovim
-- loaded; a file another process has loaded or runs stays valid on Linux and macOS once
-- unlinked, and Windows refuses to remove it, which is fine) and leftovers of interrupted
-- runs.
function H.sweep(dir, keep, kind)
  local loaded = installed.loaded and installed.loaded.path
  for _, name in ipairs(vim.fn.readdir(dir)) do
    local path = dir .. "/" .. name
    local old = name:match(kind.pattern) or (kind.pattern_exe and name:match(kind.pattern_exe))
    if name ~= keep and path ~= loaded and old then
      os.remove(path)
    end
  end
end

return M
