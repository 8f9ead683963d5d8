#!/usr/bin/env python3
"""The npm packages of the MCP server, installed from the local tarballs with the registry
unreachable, then run as an agent runs them.

    npm_test.py NPMDIR VERSION

NPMDIR holds what `scripts/package.sh --npm NPMDIR` wrote: the launcher
rpiv-todo-mcp-VERSION.tgz and the platform package of this machine. Everything runs with
npm_config_registry=http://127.0.0.1:9 (nothing listens there), --offline, and an empty
npm cache of its own:

  1. `npm install -g --prefix P --offline <the tarballs>`; install scripts are not turned
     off, and none exists in either package;
  2. P/bin/rpiv-todo-mcp, started like an agent starts a server (stdio JSON-RPC through
     tests/install/mcp_probe.py): initialize, tools/list, create / list / a rejected
     update, each reply text checked; no structuredContent by default;
  3. `npx -y rpiv-todo-mcp` with P as npm's prefix and P/bin on PATH, from a project
     folder: the same, and once more with --structured;
  4. the same tarballs into a project (`npm install --offline` in a folder with a
     package.json), and `npx -y rpiv-todo-mcp` run there, as an agent configured in that
     project would;
  5. a cold `npx -y rpiv-todo-mcp` (empty cache, nothing installed) against a local
     registry on 127.0.0.1 serving the tarballs (tests/install/npm_registry.py), the way
     npx runs it from registry.npmjs.org: npm picks this machine's platform package by its
     os, cpu and libc fields and downloads no other.

Prints "ok - ..." / "not ok - ..." lines and "N passed, N failed"; exit status 0 when all
passed.
"""

import json
import os
import shutil
import time
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

PASSED = 0
FAILED = 0
DEAD_REGISTRY = "http://127.0.0.1:9"
TEXTS = ["Created #1: Write the parser (pending)", "[pending] #1 Write the parser", "Error: #9 not found"]


def check(cond, what, got=None):
    global PASSED, FAILED
    if cond:
        PASSED += 1
        print(f"ok - {what}")
    else:
        FAILED += 1
        print(f"not ok - {what}" + (f"\n         got: {got!r}" if got is not None else ""))


def eq(got, want, what):
    check(got == want, what if got == want else f"{what}\n    expected: {want!r}", got if got != want else None)


def npm_env(tmp, prefix=None, extra_path=()):
    node_dir = str(Path(shutil.which("node")).parent)
    env = {
        "PATH": os.pathsep.join([*extra_path, node_dir, "/usr/bin", "/bin"]),
        "HOME": str(tmp / "home"),
        "npm_config_registry": DEAD_REGISTRY,
        "npm_config_cache": str(tmp / "npm-cache"),
        "npm_config_userconfig": str(tmp / "home" / ".npmrc"),
        "npm_config_update_notifier": "false",
        "npm_config_audit": "false",
        "npm_config_fund": "false",
        "npm_config_offline": "true",
        "XDG_CONFIG_HOME": str(tmp / "home" / ".config"),
        "XDG_STATE_HOME": str(tmp / "home" / ".local" / "state"),
    }
    if prefix is not None:
        env["npm_config_prefix"] = str(prefix)
    (tmp / "home").mkdir(exist_ok=True)
    return env


def run(cmd, env, cwd, what):
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=300)
    check(proc.returncode == 0, f"{what} (exit {proc.returncode})", None if proc.returncode == 0 else proc.stderr[-2000:])
    return proc


def probe(command, env, cwd, what, structured=False):
    """Start the server through mcp_probe.py and check what it answered."""
    state = Path(tempfile.mkdtemp(prefix="npm-state-"))
    args = [sys.executable, str(HERE / "mcp_probe.py"), "--cwd", str(cwd), "--timeout", "60", "--", *command]
    if structured:
        args.append("--structured")
    args += ["--state-dir", str(state)]
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    shutil.rmtree(state, ignore_errors=True)
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        check(False, f"{what}: the probe talked to the server", proc.stdout + proc.stderr)
        return None
    eq(report.get("failure"), None, f"{what}: the probe talked to the server")
    eq((report.get("server") or {}).get("name"), "rpiv_todo", f"{what}: serverInfo.name")
    eq(report.get("tools"), ["todo"], f"{what}: tools/list")
    eq(report.get("texts"), TEXTS, f"{what}: the reply texts")
    eq(report.get("is_error"), [False, False, True], f"{what}: isError")
    eq(report.get("structured"), [structured] * 3, f"{what}: structuredContent {'sent' if structured else 'not sent'}")
    eq(report.get("output_schema"), structured, f"{what}: outputSchema {'declared' if structured else 'not declared'}")
    eq(report.get("exit"), 0, f"{what}: exits 0 when stdin closes")
    print(f"# {what}: initialize answered in {report.get('initialize_ms')} ms")
    return report


def cold(tmp, npm_dir, version, platform_tgz):
    port_file = tmp / "registry-port"
    log = tmp / "registry.log"
    registry = subprocess.Popen(
        [sys.executable, str(HERE / "npm_registry.py"), str(npm_dir), str(port_file), "--seconds", "600", "--log", str(log)]
    )
    try:
        for _ in range(100):
            if port_file.exists() and port_file.read_text():
                break
            time.sleep(0.1)
        check(port_file.exists(), "the local registry started")
        if not port_file.exists():
            return
        home = tmp / "cold"
        home.mkdir()
        env = npm_env(home)
        env["npm_config_registry"] = f"http://127.0.0.1:{port_file.read_text()}/"
        del env["npm_config_offline"]
        project = home / "project"
        project.mkdir()
        probe(["npx", "-y", "rpiv-todo-mcp"], env, project, "cold npx -y rpiv-todo-mcp (local registry)")
        lines = log.read_text().splitlines() if log.exists() else []
        tarballs = sorted(line.split("/-/")[1] for line in lines if "/-/" in line)
        eq(
            tarballs,
            sorted([f"rpiv-todo-mcp-{version}.tgz", platform_tgz]),
            "npm downloaded the launcher and this machine's package, no other",
        )
        check("GET /rpiv-todo-mcp" in lines, "npm asked the registry for rpiv-todo-mcp", lines)
        probe(["npx", "-y", "rpiv-todo-mcp"], env, project, "warm npx -y rpiv-todo-mcp (local registry)")
    finally:
        registry.terminate()
        registry.wait()


def main():
    if len(sys.argv) != 3:
        print("usage: npm_test.py NPMDIR VERSION")
        return 2
    npm_dir, version = Path(sys.argv[1]).resolve(), sys.argv[2]
    if shutil.which("npm") is None or shutil.which("node") is None:
        print("not ok - node and npm are on PATH")
        return 1
    launcher = npm_dir / f"rpiv-todo-mcp-{version}.tgz"
    platform = sorted(p for p in npm_dir.glob(f"rpiv-todo-mcp-*-{version}.tgz"))
    check(launcher.is_file(), f"the launcher tarball {launcher.name}")
    eq(len(platform), 1, "one platform tarball (this machine's)")
    if not launcher.is_file() or len(platform) != 1:
        print(f"{PASSED} passed, {FAILED} failed")
        return 1
    tarballs = [str(launcher), str(platform[0])]
    with tempfile.TemporaryDirectory(prefix="rpiv-npm-") as tmp:
        tmp = Path(tmp)
        prefix = tmp / "prefix"
        project = tmp / "project"
        project.mkdir()

        # 1. A global install into the prefix, offline.
        env = npm_env(tmp, prefix)
        run(["npm", "install", "-g", "--offline", *tarballs], env, tmp, "npm install -g --offline from the tarballs")
        modules = prefix / "lib" / "node_modules"
        installed = json.loads((modules / "rpiv-todo-mcp" / "package.json").read_text())
        eq(installed.get("version"), version, "the launcher's version")
        eq(installed.get("scripts"), None, "the launcher has no scripts (no postinstall download)")
        platforms = json.loads((modules / "rpiv-todo-mcp" / "platforms.json").read_text())
        eq(
            sorted(installed.get("optionalDependencies", {}).items()),
            sorted((p["package"], version) for p in platforms),
            "optionalDependencies: every platform package at this version",
        )
        platform_pkgs = [p for p in modules.glob("@rpiv-todo/*/package.json")]
        eq(len(platform_pkgs), 1, "one platform package installed")
        if platform_pkgs:
            manifest = json.loads(platform_pkgs[0].read_text())
            eq(manifest.get("scripts"), None, f"{manifest.get('name')} has no scripts")
            binary = platform_pkgs[0].parent / "bin" / "rpiv_todo_mcp"
            check(os.access(binary, os.X_OK), f"{binary.relative_to(prefix)} is executable")
        bin_path = prefix / "bin" / "rpiv-todo-mcp"
        check(bin_path.exists(), "P/bin/rpiv-todo-mcp")

        # 2. The installed bin, as an agent's server command.
        run_env = npm_env(tmp, prefix, [str(prefix / "bin")])
        probe([str(bin_path)], run_env, project, "P/bin/rpiv-todo-mcp")
        version_out = subprocess.run(
            [str(bin_path), "--version"], env=run_env, capture_output=True, text=True, timeout=60
        )
        eq(version_out.stdout, f"rpiv_todo_mcp {version}\n", "rpiv-todo-mcp --version")

        # 3. npx -y, with the prefix as npm's.
        probe(["npx", "-y", "rpiv-todo-mcp"], run_env, project, "npx -y rpiv-todo-mcp (global prefix)")
        probe(
            ["npx", "-y", "rpiv-todo-mcp"],
            run_env,
            project,
            "npx -y rpiv-todo-mcp --structured (global prefix)",
            structured=True,
        )

        # 4. A project install, and npx run in that project.
        local = tmp / "local-project"
        local.mkdir()
        (local / "package.json").write_text(json.dumps({"name": "agent-project", "version": "1.0.0", "private": True}))
        local_env = npm_env(tmp / "local-project", None)
        run(["npm", "install", "--offline", *tarballs], local_env, local, "npm install --offline in a project")
        check((local / "node_modules" / ".bin" / "rpiv-todo-mcp").exists(), "node_modules/.bin/rpiv-todo-mcp")
        probe(["npx", "-y", "rpiv-todo-mcp"], local_env, local, "npx -y rpiv-todo-mcp (project install)")

        # 5. A cold npx against a local registry.
        cold(tmp, npm_dir, version, platform[0].name)
    print(f"{PASSED} passed, {FAILED} failed")
    return 0 if FAILED == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
