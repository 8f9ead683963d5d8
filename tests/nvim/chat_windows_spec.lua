-- tests/nvim/chat_windows_spec.lua: the panel keeps off the agents' chat windows, and the
-- filetypes of those windows come from the adapters (each declares `chat_filetypes`), so
-- a new front end is one adapter file: no list in the editor glue to extend.

local T = dofile(os.getenv("RPIV_ROOT") .. "/tests/harness.lua")

T.test("the default exclude list: the editor's own windows, then each adapter's chat windows", function()
  T.eq(
    table.concat(require("rpiv_todo.nvim").defaults.exclude.filetypes, ","),
    "help,checkhealth,qf,TelescopePrompt,lazy,mason,rpiv_todo,"
      .. "Avante,AvanteInput,AvanteSelectedFiles,AvanteSelectedCode,AvanteTodos,AvantePromptInput,AvanteConfirm,"
      .. "codecompanion,copilot-chat",
    "filetypes"
  )
end)

T.test("an adapter file on 'runtimepath' adds its chat filetypes; a broken one is skipped", function()
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir .. "/lua/rpiv_todo/adapters", "p")
  vim.fn.writefile(
    { 'return { chat_filetypes = { "FakeChat", 3, "FakeInput" } }' },
    dir .. "/lua/rpiv_todo/adapters/fake_agent.lua"
  )
  vim.fn.writefile({ 'error("broken adapter")' }, dir .. "/lua/rpiv_todo/adapters/broken_agent.lua")
  vim.opt.rtp:append(dir)
  local fts = require("rpiv_todo.nvim.options").chat_filetypes()
  vim.opt.rtp:remove(dir)
  vim.fn.delete(dir, "rf")
  local fake, before = {}, #require("rpiv_todo.nvim").defaults.exclude.filetypes - 7
  for _, ft in ipairs(fts) do
    if ft:match("^Fake") then
      fake[#fake + 1] = ft
    end
  end
  T.eq(table.concat(fake, ","), "FakeChat,FakeInput", "the fake adapter's, in order, the number dropped")
  T.eq(#fts, before + 2, "the other adapters' still there, the broken one adds nothing")
end)

T.finish()
