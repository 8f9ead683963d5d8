-- rpiv_todo.nvim.install.release: what a release holds and where, as scripts/package.sh
-- writes it: <base_url>/v<version>/rpiv_todo_core-<triple>.<ext>,
-- <base_url>/v<version>/rpiv_todo_mcp-<triple>[.exe], and a .sha256 beside each
-- (`sha256sum` format). The URL is computed, never looked up through an API.
-- Plain Lua: names, URLs and the .sha256 format, no I/O.

local M = {}

-- The project's repository, and where its releases keep their files.
M.REPOSITORY = "https://github.com/rpiv-todo/rpiv_todo"
M.DEFAULT_BASE_URL = M.REPOSITORY .. "/releases/download"

---The file name of a release asset.
---@param target table an entry of rpiv_todo.nvim.install.platform.TARGETS
---@return string
function M.asset_name(target)
  return "rpiv_todo_core-" .. target.triple .. "." .. target.ext
end

---The file name of the MCP server's release asset: rpiv_todo_mcp-<triple>, with .exe on
---Windows.
---@param target table an entry of rpiv_todo.nvim.install.platform.TARGETS
---@return string
function M.server_asset_name(target)
  return "rpiv_todo_mcp-" .. target.triple .. (target.os == "Windows_NT" and ".exe" or "")
end

---The base URL in use: opts.base_url, else $RPIV_TODO_BASE_URL, else the project's
---release downloads. No trailing slash.
---@param opts? table
---@return string url, string where it came from
function M.base_url(opts)
  local url, from = opts and opts.base_url, "option base_url"
  if url == nil or url == "" then
    url, from = os.getenv("RPIV_TODO_BASE_URL"), "RPIV_TODO_BASE_URL"
  end
  if url == nil or url == "" then
    url, from = M.DEFAULT_BASE_URL, "default"
  end
  return (url:gsub("/+$", "")), from
end

---Where an asset of this version lives: <base_url>/v<version>/<asset>.
---@param base_url string
---@param version string
---@param asset string
---@return string
function M.asset_url(base_url, version, asset)
  return base_url .. "/v" .. version .. "/" .. asset
end

---The hash in a .sha256 file (`sha256sum` format: "<64 hex>  <name>"), checked to name
---`asset` when it names a file at all.
---@param text string
---@param asset string
---@return string|nil hash, string|nil err
function M.parse_sha256(text, asset)
  local hash, name = tostring(text):match("^%s*(%x+)%s*%*?([^\r\n]*)")
  if hash == nil or #hash ~= 64 then
    return nil, "the .sha256 file does not hold a SHA-256 (64 hex digits)"
  end
  name = name and name:gsub("%s+$", "") or ""
  if name ~= "" and name:gsub("^.*[/\\]", "") ~= asset then
    return nil, "the .sha256 file is for " .. name .. ", not " .. asset
  end
  return hash:lower()
end

return M
