-- rpiv_todo.install: deprecated alias of rpiv_todo.nvim.install (the installer is part of
-- the editor's layer), kept for the build steps and scripts that name it; removed in
-- 0.3.0. Returns the same table, so every function and option is the same.
-- Neovim glue (through rpiv_todo.nvim.install).

return require("rpiv_todo.nvim.install")
