#!/usr/bin/env node
// rpiv-todo-mcp: starts rpiv_todo's MCP server (the prebuilt rpiv_todo_mcp binary) on
// stdio, with the arguments given here. The binary comes in one package per platform,
// listed as optionalDependencies of this one; npm installs only the one whose os, cpu and
// libc fit, so nothing is downloaded at install time by a script of ours (installs with
// --ignore-scripts, behind proxies and from offline mirrors work). This file finds that
// package, runs its binary with stdin, stdout and stderr handed over as they are, and
// exits as it exits. RPIV_TODO_MCP_BINARY names another binary to run instead.
"use strict";

const { spawn } = require("child_process");
const fs = require("fs");
const path = require("path");

const platforms = require("../platforms.json");

function fail(message) {
  process.stderr.write("rpiv-todo-mcp: " + message + "\n");
  process.exit(1);
}

// glibc or musl, from what is on disk (no process.report: it is slow to gather).
function linuxLibc() {
  for (const dir of ["/lib", "/usr/lib"]) {
    try {
      if (fs.readdirSync(dir).some((name) => name.startsWith("ld-musl-"))) {
        return "musl";
      }
    } catch (_) {
      // the folder is not there: look at the next one
    }
  }
  return "glibc";
}

// The binary of an installed platform package, or undefined.
function binaryOf(entry) {
  let dir;
  try {
    dir = path.dirname(require.resolve(entry.package + "/package.json"));
  } catch (_) {
    return undefined;
  }
  const file = path.join(dir, "bin", entry.bin);
  return fs.existsSync(file) ? file : undefined;
}

function findBinary() {
  if (process.env.RPIV_TODO_MCP_BINARY) {
    return process.env.RPIV_TODO_MCP_BINARY;
  }
  const candidates = platforms.filter((p) => p.os === process.platform && p.cpu === process.arch);
  if (candidates.length === 0) {
    fail(
      "no prebuilt server for " +
        process.platform +
        " " +
        process.arch +
        "; build it from source in a checkout of https://github.com/rpiv-todo/rpiv_todo:" +
        " cargo build --release -p rpiv_todo_mcp, then run target/release/rpiv_todo_mcp"
    );
  }
  // The libc this machine uses first, then any other installed package that fits.
  const libc = process.platform === "linux" ? linuxLibc() : undefined;
  candidates.sort((a, b) => (a.libc === libc ? 0 : 1) - (b.libc === libc ? 0 : 1));
  for (const entry of candidates) {
    const file = binaryOf(entry);
    if (file) {
      return file;
    }
  }
  fail(
    "the package " +
      candidates[0].package +
      " (the server built for " +
      process.platform +
      " " +
      process.arch +
      (libc ? " " + libc : "") +
      ") is not installed. It is an optional dependency of rpiv-todo-mcp: install again" +
      " without --omit=optional or --no-optional, or install it by name:" +
      " npm install " +
      candidates[0].package +
      "@" +
      require("../package.json").version
  );
}

const binary = findBinary();
const child = spawn(binary, process.argv.slice(2), { stdio: "inherit", windowsHide: true });

// A signal sent to this process (the client stopping the server) goes to the server too.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    child.kill(signal);
  });
}

child.on("error", (err) => {
  fail("cannot run " + binary + ": " + err.message);
});

child.on("exit", (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code === null ? 1 : code);
});
