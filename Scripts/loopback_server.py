#!/usr/bin/env python3
"""A fault-injecting HTTP/1.1 server for tests and demos, on loopback only.

Python 3 standard library only. Started by the tests themselves (see
Tests/TestSupport/LoopbackServer.swift) and by the demo script to serve recorded feeds.

Usage:
    loopback_server.py [--port 0] [--bind 127.0.0.1] [--routes FILE] [--base-dir DIR] [--verbose]
                       [--exit-on-stdin-eof] [--lifetime SECONDS]

The first line on stdout is the bound port, e.g. ``PORT 43123``, flushed at once.

Routes map a path (no query string) to a sequence of response specs. Each request to the
path consumes the next spec; the last spec repeats forever. A response spec is a JSON object:

    status         int, default 200 (302 when redirectTo is set and status is not 3xx)
    headers        object of header name -> value, sent as given
                   (Content-Type defaults to "text/plain; charset=utf-8")
    body           inline text, sent as UTF-8
    bodyBase64     inline bytes, base64
    bodyFile       path of a file whose bytes are the body (relative paths are resolved
                   against --base-dir, else the routes file's directory, else the working
                   directory)
    delay          seconds to wait before the status line
    holdUntil      a gate's name: wait before the status line until POST /__release opens
                   that gate (or the server stops), so a test can act while a request is
                   provably in flight, whatever the machine's load
    chunkSize      bytes per write when chunked or chunkDelay is set (default 1024)
    chunkDelay     seconds to wait between body writes
    chunked        true: Transfer-Encoding: chunked, one chunk per chunkSize bytes
    gzip           true: gzip the body and send Content-Encoding: gzip
    truncateAfter  N: send Content-Length of the full body, then only N body bytes, then close
    close          "beforeResponse" (or true): close the connection without any response;
                   "afterHeaders": send the status line and headers, then close
    hang           true: never answer; keep the socket open until the server stops
    redirectTo     Location to send. "{port}" is replaced by the bound port. When it has no
                   "?", the request's raw query string is appended (as a gateway that moved
                   a path would do), so tests can check which parameters follow a redirect.

Control endpoints (not recorded as requests):

    POST /__script    body {path: [spec, ...], ...}: replaces the sequences of those paths
    GET  /__requests  JSON list of every request so far: {method, path, query, headers,
                      time, responded, body}; query is the raw query string ("" when
                      none), header names are lower-cased, time is time.monotonic()
                      seconds at arrival, responded the same when the server began to
                      answer (after delay and holdUntil; before any byte was sent), body
                      is the request body as UTF-8 text
    POST /__reset     forgets every request and restores the startup routes
    POST /__release   body {"gate": NAME}: opens that gate; held responses go on, later ones
                      pass at once

Unknown paths get 404 with a short text body. Nothing is logged per request unless
--verbose, and then only the method and path (never the query string, which may hold keys).
SIGTERM and SIGINT stop the server cleanly (exit status 0).
"""

import argparse
import base64
import gzip
import json
import os
import signal
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CONTROL_PREFIX = "/__"


class State:
    """Routes, cursors and recorded requests, shared by the handler threads."""

    def __init__(self, routes, base_dir):
        self.lock = threading.Lock()
        self.startup_routes = routes
        self.base_dir = base_dir
        self.routes = dict(routes)
        self.cursors = {}
        self.requests = []
        self.stopping = threading.Event()
        self.gates = {}
        self.port = 0

    def gate(self, name):
        with self.lock:
            return self.gates.setdefault(name, threading.Event())

    def next_spec(self, path):
        with self.lock:
            sequence = self.routes.get(path)
            if not sequence:
                return None
            index = self.cursors.get(path, 0)
            self.cursors[path] = index + 1
            return sequence[min(index, len(sequence) - 1)]

    def script(self, mapping):
        with self.lock:
            for path, sequence in mapping.items():
                if isinstance(sequence, dict):
                    sequence = [sequence]
                self.routes[path] = list(sequence)
                self.cursors[path] = 0

    def reset(self):
        with self.lock:
            self.routes = dict(self.startup_routes)
            self.cursors = {}
            self.requests = []

    def record(self, entry):
        with self.lock:
            self.requests.append(entry)

    def recorded(self):
        with self.lock:
            return [dict(entry) for entry in self.requests]


def load_routes(path):
    with open(path, "rb") as handle:
        routes = json.load(handle)
    if not isinstance(routes, dict):
        raise ValueError("routes file must hold a JSON object {path: [spec, ...]}")
    return {key: (value if isinstance(value, list) else [value]) for key, value in routes.items()}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "loopback/1"

    def version_string(self):
        return self.server_version

    # -- plumbing -------------------------------------------------------------------------

    @property
    def state(self):
        return self.server.state

    def log_message(self, format, *args):  # noqa: A002 - signature from the base class
        if self.server.verbose:
            sys.stderr.write("loopback: " + (format % args) + "\n")

    def log_request(self, code="-", size="-"):
        if self.server.verbose:
            path = self.path.split("?", 1)[0]
            sys.stderr.write("loopback: %s %s -> %s\n" % (self.command, path, code))

    def read_request_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = bytearray()
            while True:
                line = self.rfile.readline()
                size = int(line.split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return bytes(data)
                data += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def send_simple(self, status, body, content_type="text/plain; charset=utf-8"):
        payload = body if isinstance(body, bytes) else body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)
        self.wfile.flush()

    def hard_close(self):
        """Closes the socket at once, so the client sees the connection end here."""
        self.close_connection = True
        try:
            self.wfile.flush()
        except OSError:
            pass
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    # -- dispatch -------------------------------------------------------------------------

    def handle_any(self):
        path, _, query = self.path.partition("?")
        body = self.read_request_body()
        if path.startswith(CONTROL_PREFIX):
            self.handle_control(path, body)
            return
        entry = {
            "method": self.command,
            "path": path,
            "query": query,
            "headers": {name.lower(): value for name, value in self.headers.items()},
            "time": time.monotonic(),
            "body": body.decode("utf-8", "replace"),
        }
        self.state.record(entry)
        spec = self.state.next_spec(path)
        if spec is None:
            self.send_simple(404, "no route for %s\n" % path)
            return
        try:
            self.respond(spec, query, entry)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = handle_any

    def handle_control(self, path, body):
        try:
            if path == "/__script" and self.command == "POST":
                mapping = json.loads(body.decode("utf-8") or "{}")
                if not isinstance(mapping, dict):
                    raise ValueError("expected {path: [spec, ...]}")
                self.state.script(mapping)
                self.send_simple(200, '{"ok":true}', "application/json")
            elif path == "/__requests" and self.command == "GET":
                self.send_simple(200, json.dumps(self.state.recorded()), "application/json")
            elif path == "/__release" and self.command == "POST":
                name = json.loads(body.decode("utf-8") or "{}").get("gate")
                if not isinstance(name, str):
                    raise ValueError('expected {"gate": NAME}')
                self.state.gate(name).set()
                self.send_simple(200, '{"ok":true}', "application/json")
            elif path == "/__reset" and self.command == "POST":
                self.state.reset()
                self.send_simple(200, '{"ok":true}', "application/json")
            else:
                self.send_simple(404, "no control endpoint %s %s\n" % (self.command, path))
        except (ValueError, UnicodeDecodeError) as error:
            self.send_simple(400, "bad control request: %s\n" % error)

    # -- scripted responses ---------------------------------------------------------------

    def spec_body(self, spec):
        if "bodyFile" in spec:
            file_path = spec["bodyFile"]
            if not os.path.isabs(file_path):
                file_path = os.path.join(self.state.base_dir, file_path)
            with open(file_path, "rb") as handle:
                return handle.read()
        if "bodyBase64" in spec:
            return base64.b64decode(spec["bodyBase64"])
        return str(spec.get("body", "")).encode("utf-8")

    def wait(self, seconds):
        """Sleeps, but returns early when the server is stopping."""
        if seconds and seconds > 0:
            self.state.stopping.wait(float(seconds))

    def respond(self, spec, query, entry):
        self.wait(spec.get("delay"))
        if spec.get("holdUntil"):
            gate = self.state.gate(str(spec["holdUntil"]))
            while not gate.is_set() and not self.state.stopping.is_set():
                gate.wait(0.05)
        with self.state.lock:
            entry["responded"] = time.monotonic()

        if spec.get("hang"):
            # Never answer. Keep the socket open until the server stops.
            self.state.stopping.wait()
            self.hard_close()
            return

        close = spec.get("close")
        if close is True or close == "beforeResponse":
            self.hard_close()
            return

        status = int(spec.get("status", 200))
        headers = dict(spec.get("headers") or {})
        redirect = spec.get("redirectTo")
        if redirect:
            if not 300 <= status <= 399:
                status = 302
            location = str(redirect).replace("{port}", str(self.state.port))
            if "?" not in location and query:
                location += "?" + query
            headers["Location"] = location

        body = self.spec_body(spec)
        if spec.get("gzip"):
            body = gzip.compress(body)
            headers["Content-Encoding"] = "gzip"
        if not any(name.lower() == "content-type" for name in headers):
            headers["Content-Type"] = "text/plain; charset=utf-8"

        chunked = bool(spec.get("chunked"))
        chunk_size = max(1, int(spec.get("chunkSize", 1024)))
        chunk_delay = float(spec.get("chunkDelay", 0) or 0)
        truncate_after = spec.get("truncateAfter")

        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, str(value))
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        elif not any(name.lower() == "content-length" for name in headers):
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.flush()

        if close == "afterHeaders":
            self.hard_close()
            return
        if self.command == "HEAD":
            return

        if truncate_after is not None:
            body_to_send = body[: max(0, int(truncate_after))]
        else:
            body_to_send = body

        if chunked:
            for start in range(0, len(body_to_send), chunk_size):
                if start and chunk_delay:
                    self.wait(chunk_delay)
                piece = body_to_send[start:start + chunk_size]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                self.wfile.flush()
            if truncate_after is None:
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
        elif chunk_delay:
            for start in range(0, len(body_to_send), chunk_size):
                if start:
                    self.wait(chunk_delay)
                if self.state.stopping.is_set():
                    break
                self.wfile.write(body_to_send[start:start + chunk_size])
                self.wfile.flush()
        else:
            self.wfile.write(body_to_send)
            self.wfile.flush()

        if truncate_after is not None:
            self.hard_close()


class Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        # A client that hangs up mid-response is normal in fault tests: stay quiet.
        if self.verbose:
            super().handle_error(request, client_address)


def main(argv=None):
    parser = argparse.ArgumentParser(description="Fault-injecting loopback HTTP server.")
    parser.add_argument("--port", type=int, default=0, help="port to bind; 0 = ephemeral")
    parser.add_argument("--bind", default="127.0.0.1", help="address to bind")
    parser.add_argument("--routes", help="JSON file {path: [spec, ...]} served from startup")
    parser.add_argument("--base-dir", help="directory against which relative bodyFile paths are "
                        "resolved (default: the routes file's directory, else the working directory)")
    parser.add_argument("--verbose", action="store_true", help="log method and path to stderr")
    parser.add_argument("--exit-on-stdin-eof", action="store_true",
                        help="stop when standard input reaches end of file (parent went away)")
    parser.add_argument("--lifetime", type=float, default=0,
                        help="stop by itself after this many seconds (0 = no limit)")
    args = parser.parse_args(argv)

    routes, base_dir = {}, os.getcwd()
    if args.routes:
        routes = load_routes(args.routes)
        base_dir = os.path.dirname(os.path.abspath(args.routes))
    if args.base_dir:
        base_dir = os.path.abspath(args.base_dir)

    state = State(routes, base_dir)
    server = Server((args.bind, args.port), Handler)
    server.state = state
    server.verbose = args.verbose
    state.port = server.server_address[1]

    def stop(*_):
        if not state.stopping.is_set():
            state.stopping.set()
            # shutdown() waits for serve_forever to return: call it from another thread.
            threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    if args.exit_on_stdin_eof:
        def watch_stdin():
            # os.read on the raw descriptor: a daemon thread blocked inside sys.stdin's
            # buffered reader makes interpreter shutdown abort.
            try:
                while os.read(0, 4096):
                    pass
            except OSError:
                pass
            stop()
        threading.Thread(target=watch_stdin, daemon=True).start()

    if args.lifetime > 0:
        timer = threading.Timer(args.lifetime, stop)
        timer.daemon = True
        timer.start()

    sys.stdout.write("PORT %d\n" % state.port)
    sys.stdout.flush()
    try:
        server.serve_forever(poll_interval=0.1)
    finally:
        state.stopping.set()
        server.server_close()
    return 0


if __name__ == "__main__":
    status = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter finalization: handler threads may still be parked in hanging
    # responses, and exiting through it could abort instead of returning 0.
    os._exit(status)
