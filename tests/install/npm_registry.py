#!/usr/bin/env python3
"""A local npm registry for the MCP server's packages: 127.0.0.1 only, bounded in time.

    npm_registry.py NPMDIR PORT_FILE [--seconds N] [--log FILE]

Serves the tarballs `scripts/package.sh --npm NPMDIR` wrote as an npm registry does, so
`npm_config_registry=http://127.0.0.1:<port>/ npx -y rpiv-todo-mcp` resolves, downloads and
runs the packages from a cold cache exactly as it would from registry.npmjs.org:

  GET /<name>            the packument: every version's manifest (the tarball's
                         package/package.json) with `dist.tarball` and `dist.integrity`;
                         a scoped name comes as /@scope%2fname
  GET /-/<file>.tgz      the tarball

The launcher lists seven platform packages; only the one built here has a tarball. The
others get a packument from npm/rpiv-todo-mcp/platforms.json (their os, cpu and libc) whose
tarball is missing (404), so npm must pick this machine's package by those fields without
downloading another. Any other name is a 404. The port goes to PORT_FILE; each request is
logged (method and path) to FILE when given. It stops by itself after N seconds (default
600), or on SIGTERM.
"""

import argparse
import base64
import hashlib
import http.server
import json
import tarfile
import threading
import urllib.parse
from pathlib import Path

PLATFORMS = Path(__file__).resolve().parents[2] / "npm" / "rpiv-todo-mcp" / "platforms.json"


def manifests(npm_dir, base):
    """{name: {version: manifest}} and {file name: path} of every tarball in npm_dir."""
    packages, files = {}, {}
    for tgz in sorted(Path(npm_dir).glob("*.tgz")):
        with tarfile.open(tgz) as tar:
            manifest = json.load(tar.extractfile("package/package.json"))
        data = tgz.read_bytes()
        manifest["_id"] = f"{manifest['name']}@{manifest['version']}"
        manifest["dist"] = {
            "tarball": f"{base}/-/{tgz.name}",
            "integrity": "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode(),
            "shasum": hashlib.sha1(data).hexdigest(),
        }
        packages.setdefault(manifest["name"], {})[manifest["version"]] = manifest
        files[tgz.name] = tgz
    versions = {v for name, vs in packages.items() if name == "rpiv-todo-mcp" for v in vs}
    # The platform packages not built here: their fields, and a tarball that is not there.
    for entry in json.loads(PLATFORMS.read_text()):
        for version in versions:
            if version in packages.get(entry["package"], {}):
                continue
            manifest = {
                "name": entry["package"],
                "version": version,
                "os": [entry["os"]],
                "cpu": [entry["cpu"]],
                "_id": f"{entry['package']}@{version}",
                "dist": {
                    "tarball": f"{base}/-/missing-{entry['package'].split('/')[-1]}-{version}.tgz",
                    "integrity": "sha512-" + base64.b64encode(hashlib.sha512(b"missing").digest()).decode(),
                },
            }
            if entry.get("libc"):
                manifest["libc"] = [entry["libc"]]
            packages.setdefault(entry["package"], {})[version] = manifest
    return packages, files


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("npm_dir")
    parser.add_argument("port_file")
    parser.add_argument("--seconds", type=float, default=600)
    parser.add_argument("--log")
    args = parser.parse_args()
    lock = threading.Lock()
    state = {}

    def log(line):
        if args.log:
            with lock, open(args.log, "a", encoding="utf-8") as out:
                out.write(line + "\n")

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_args):  # quiet: the test reads the log file
            pass

        def send(self, code, body, kind):
            self.send_response(code)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def do_GET(self):  # noqa: N802 (http.server's naming)
            path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
            log(f"{self.command} {path}")
            packages, files = state["packages"], state["files"]
            if path.startswith("/-/") and path[3:] in files:
                self.send(200, files[path[3:]].read_bytes(), "application/octet-stream")
                return
            name = path.lstrip("/")
            if name in packages:
                versions = packages[name]
                latest = sorted(versions)[-1]
                body = {"name": name, "dist-tags": {"latest": latest}, "versions": versions}
                self.send(200, json.dumps(body).encode(), "application/json")
                return
            self.send(404, b'{"error":"Not found"}', "application/json")

        do_HEAD = do_GET

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    state["packages"], state["files"] = manifests(args.npm_dir, base)
    Path(args.port_file).write_text(str(server.server_address[1]))
    timer = threading.Timer(args.seconds, server.shutdown)
    timer.daemon = True
    timer.start()
    try:
        server.serve_forever()
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
