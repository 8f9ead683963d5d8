-- tests/install/targets_spec.lua: every prebuilt module the installer can choose
-- (require("rpiv_todo.nvim.install").TARGETS) is built by .github/workflows/release.yml, and
-- the workflow builds nothing the installer would never pick; the npm launcher
-- (npm/rpiv-todo-mcp) has one platform package for each of those targets. The workflow
-- cannot run here; this keeps the lists from drifting apart.

local T = dofile(os.getenv("RPIV_ROOT") .. "/tests/harness.lua")

local install = require("rpiv_todo.nvim.install")
local workflow = T.read(T.root() .. "/.github/workflows/release.yml")

-- The `target:` entries of the build matrix.
local built, order = {}, {}
for triple in workflow:gmatch("\n%s*%-?%s*target:%s*([%w_%-]+)") do
  built[triple] = true
  order[#order + 1] = triple
end

T.test("release.yml builds every target the installer can choose", function()
  for _, target in ipairs(install.TARGETS) do
    T.eq(built[target.triple], true, target.triple .. " in release.yml's matrix")
  end
end)

T.test("release.yml builds only targets the installer can choose", function()
  local known = {}
  for _, target in ipairs(install.TARGETS) do
    known[target.triple] = true
  end
  for _, triple in ipairs(order) do
    T.eq(known[triple], true, triple .. " among the installer's targets")
  end
  T.eq(#order, 7, "seven builds")
end)

T.test("the asset names are the ones scripts/package.sh writes", function()
  local names = {}
  for _, target in ipairs(install.TARGETS) do
    names[#names + 1] = install.asset_name(target)
  end
  T.same(names, {
    "rpiv_todo_core-x86_64-unknown-linux-gnu.so",
    "rpiv_todo_core-aarch64-unknown-linux-gnu.so",
    "rpiv_todo_core-x86_64-unknown-linux-musl.so",
    "rpiv_todo_core-aarch64-unknown-linux-musl.so",
    "rpiv_todo_core-x86_64-apple-darwin.dylib",
    "rpiv_todo_core-aarch64-apple-darwin.dylib",
    "rpiv_todo_core-x86_64-pc-windows-msvc.dll",
  }, "asset names")
end)

T.test("the MCP server's asset names are the ones scripts/package.sh writes", function()
  local names = {}
  for _, target in ipairs(install.TARGETS) do
    names[#names + 1] = install.server_asset_name(target)
  end
  T.same(names, {
    "rpiv_todo_mcp-x86_64-unknown-linux-gnu",
    "rpiv_todo_mcp-aarch64-unknown-linux-gnu",
    "rpiv_todo_mcp-x86_64-unknown-linux-musl",
    "rpiv_todo_mcp-aarch64-unknown-linux-musl",
    "rpiv_todo_mcp-x86_64-apple-darwin",
    "rpiv_todo_mcp-aarch64-apple-darwin",
    "rpiv_todo_mcp-x86_64-pc-windows-msvc.exe",
  }, "server asset names")
end)

T.test("release.yml runs scripts/package.sh, attaches every file it wrote and publishes to npm", function()
  T.contains(workflow, "scripts/package.sh --out dist --target ${{ matrix.target }} --npm npm-dist", "package step")
  T.contains(workflow, "dist/*", "every asset and .sha256 attached")
  T.contains(workflow, 'MACOSX_DEPLOYMENT_TARGET: "11.0"', "macOS deployment target")
  T.contains(workflow, 'npm publish "$tgz" --access public', "platform packages published")
  T.contains(workflow, '  publish "npm-dist/rpiv-todo-mcp-$version.tgz"', "the launcher published, last")
  T.contains(workflow, '[ "$got" = "$want" ]', "only with every platform package")
  T.contains(workflow, 'npm view "$name@$version" version', "a package already published is left as it is")
  T.contains(workflow, "plugins/gemini/gemini-extension.json", "the plugins' versions checked")
end)

T.test("the npm launcher has one platform package per installer target, at the crate's version", function()
  local platforms = vim.json.decode(T.read(T.root() .. "/npm/rpiv-todo-mcp/platforms.json"))
  local launcher = vim.json.decode(T.read(T.root() .. "/npm/rpiv-todo-mcp/package.json"))
  local triples, want_deps = {}, {}
  for _, p in ipairs(platforms) do
    triples[#triples + 1] = p.triple
    want_deps[p.package] = T.cargo_version()
  end
  local targets = {}
  for _, target in ipairs(install.TARGETS) do
    targets[#targets + 1] = target.triple
  end
  T.same(triples, targets, "platforms.json: the installer's targets, in order")
  T.same(launcher.optionalDependencies, want_deps, "optionalDependencies")
  T.eq(launcher.version, T.cargo_version(), "the launcher's version")
  T.eq(launcher.scripts, nil, "no scripts (no postinstall download)")
  T.same(launcher.bin, { ["rpiv-todo-mcp"] = "bin/rpiv-todo-mcp.js" }, "bin")
  for _, p in ipairs(platforms) do
    local node_os = { Linux = "linux", Darwin = "darwin", Windows_NT = "win32" }
    local target
    for _, t in ipairs(install.TARGETS) do
      if t.triple == p.triple then
        target = t
      end
    end
    T.eq(p.os, node_os[target.os], p.triple .. ": os")
    T.eq(p.cpu, ({ x86_64 = "x64", aarch64 = "arm64" })[target.arch], p.triple .. ": cpu")
    T.eq(p.libc, ({ gnu = "glibc", musl = "musl" })[target.libc or ""], p.triple .. ": libc")
    T.eq(
      "rpiv_todo_mcp-" .. p.triple .. (p.bin:match("%.exe$") or ""),
      install.server_asset_name(target),
      p.triple .. ": bin"
    )
  end
end)

T.test("one project URL: Cargo.toml, both rockspecs, the installer's default and the README agree", function()
  local repo = install.REPOSITORY
  T.eq(repo:match("^https://github%.com/[%w_.-]+/[%w_.-]+$") ~= nil, true, "a GitHub repository URL: " .. repo)
  T.contains(T.read(T.root() .. "/Cargo.toml"), 'repository = "' .. repo .. '"', "Cargo.toml")
  local version = T.cargo_version()
  for _, rockspec in ipairs({ "rpiv_todo-scm-1.rockspec", "rpiv_todo-" .. version .. "-1.rockspec" }) do
    T.contains(T.read(T.root() .. "/" .. rockspec), 'url = "git+' .. repo .. '.git"', rockspec)
  end
  T.eq(install.DEFAULT_BASE_URL, repo .. "/releases/download", "default base URL")
  local readme = T.read(T.root() .. "/README.md")
  T.contains(readme, '"' .. repo:match("^https://github%.com/(.*)$") .. '"', "README's lazy.nvim spec")
  T.contains(readme, "git clone " .. repo, "README's plain packages")
end)

T.test("the scm rockspec is one lazy.nvim builds nothing from (a builtin build without modules)", function()
  local spec = {}
  local chunk = assert(loadfile(T.root() .. "/rpiv_todo-scm-1.rockspec", "t", spec))
  if setfenv then
    setfenv(chunk, spec)
  end
  chunk()
  T.eq(spec.version, "scm-1", "version")
  T.eq(spec.build and spec.build.type, "builtin", "build type")
  T.eq(spec.build and spec.build.modules, nil, "no module list")
  T.same(spec.dependencies, { "lua >= 5.1" }, "dependencies: only lua, which lazy.nvim skips")
end)

T.finish("tests/install/targets_spec.lua")
