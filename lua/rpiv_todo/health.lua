-- rpiv_todo.health: `:checkhealth rpiv_todo`.
--
-- Reports the native library (where it was found on 'runtimepath', its version against
-- the Lua scripts', its Lua flavour), the UI locale and the configuration. Uses
-- vim.health.start/ok/... (Neovim 0.9+ names), falling back to the report_* names that
-- 0.8 had and 0.7's require("health").

---@helptext rpiv_todo-health verbatim
--- `:checkhealth rpiv_todo` reports where the native library was found, its
--- version against the Lua scripts', its Lua flavour (with the exact build
--- command when something is wrong), the locale, the configuration, the panel's
--- options, the session it shows and the collapse key mapping (with a warning
--- when the terminal cannot send the key: <C-S-t> inside tmux without
--- `extended-keys`, GNU screen, the Linux console; it names `collapse_key =
--- "alt+t"`, which every terminal sends), and under
--- "rpiv_todo: files" where lists are saved (|rpiv_todo-persist|), the file of
--- this directory's list, how many lists the state directory holds and their
--- size, whether other programs' changes are watched, and where
--- |:TodosLanguage| writes the language. Under "rpiv_todo: install" it shows
--- the platform (triple, glibc or musl), the base URL in use, the module
--- |:TodosInstall| put in place (path, version, downloaded or built), the
--- module this Neovim loaded, and a warning for a `lua/rpiv_todo/install.lua`
--- left by copying a new version over an old one (the installer is the folder
--- `lua/rpiv_todo/nvim/install/`; that file would be loaded in its place).

local M = {}
local H = {}

-- The reporting functions of whichever health API this Neovim has.
function H.api()
  local vh = vim.health
  if type(vh) == "table" and type(vh.start) == "function" then
    return { start = vh.start, ok = vh.ok, info = vh.info, warn = vh.warn, error = vh.error }
  end
  local old = type(vh) == "table" and type(vh.report_start) == "function" and vh or require("health")
  return {
    start = old.report_start,
    ok = old.report_ok,
    info = old.report_info,
    warn = old.report_warn,
    error = old.report_error,
  }
end

-- The build step, as the README and :help rpiv_todo give it, run in this plugin's folder
-- (the one holding this file's lua/rpiv_todo/); the prebuilt module (:TodosInstall) first.
function H.build_command()
  local source = debug.getinfo(1, "S").source or ""
  local path = source:sub(1, 1) == "@" and vim.fn.fnamemodify(source:sub(2), ":p") or ""
  local root = path:match("^(.*)/lua/rpiv_todo/health%.lua$")
  if root == nil then
    return ":TodosInstall (prebuilt), or scripts/build-module.sh luajit (in the plugin's folder; needs cargo)"
  end
  return ":TodosInstall (prebuilt), or cd "
    .. vim.fn.shellescape(root)
    .. " && scripts/build-module.sh luajit (needs cargo)"
end
H.BUILD = H.build_command()

---@param value any
---@return string
function H.show(value)
  if type(value) == "string" then
    return string.format("%q", value)
  end
  if type(value) == "function" then
    return "a function"
  end
  if type(value) == "table" then
    local keys = {}
    for k in pairs(value) do
      keys[#keys + 1] = tostring(k)
    end
    table.sort(keys)
    if #keys == 0 then
      return "{}"
    end
    return "{ " .. table.concat(keys, ", ") .. " }"
  end
  return tostring(value)
end

function H.check_library(report)
  report.start("rpiv_todo: native library")
  local files = vim.api.nvim_get_runtime_file("lua/rpiv_todo/core.so", true)
  local dlls = vim.api.nvim_get_runtime_file("lua/rpiv_todo/core.dll", true)
  for _, f in ipairs(dlls) do
    files[#files + 1] = f
  end
  if #files == 0 then
    report.info("no lua/rpiv_todo/core.so on 'runtimepath' (it may come from :TodosInstall's lib/ or package.cpath)")
  else
    report.info("found: " .. table.concat(files, ", "))
    if #files > 1 then
      report.warn("several builds on 'runtimepath'; the first one is loaded", {
        "remove the stale ones, or keep one copy of the plugin on 'runtimepath'",
      })
    end
  end
  local installed = require("rpiv_todo.installed")
  if package.loaded["rpiv_todo.core"] == nil and package.preload["rpiv_todo.core"] == nil then
    -- What the loader (rpiv_todo.native) tries first: the module :TodosInstall put in place.
    installed.load("luajit")
  end
  local ok, core = pcall(require, "rpiv_todo.core")
  if not ok then
    report.error("rpiv_todo.core does not load: " .. tostring(core), { "install or build it: " .. H.BUILD })
    return false
  end
  -- Checked before require("rpiv_todo"), which would notify (an error inside :checkhealth).
  if type(core) ~= "table" or core.version ~= installed.VERSION then
    local found = type(core) == "table" and tostring(core.version) or type(core)
    report.error("version " .. found .. ", but the Lua scripts are version " .. installed.VERSION, {
      "fetch the matching one: " .. H.BUILD,
    })
    return false
  end
  local loaded, todo = pcall(require, "rpiv_todo")
  if not loaded then
    report.error(tostring(todo), { "rebuild it: " .. H.BUILD })
    return false
  end
  report.ok("version " .. tostring(core.version) .. " (the Lua scripts' version is " .. tostring(todo.version) .. ")")
  if core.flavour == "luajit" then
    report.ok("Lua flavour: luajit (Neovim's Lua)")
  else
    report.error("Lua flavour: " .. tostring(core.flavour) .. ", but Neovim runs LuaJIT", { "rebuild it: " .. H.BUILD })
  end
  return true
end

-- The installer's view: this platform and its asset, the base URL, what
-- :TodosInstall put in place and what this Neovim loaded.
function H.check_install(report)
  report.start("rpiv_todo: install (:TodosInstall)")
  -- The installer is the folder lua/rpiv_todo/nvim/install/; an install.lua left by copying a
  -- new tree over an old one is found first by `require` and runs the old code.
  for _, stale in ipairs(vim.api.nvim_get_runtime_file("lua/rpiv_todo/install.lua", true)) do
    report.warn("left from an older copy of the plugin: " .. stale, {
      "delete it: the installer is lua/rpiv_todo/nvim/install/ now, and this file is loaded in its place",
    })
  end
  local ok, install = pcall(require, "rpiv_todo.nvim.install")
  if not ok then
    report.error("rpiv_todo.nvim.install does not load: " .. tostring(install))
    return
  end
  local installed = require("rpiv_todo.installed")
  local p = install.platform()
  local libc = ""
  if p.libc then
    libc = ", libc " .. (p.libc == "gnu" and "glibc" or p.libc) .. (p.libc_version and (" " .. p.libc_version) or "")
    libc = libc .. " (from " .. tostring(p.libc_how) .. ")"
  end
  if p.target then
    report.ok(
      "platform: "
        .. tostring(p.os)
        .. " "
        .. tostring(p.arch)
        .. libc
        .. "; triple "
        .. p.target.triple
        .. ", asset "
        .. install.asset_name(p.target)
    )
  else
    report.warn("platform: " .. tostring(p.os) .. " " .. tostring(p.arch) .. libc .. "; " .. tostring(p.why), {
      "build from source: :TodosInstall source (needs cargo)",
    })
  end
  local url, from = install.base_url()
  report.info(
    "base URL: "
      .. url
      .. " ("
      .. from
      .. "); this version's files are under "
      .. url
      .. "/v"
      .. installed.VERSION
      .. "/"
  )
  local record, why = installed.read()
  if record == nil then
    report.info("no module installed by :TodosInstall (" .. tostring(why) .. ")")
  else
    local how = record.source == "built" and "built from source"
      or record.source == "copied" and ("copied from " .. tostring(record.url))
      or ("downloaded from " .. tostring(record.url))
    local line = "installed module: " .. record.path .. ", version " .. record.version .. ", " .. how
    if record.version ~= installed.VERSION then
      report.error(line, { "the Lua scripts are version " .. installed.VERSION .. ": run :TodosInstall" })
    elseif vim.fn.filereadable(record.path) ~= 1 then
      report.error(line .. " (the file is missing)", { "run :TodosInstall" })
    else
      report.ok(line)
    end
  end
  local loaded = installed.loaded
  if loaded then
    report.info("loaded: " .. loaded.path .. " (version " .. tostring(loaded.version) .. ")")
  elseif package.loaded["rpiv_todo.core"] ~= nil then
    local found = vim.api.nvim_get_runtime_file("lua/rpiv_todo/core.so", false)[1]
    report.info(
      "loaded: " .. (found or "rpiv_todo.core from package.cpath or a preload") .. " (not from :TodosInstall)"
    )
  end
end

function H.check_locale(report)
  report.start("rpiv_todo: locale")
  local i18n = require("rpiv_todo.i18n")
  -- What the overlay and :Todos will use: v:lang is handed to the chain first.
  local ok, locale = pcall(require("rpiv_todo.nvim.frontend").use_editor_locale)
  if not ok then
    report.error("the locale could not be resolved: " .. tostring(locale))
    return
  end
  report.ok("UI locale: " .. locale .. " (available: " .. table.concat(i18n.locales(), ", ") .. ")")
  local inputs = { "v:lang=" .. H.show(vim.v.lang) }
  for _, name in ipairs({ "RPIV_TODO_LOCALE", "LC_ALL", "LC_MESSAGES", "LANG" }) do
    local value = os.getenv(name)
    if value ~= nil and value ~= "" then
      inputs[#inputs + 1] = name .. "=" .. H.show(value)
    end
  end
  report.info("inputs: " .. table.concat(inputs, ", "))
  report.info(
    "chosen by setup{ locale }, else RPIV_TODO_LOCALE, the rpiv-i18n config file, :language messages (v:lang), LC_ALL/LC_MESSAGES/LANG, else en; what the model reads is always English"
  )
end

function H.check_config(report)
  report.start("rpiv_todo: configuration")
  local todo = require("rpiv_todo")
  local config = todo.config
  report.info("max_widget_lines: " .. H.show(config.max_widget_lines))
  report.info("collapse_key: " .. H.show(config.collapse_key))
  local guidance = config.guidance or {}
  local guidelines = type(guidance.prompt_guidelines) == "table" and #guidance.prompt_guidelines or 0
  report.info(
    "guidance: prompt snippet of " .. #(guidance.prompt_snippet or "") .. " bytes, " .. guidelines .. " guidelines"
  )
  report.info("overlay overrides: " .. H.show(config.overlay))
  local ok, spec = pcall(todo.tool)
  if ok and type(spec) == "table" and spec.name == "todo" then
    report.ok("tool spec builds: " .. spec.name .. " with " .. #spec.prompt_guidelines .. " guidelines")
  else
    report.error("the tool spec does not build: " .. tostring(spec))
  end

  local nv = require("rpiv_todo.nvim.frontend")
  local c = nv.config
  report.info(
    "panel: position "
      .. H.show(c.position)
      .. ", border "
      .. H.show(c.border)
      .. ", winblend "
      .. H.show(c.winblend)
      .. ", max_width "
      .. H.show(c.max_width)
      .. ", padding "
      .. H.show(c.padding)
      .. ", avoid_cursor "
      .. H.show(c.avoid_cursor)
      .. ", win "
      .. H.show(c.win)
      .. ", zindex "
      .. H.show(c.zindex)
  )
  local exclude = c.exclude
  if type(exclude) == "table" then
    report.info(
      "panel skips filetypes "
        .. table.concat(exclude.filetypes or {}, ", ")
        .. "; buftypes "
        .. table.concat(exclude.buftypes or {}, ", ")
    )
  else
    report.info("panel skips the windows a function chooses (exclude)")
  end
  local sessions = require("rpiv_todo.session")
  local pinned = nv.pinned()
  if pinned then
    report.info("the panel shows session " .. H.show(pinned) .. " (pinned)")
  else
    report.info("the panel shows the session of the latest tool call (now " .. H.show(sessions.foreground_id()) .. ")")
  end
  local key = nv.mapped_key()
  if key then
    local level, text, advice = M.key_support(key, H.terminal())
    report[level](":TodosToggle is mapped to " .. key .. " in normal and insert mode" .. text, advice)
  elseif config.collapse_key == "off" then
    report.info("collapse key is off: use :TodosToggle")
  elseif not nv.config.map_collapse_key then
    report.info("collapse key not mapped (map_collapse_key = false): use :TodosToggle")
  elseif nv.key_notation(config.collapse_key) == nil then
    report.warn(
      "collapse_key " .. H.show(config.collapse_key) .. " is not mapped: a key without a modifier would shadow typing",
      {
        'set a key with a modifier, e.g. setup{ collapse_key = "ctrl+shift+t" }, or use :TodosToggle',
      }
    )
  else
    report.info("the collapse key is mapped once the front end is attached (first tool call, :Todos or :TodosToggle)")
  end
end

-- What to suggest when the terminal cannot send the mapped key.
M.KEY_ADVICE = {
  'a key every terminal sends: require("rpiv_todo").setup({ collapse_key = "alt+t" }) maps <M-t>',
  "or :TodosToggle (map it yourself: vim.keymap.set('n', '<leader>tt', '<Cmd>TodosToggle<CR>'))",
}

---What stands between the terminal and Neovim, as far as the keys go: { tmux = bool,
---extended_keys = tmux's `extended-keys` ("off", "on", "always", or nil when tmux did
---not say), term = $TERM, gui = a UI that is not the built-in terminal UI }.
---@return table
function H.terminal()
  local env = { term = vim.env.TERM or "", tmux = (vim.env.TMUX or "") ~= "" }
  env.gui = vim.g.neovide ~= nil or vim.fn.has("gui_running") == 1
  if env.tmux and vim.fn.executable("tmux") == 1 then
    local out = vim.fn.system({ "tmux", "show-options", "-sv", "extended-keys" })
    if vim.v.shell_error == 0 then
      env.extended_keys = vim.trim(out)
    end
  end
  return env
end

---Can the terminal send `key` (Neovim notation)? Ctrl+Shift+<letter> (and Super) reach
---Neovim only through an extended keyboard protocol (kitty's, or xterm's modifyOtherKeys):
---without one the terminal sends plain Ctrl+<letter>. tmux passes them on only with
---`extended-keys` on; GNU screen and the Linux console never do.
---@param key string e.g. "<C-S-t>"
---@param env table what H.terminal() returns
---@return string level "ok" | "warn", string text to add, string[]|nil advice
function M.key_support(key, env)
  local needs_protocol = key:find("C%-S%-") ~= nil or key:find("^<D%-") ~= nil
  if not needs_protocol or env.gui then
    return "ok", "", nil
  end
  if env.tmux then
    if env.extended_keys == "on" or env.extended_keys == "always" then
      return "ok",
        " (tmux passes it on: extended-keys is " .. env.extended_keys .. "; the terminal outside must support it too)",
        nil
    end
    local why = env.extended_keys == nil and "tmux did not say whether extended-keys is on"
      or "tmux's extended-keys is " .. env.extended_keys
    local advice = {
      "in ~/.tmux.conf (tmux 3.2 or later): set -s extended-keys on and set -as terminal-features 'xterm*:extkeys', then restart tmux",
    }
    for _, line in ipairs(M.KEY_ADVICE) do
      advice[#advice + 1] = line
    end
    return "warn", ", but inside tmux it never arrives: " .. why, advice
  end
  if env.term:find("^screen") or env.term == "linux" then
    return "warn", ", but this terminal ($TERM " .. env.term .. ") cannot send it", M.KEY_ADVICE
  end
  return "ok",
    " (it needs a terminal with an extended keyboard protocol: kitty, WezTerm, foot, Ghostty, xterm with modifyOtherKeys)",
    nil
end

---Entry point of `:checkhealth rpiv_todo`.
function M.check()
  local report = H.api()
  report.start("rpiv_todo: Neovim")
  local v = vim.version()
  report.ok(string.format("Neovim %d.%d.%d", v.major, v.minor, v.patch))
  local library = H.check_library(report)
  H.check_install(report)
  if library then
    H.check_locale(report)
    H.check_config(report)
    require("rpiv_todo.nvim.persist").health(report)
  end
end

return M
