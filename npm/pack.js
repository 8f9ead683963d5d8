#!/usr/bin/env node
// npm/pack.js: the npm tarballs of the MCP server, from a built binary.
//
//   node npm/pack.js --out DIR --version VERSION [--target TRIPLE --binary FILE]
//
// Always packs the launcher, npm/rpiv-todo-mcp (rpiv-todo-mcp-VERSION.tgz). With --target
// and --binary it also packs the platform package for TRIPLE (one entry of
// npm/rpiv-todo-mcp/platforms.json), holding FILE as bin/rpiv_todo_mcp[.exe]
// (rpiv-todo-mcp-<os>-<cpu>[-<libc>]-VERSION.tgz). Each package is staged in a temporary
// folder with the repository's LICENSE, then `npm pack` writes it into DIR. It refuses to
// pack when the launcher's version or its optionalDependencies disagree with VERSION and
// platforms.json. scripts/package.sh runs this.
"use strict";

const { execFileSync } = require("child_process");
const fs = require("fs");
const os = require("os");
const path = require("path");

const here = __dirname;
const root = path.dirname(here);
const launcherDir = path.join(here, "rpiv-todo-mcp");
const platforms = require(path.join(launcherDir, "platforms.json"));
const launcher = require(path.join(launcherDir, "package.json"));

function die(message) {
  process.stderr.write("npm/pack.js: " + message + "\n");
  process.exit(1);
}

function parseArgs(argv) {
  const opts = {};
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i];
    const value = argv[i + 1];
    if (!["--out", "--version", "--target", "--binary"].includes(key) || value === undefined) {
      die("usage: node npm/pack.js --out DIR --version VERSION [--target TRIPLE --binary FILE]");
    }
    opts[key.slice(2)] = value;
  }
  if (!opts.out || !opts.version || Boolean(opts.target) !== Boolean(opts.binary)) {
    die("usage: node npm/pack.js --out DIR --version VERSION [--target TRIPLE --binary FILE]");
  }
  return opts;
}

// The launcher must name exactly the platform packages, each at this version.
function checkLauncher(version) {
  if (launcher.version !== version) {
    die(`npm/rpiv-todo-mcp/package.json is version ${launcher.version}, the crate ${version}: update it`);
  }
  const want = {};
  for (const p of platforms) {
    want[p.package] = version;
  }
  const got = launcher.optionalDependencies || {};
  if (JSON.stringify(Object.entries(got).sort()) !== JSON.stringify(Object.entries(want).sort())) {
    die(
      "npm/rpiv-todo-mcp/package.json's optionalDependencies are " +
        JSON.stringify(got) +
        ", platforms.json asks for " +
        JSON.stringify(want)
    );
  }
  if (launcher.scripts && Object.keys(launcher.scripts).some((s) => /install/.test(s))) {
    die("the launcher must have no install scripts");
  }
}

function stage(name) {
  return fs.mkdtempSync(path.join(os.tmpdir(), "rpiv-todo-npm-" + name + "-"));
}

function copyTree(from, to) {
  fs.mkdirSync(to, { recursive: true });
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    const src = path.join(from, entry.name);
    const dst = path.join(to, entry.name);
    if (entry.isDirectory()) {
      copyTree(src, dst);
    } else {
      fs.copyFileSync(src, dst);
      fs.chmodSync(dst, fs.statSync(src).mode & 0o777);
    }
  }
}

// `npm pack` the folder into out; the tarball's path.
function pack(dir, out) {
  // On Windows npm is npm.cmd, which Node runs only through a shell (hence the quotes).
  const windows = process.platform === "win32";
  const dest = windows ? JSON.stringify(out) : out;
  const name = execFileSync("npm", ["pack", "--ignore-scripts", "--pack-destination", dest], {
    cwd: dir,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    shell: windows,
  })
    .trim()
    .split("\n")
    .pop();
  fs.rmSync(dir, { recursive: true, force: true });
  return path.join(out, name);
}

function packLauncher(out) {
  const dir = stage("launcher");
  copyTree(launcherDir, dir);
  fs.chmodSync(path.join(dir, "bin", "rpiv-todo-mcp.js"), 0o755);
  fs.copyFileSync(path.join(root, "LICENSE"), path.join(dir, "LICENSE"));
  return pack(dir, out);
}

function packPlatform(out, version, triple, binary) {
  const entry = platforms.find((p) => p.triple === triple);
  if (!entry) {
    die(`no npm package for ${triple} in npm/rpiv-todo-mcp/platforms.json`);
  }
  const dir = stage("platform");
  const manifest = {
    name: entry.package,
    version,
    description: `The rpiv_todo MCP server (rpiv_todo_mcp) built for ${triple}; the rpiv-todo-mcp package runs it`,
    license: launcher.license,
    repository: launcher.repository,
    os: [entry.os],
    cpu: [entry.cpu],
    files: ["bin/"],
    preferUnplugged: true,
  };
  if (entry.libc) {
    manifest.libc = [entry.libc];
  }
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify(manifest, null, 2) + "\n");
  fs.mkdirSync(path.join(dir, "bin"));
  fs.copyFileSync(binary, path.join(dir, "bin", entry.bin));
  fs.chmodSync(path.join(dir, "bin", entry.bin), 0o755);
  fs.copyFileSync(path.join(root, "LICENSE"), path.join(dir, "LICENSE"));
  fs.writeFileSync(
    path.join(dir, "README.md"),
    `# ${entry.package}\n\nThe prebuilt MCP server of [rpiv_todo](https://github.com/rpiv-todo/rpiv_todo) for ${triple}.\n` +
      "Install and run it through the `rpiv-todo-mcp` package (`npx -y rpiv-todo-mcp`), which picks\n" +
      "the package that fits the machine.\n"
  );
  return pack(dir, out);
}

function main() {
  const opts = parseArgs(process.argv.slice(2));
  checkLauncher(opts.version);
  fs.mkdirSync(opts.out, { recursive: true });
  const out = fs.realpathSync(opts.out);
  console.log(packLauncher(out));
  if (opts.target) {
    console.log(packPlatform(out, opts.version, opts.target, opts.binary));
  }
}

main();
