#!/usr/bin/env python3
"""A local release server for the install tests: 127.0.0.1 only, bounded in time.

    server.py ROOT PORT_FILE [--seconds N] [--log FILE]

Serves the files under ROOT over HTTP on a free port of 127.0.0.1 and writes that port to
PORT_FILE. It stops by itself after N seconds (default 600), or when the test sends
SIGTERM. Each request is logged (one line: method and path) to FILE when given.

Besides plain files it does two things a real network does to an installer:
  /truncated/<path>  answers with the full Content-Length of <path> but sends only half
                     of its bytes, then closes the connection (a cut-off download; a
                     .sha256 file is sent whole);
  a request in absolute form ("GET http://host/path", what a client sends to a proxy)
                     is served as /path and logged with "proxy" in front, so a test can
                     see that curl went through the proxy named by http_proxy.
"""

import argparse
import http.server
import os
import sys
import threading
import urllib.parse


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("root")
    parser.add_argument("port_file")
    parser.add_argument("--seconds", type=float, default=600)
    parser.add_argument("--log")
    args = parser.parse_args()
    root = os.path.realpath(args.root)
    lock = threading.Lock()

    def log(line: str) -> None:
        if args.log:
            with lock, open(args.log, "a", encoding="utf-8") as out:
                out.write(line + "\n")

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_args) -> None:  # quiet: the test reads the log file
            pass

        def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
            path, via = self.path, ""
            if "://" in path:
                via = "proxy "
                path = urllib.parse.urlsplit(path).path or "/"
            log(f"{via}GET {path}")
            truncate = path.startswith("/truncated/")
            if truncate:
                path = path[len("/truncated") :]
            local = os.path.realpath(os.path.join(root, urllib.parse.unquote(path).lstrip("/")))
            if not local.startswith(root + os.sep) or not os.path.isfile(local):
                body = b"not found\n"
                self.send_response(404)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(body)
                return
            with open(local, "rb") as source:
                data = source.read()
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            self.end_headers()
            # The checksum comes whole: the cut is in the module itself.
            cut = truncate and not local.endswith(".sha256")
            self.wfile.write(data[: len(data) // 2] if cut else data)
            self.wfile.flush()
            self.close_connection = True

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    with open(args.port_file + ".tmp", "w", encoding="utf-8") as out:
        out.write(str(server.server_address[1]))
    os.replace(args.port_file + ".tmp", args.port_file)
    timer = threading.Timer(args.seconds, server.shutdown)
    timer.daemon = True
    timer.start()
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
