-- tests/nvim/health_key_spec.lua: :checkhealth rpiv_todo says when the terminal cannot send
-- the mapped collapse key (<C-S-t> needs an extended keyboard protocol, which tmux passes
-- on only with `extended-keys` on), and names a key that works. The tmux case runs a real
-- tmux server of its own (socket in a temporary folder), which the health check asks.

local N = dofile(os.getenv("RPIV_ROOT") .. "/tests/nvim/helpers.lua")
local T = N.T

N.plugin()
local health = require("rpiv_todo.health")

local ADVICE = {
  'a key every terminal sends: require("rpiv_todo").setup({ collapse_key = "alt+t" }) maps <M-t>',
  "or :TodosToggle (map it yourself: vim.keymap.set('n', '<leader>tt', '<Cmd>TodosToggle<CR>'))",
}
local TMUX_CONF = "in ~/.tmux.conf (tmux 3.2 or later): set -s extended-keys on and set -as terminal-features "
  .. "'xterm*:extkeys', then restart tmux"

T.test("Ctrl+Shift keys in tmux without extended-keys: a warning naming a key that works", function()
  local level, text, advice =
    health.key_support("<C-S-t>", { tmux = true, extended_keys = "off", term = "tmux-256color" })
  T.eq(level, "warn", "level")
  T.eq(text, ", but inside tmux it never arrives: tmux's extended-keys is off", "text")
  T.same(advice, { TMUX_CONF, ADVICE[1], ADVICE[2] }, "advice")
end)

T.test("tmux with extended-keys on, and terminals that cannot send the key at all", function()
  local level, text = health.key_support("<C-S-t>", { tmux = true, extended_keys = "on", term = "tmux-256color" })
  T.eq(level, "ok", "extended-keys on")
  T.eq(text, " (tmux passes it on: extended-keys is on; the terminal outside must support it too)", "text")
  level, text = health.key_support("<C-S-t>", { tmux = false, term = "screen.xterm-256color" })
  T.eq(level, "warn", "GNU screen")
  T.eq(text, ", but this terminal ($TERM screen.xterm-256color) cannot send it", "screen text")
  level = health.key_support("<C-S-t>", { tmux = false, term = "linux" })
  T.eq(level, "warn", "the Linux console")
  level, text = health.key_support("<C-S-t>", { tmux = false, term = "xterm-kitty" })
  T.eq(level, "ok", "another terminal")
  T.eq(
    text,
    " (it needs a terminal with an extended keyboard protocol: kitty, WezTerm, foot, Ghostty, xterm with modifyOtherKeys)",
    "what it needs"
  )
  T.same({ health.key_support("<M-t>", { tmux = true, extended_keys = "off", term = "tmux" }) }, { "ok", "" }, "alt")
  T.same({ health.key_support("<C-S-t>", { gui = true, tmux = false, term = "" }) }, { "ok", "" }, "a GUI")
end)

T.test(":checkhealth rpiv_todo inside a tmux without extended-keys warns about <C-S-t>", function()
  if vim.fn.executable("tmux") == 0 then
    error("tmux is not installed (scripts/test.sh installs it)", 0)
  end
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, "p")
  local socket = dir .. "/tmux.sock"
  vim.fn.system({ "tmux", "-S", socket, "-f", "/dev/null", "new-session", "-d", "-s", "health", "sleep 60" })
  T.eq(vim.v.shell_error, 0, "tmux server started")
  local pid = vim.trim(vim.fn.system({ "tmux", "-S", socket, "display-message", "-p", "#{pid}" }))
  local saved_tmux, saved_term = vim.env.TMUX, vim.env.TERM
  vim.env.TMUX = socket .. "," .. pid .. ",0" -- what tmux sets inside its panes
  vim.env.TERM = "tmux-256color"
  require("rpiv_todo").setup({ locale = "en" })
  require("rpiv_todo.nvim.frontend").attach()
  vim.cmd("checkhealth rpiv_todo")
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  vim.fn.system({ "tmux", "-S", socket, "kill-server" })
  vim.env.TMUX, vim.env.TERM = saved_tmux, saved_term
  T.contains(
    text,
    ":TodosToggle is mapped to <C-S-t> in normal and insert mode, but inside tmux it never arrives: "
      .. "tmux's extended-keys is off",
    "the warning"
  )
  T.contains(text, 'collapse_key = "alt+t" }) maps <M-t>', "the key that works")
  T.contains(text, "set -s extended-keys on", "the tmux setting")
end)

T.finish("health_key_spec")
