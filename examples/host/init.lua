-- examples/host/init.lua: the user config the example host loads, as a user would write it.
--
-- The guidance override uses the function form: it receives the default snippet and eight
-- guidelines, keeps them, and adds one line for this project. Run with your own config:
--   scripts/run.sh --config my_init.lua

local todo = require("rpiv_todo")

todo.setup({
  guidance = function(defaults)
    defaults.prompt_snippet = defaults.prompt_snippet .. " (this project: one task per pull-request step)"
    table.insert(
      defaults.prompt_guidelines,
      "In this repository a task is completed only when `npm test` passes; paste the failing test name into metadata.failing while it does not."
    )
    return defaults
  end,
  max_widget_lines = 10,
  collapse_key = "ctrl+shift+t",
})
