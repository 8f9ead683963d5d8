-- scripts/help_layout.lua: the layout of doc/rpiv_todo.txt, read by scripts/gen-help.lua:
-- the header line, the sections in order (CONTENTS is made from them), and the entries of
-- each. The text of every entry lives in lua/ (see gen-help.lua's header).

-- The help's layout. Entry kinds:
--   { fn = "<module>.<name>" }                a function: tag, signature, indented prose
--                                             (`from = "<module>"` picks the file's module
--                                             when a submodule has a function of that name;
--                                             `source = "<module>.<Table>.<name>"` names a
--                                             function of another table, e.g. a method;
--                                             `show = "core.save"` the name the signature shows)
--   { text = "<helptext id>", indent = n }    a free-standing text block (indent: for
--                                             re-wrapped blocks, default 0); `tag` puts a
--                                             tag line above it, `title` a line between
--   { setup = "<module>.setup", classes = { "<class>", ... }, fields = { ... } }
--                                             setup(): tag, signature, prose, one row per
--                                             field (looked up in the classes in order)
-- Entries are separated by one blank line; a section's heading is followed by one, unless
-- the section says `tight = true` (its first entry's tag then sits under the heading).
return {
  title = "The `todo` tool of an LLM agent, with a task panel for Neovim",
  sections = {
    {
      title = "Introduction",
      tag = "rpiv_todo-intro",
      entries = { { text = "rpiv_todo-intro" } },
    },
    {
      title = "Install and build",
      tag = "rpiv_todo-install",
      entries = {
        { text = "rpiv_todo-install" },
        {
          setup = "rpiv_todo.nvim.install.run",
          call = 'require("rpiv_todo.nvim.install").run({opts})',
          classes = { "rpiv_todo.InstallOptions" },
          fields = { "base_url", "from_source", "force", "server", "quiet" },
        },
        { fn = "rpiv_todo.nvim.install.start" },
        { text = "rpiv_todo-install-missing" },
      },
    },
    {
      title = "Setup",
      tag = "rpiv_todo-setup",
      entries = {
        {
          setup = "rpiv_todo.setup",
          call = 'require("rpiv_todo").setup({opts})',
          -- The tool's own options, then the editor's (known in Neovim only).
          classes = { "rpiv_todo.SetupOptions", "rpiv_todo.NvimOptions" },
          fields = {
            "guidance",
            "max_widget_lines",
            "collapse_key",
            "locale",
            "overlay",
            "position",
            "border",
            "winblend",
            "max_width",
            "padding",
            "avoid_cursor",
            "exclude",
            "win",
            "zindex",
            "map_collapse_key",
            "notify_title",
            "persist",
            "persist_max_age_days",
          },
        },
        { text = "rpiv_todo-setup-alias", tag = "rpiv_todo.nvim.setup()", indent = 4 },
        { text = "rpiv_todo-locale", tag = "rpiv_todo-locale" },
        { text = "rpiv_todo-persist", tag = "rpiv_todo-persist" },
        { text = "rpiv_todo-files", tag = "rpiv_todo-files" },
        { fn = "rpiv_todo.core.save", source = "rpiv_todo.meta.core.core.save", show = "core.save" },
        { fn = "rpiv_todo.core.load", source = "rpiv_todo.meta.core.core.load", show = "core.load" },
        { fn = "rpiv_todo.session:save", source = "rpiv_todo.session.Session.save", show = "session:save" },
        { fn = "rpiv_todo.session:load", source = "rpiv_todo.session.Session.load", show = "session:load" },
        { fn = "rpiv_todo.set_locale", show = 'require("rpiv_todo").set_locale' },
        { fn = "rpiv_todo.persist.enable", show = "persist.enable" },
        { fn = "rpiv_todo.persist.disable", show = "persist.disable" },
        { fn = "rpiv_todo.persist.path", show = "persist.path" },
        { fn = "rpiv_todo.persist.status", show = "persist.status" },
        { fn = "rpiv_todo.persist.check", show = "persist.check" },
        { fn = "rpiv_todo.persist.file_name", show = "persist.file_name" },
        { fn = "rpiv_todo.persist.parse_name", show = "persist.parse_name" },
        { fn = "rpiv_todo.persist.key_prefix", show = "persist.key_prefix" },
        { fn = "rpiv_todo.persist.sha256", show = "persist.sha256" },
        { text = "rpiv_todo-file-format" },
        { text = "rpiv_todo-file-rules", tag = "rpiv_todo-file-rules" },
        { text = "rpiv_todo-startup" },
      },
    },
    {
      title = "Commands",
      tag = "rpiv_todo-commands",
      entries = {
        { text = ":Todos", tag = ":Todos" },
        { text = "rpiv_todo-commands-edit" },
        { text = ":TodosLanguage", tag = ":TodosLanguage" },
        { text = ":TodosInstall", tag = ":TodosInstall" },
        { text = ":TodosToggle", tag = ":TodosToggle" },
      },
    },
    {
      title = "The panel",
      tag = "rpiv_todo-panel",
      tight = true,
      entries = {
        { text = "rpiv_todo-overlay", tag = "rpiv_todo-overlay" },
        { text = "rpiv_todo-panel-session" },
        { text = "rpiv_todo-panel-place" },
      },
    },
    {
      title = "Highlight groups",
      tag = "rpiv_todo-highlights",
      entries = { { text = "rpiv_todo-highlights" } },
    },
    {
      title = "Host API for front ends",
      tag = "rpiv_todo-api",
      entries = {
        { text = "rpiv_todo-api" },
        { fn = "rpiv_todo.nvim.execute" },
        { fn = "rpiv_todo.nvim.replay" },
        { fn = "rpiv_todo.nvim.follow" },
        { fn = "rpiv_todo.nvim.edit" },
        { text = "RpivTodoUserEdit", tag = "RpivTodoUserEdit", title = "User RpivTodoUserEdit", indent = 4 },
        { fn = "rpiv_todo.nvim.last_user_edit" },
        { fn = "rpiv_todo.nvim.set_win" },
        { fn = "rpiv_todo.nvim.toggle" },
        { fn = "rpiv_todo.nvim.hide" },
        { fn = "rpiv_todo.nvim.show" },
        { fn = "rpiv_todo.nvim.todos" },
        { fn = "rpiv_todo.nvim.window" },
        {
          text = "rpiv_todo-listen-errors",
          tag = "rpiv_todo-listen-errors",
          title = "Session listeners",
          indent = 4,
        },
        { text = "rpiv_todo-lua", tag = "rpiv_todo-lua" },
        { fn = "rpiv_todo.tool", show = "todo.tool" },
        { fn = "rpiv_todo.reminder", show = "todo.reminder" },
        { fn = "rpiv_todo.session", show = "todo.session" },
        { fn = "rpiv_todo.foreground", show = "todo.foreground" },
        { fn = "rpiv_todo.turn_started", show = "todo.turn_started" },
        { fn = "rpiv_todo.register_chat", show = "todo.register_chat" },
        { fn = "rpiv_todo.on_setup", show = "todo.on_setup" },
        { fn = "rpiv_todo.attach_overlay", show = "todo.attach_overlay" },
        { fn = "rpiv_todo.locale", show = "todo.locale" },
      },
    },
    {
      title = "Adapters",
      tag = "rpiv_todo-adapters",
      entries = {
        { text = "rpiv_todo-adapters" },
        { text = "rpiv_todo-adapters-codecompanion" },
        { text = "rpiv_todo-adapters-avante" },
        { text = "rpiv_todo-adapters-copilotchat" },
        { text = "rpiv_todo-adapters-mcphub" },
        { text = "rpiv_todo-mcp" },
        { text = "rpiv_todo-strict" },
        { text = "rpiv_todo-adapters-acp" },
      },
    },
    {
      title = "Health check",
      tag = "rpiv_todo-health",
      entries = { { text = "rpiv_todo-health" } },
    },
    {
      title = "Good to know",
      tag = "rpiv_todo-surprises",
      entries = {
        { text = "rpiv_todo-surprises-count" },
        { text = "rpiv_todo-surprises-key" },
        { text = "rpiv_todo-surprises-follow" },
        { text = "rpiv_todo-surprises-edits" },
      },
    },
  },
}
