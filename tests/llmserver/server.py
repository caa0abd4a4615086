"""The HTTP side: a `ThreadingHTTPServer` on 127.0.0.1 with daemon threads, and `LLMServer`, which
owns the queue of replies and the requests received."""

from __future__ import annotations

import argparse
import json
import socket
import sys
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.llmserver import wire
from tests.llmserver.batches import Batch, BatchStore, StoredFile, route
from tests.llmserver.script import Protocol, Reply, Request, Responder

DEFAULT_MODELS = ("test-model", "test-model-large")
ROUTES = {("GET", "/v1/models"), ("POST", "/v1/chat/completions"), ("POST", "/v1/messages")}


class _Cut(Exception):
    """Raised inside a handler to drop the connection without finishing the response."""


class _Handler(BaseHTTPRequestHandler):
    """HTTP/1.1 with keep-alive for answers and errors (Content-Length), so the SDKs' connection pools
    reuse connections; streams are chunked, so that a cut is an incomplete body rather than a
    normal close-delimited end, and close the connection when done."""

    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._serve({}, b"")

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = None
        self._serve(body, raw)

    def _serve(self, body: Any, raw: bytes) -> None:
        path = self.path.split("?", 1)[0]
        headers = {name.lower(): value for name, value in self.headers.items()}
        anthropic = path == "/v1/messages" or path.startswith("/v1/messages/") or "anthropic-version" in headers
        protocol: Protocol = "anthropic" if anthropic else "openai"
        owner = self.server.owner
        request = Request.parse(protocol, path, headers, body if isinstance(body, dict) else {})
        owner._record(request)
        batch_route = route(self.command, path)
        if (self.command, path) not in ROUTES and batch_route is None:
            return self._json(404, wire.error_body(protocol, 404, f"no route {self.command} {path}"))
        if not (headers.get("authorization", "").removeprefix("Bearer ").strip() or headers.get("x-api-key")):
            return self._json(401, wire.error_body(protocol, 401, "missing key"))
        if batch_route is not None:
            return self._send(*owner._batches.handle(*batch_route, request, raw), {})
        if self.command == "GET":
            return self._json(200, wire.models_body(protocol, owner.models))
        if not isinstance(body, dict):
            return self._json(400, wire.error_body(protocol, 400, "the body is not a JSON object"))
        if body.get("n", 1) != 1:
            return self._json(400, wire.error_body(protocol, 400, "this test server answers n=1 only"))
        self._answer(request, owner._next_reply(request))

    def _answer(self, request: Request, reply: Reply) -> None:
        owner = self.server.owner
        if owner.single_slot:
            with owner._one_at_a_time() as interrupted:
                if reply.delay and interrupted.wait(reply.delay):
                    reply = Reply("", headers=reply.headers)  # what an interrupted request gets: 200, no text
                return self._reply(request, reply)
        if reply.delay and owner._stopping.wait(reply.delay):
            self.close_connection = True
            return
        self._reply(request, reply)

    def _reply(self, request: Request, reply: Reply) -> None:
        try:
            if reply.status != 200:
                error = wire.error_body(request.protocol, reply.status, reply.message)
                self._json(reply.status, error, reply.headers)
            elif reply.reset or (reply.cut_after is not None and not request.stream):
                raise _Cut
            elif request.stream:
                self._stream(wire.stream_events(request, reply, self.server.owner.stream_usage), reply)
            elif reply.malformed:
                self._send(200, wire.MALFORMED.encode(), "application/json", reply.headers)
            else:
                self._json(200, wire.answer_body(request, reply), reply.headers)
        except _Cut:
            self.close_connection = True

    def _json(self, status: int, data: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(data).encode(), "application/json", headers or {})

    def _send(self, status: int, payload: bytes, content_type: str, headers: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def _stream(self, events: Iterator[str | None], reply: Reply) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.close_connection = True
        text_chunks = 0
        for event in events:
            if event is None:
                text_chunks += 1
            elif reply.cut_after is not None and text_chunks >= reply.cut_after:
                raise _Cut  # without the final zero-length chunk
            else:
                data = event.encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()  # one event at a time, so that streaming is observable
        self.wfile.write(b"0\r\n\r\n")


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a handler still sleeping out a `delay` must not keep the process alive
    request_queue_size = 128  # the default 5 resets connections when a test sends many requests at once

    def __init__(self, owner: LLMServer, port: int) -> None:
        self.owner = owner
        self.open_sockets: set[socket.socket] = set()
        super().__init__(("127.0.0.1", port), _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        self.open_sockets.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        self.open_sockets.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], OSError):  # clients that time out or hang up are expected
            super().handle_error(request, client_address)


class LLMServer:
    """Scripted LLM answers over real HTTP: `with LLMServer() as srv:` or `start()` / `stop()`.

    Each request is answered by the next queued reply, else by `responder(request)`, else with
    `default_text`. A request without an API key gets a 401 "missing key" in the provider's format.

    Batches (module `batches`): OpenAI /v1/files + /v1/batches and Anthropic /v1/messages/batches.
    Each batch line is answered by the same queue/responder/default, in input order, and recorded in
    `requests` with `batch_id` and `custom_id` set (path /v1/chat/completions or /v1/messages). A
    batch answers "in progress" to its first `batch_polls` retrieves and completes at the next one
    (0: at creation). `batches` maps id -> `Batch` (protocol, custom_ids, status, retrieves,
    outcomes, lines); `files` maps id -> `StoredFile` (OpenAI uploads and output/error files).
    A cancel before completion answers no line: the next retrieve ends the batch with all lines
    canceled; a cancel after the end is a 409. `reset` keeps batches and files.

    Local servers: `single_slot=True` answers one request at a time, and a request that arrives
    interrupts the one in flight (and any waiting), which then answers 200 with no text at once, as
    llama.cpp's and llama-cpp-python's servers do by default; a reply's `delay` is its generation
    time. `stream_usage=False` ignores `stream_options.include_usage` (llama-cpp-python does), so
    streams carry no token counts while whole answers do.
    """

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        default_text: str = "Yes",
        models: tuple[str, ...] = DEFAULT_MODELS,
        batch_polls: int = 1,
        single_slot: bool = False,
        stream_usage: bool = True,
    ) -> None:
        self.responder = responder
        self.single_slot, self.stream_usage = single_slot, stream_usage
        self._slot = threading.Lock()
        self._newest: threading.Event | None = None
        self.default_text = default_text
        self.models = models  # what GET /v1/models lists
        self.batch_polls = batch_polls  # read when a batch is created
        self.requests: list[Request] = []  # every request received, in order
        self._batches = BatchStore(self)
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: _Server | None = None

    def start(self, port: int = 0) -> LLMServer:
        self._stopping.clear()
        self._server = _Server(self, port)
        threading.Thread(target=self._server.serve_forever, args=(0.01,), name="llmserver", daemon=True).start()
        return self

    def stop(self) -> None:
        """Stop listening and drop open connections, so that pooled clients cannot reach a stopped server."""
        if self._server is None:
            return
        self._stopping.set()
        with self._lock:
            if self._newest is not None:
                self._newest.set()
        self._server.shutdown()
        for sock in list(self._server.open_sockets):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._server.server_close()
        self._server = None

    def __enter__(self) -> LLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, "the server is not running"
        return self._server.server_address[1]

    @property
    def openai_base_url(self) -> str:
        """The SDK appends /chat/completions and /models."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def anthropic_base_url(self) -> str:
        """The SDK appends /v1/messages (a base ending in /v1 would make /v1/v1/messages, a 404 here)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def batches(self) -> dict[str, Batch]:
        """The batches created, by id, in creation order (kept by `reset`)."""
        return self._batches.batches

    @property
    def files(self) -> dict[str, StoredFile]:
        """OpenAI files by id: uploads and the batches' output and error files (kept by `reset`)."""
        return self._batches.files

    def queue(self, *replies: Reply | str) -> None:
        """Answers for the next requests, in order, before the responder is asked."""
        with self._lock:
            self._queue.extend(Reply(r) if isinstance(r, str) else r for r in replies)

    def reset(self) -> None:
        """Forget the queued replies and the requests received so far."""
        with self._lock:
            self._queue.clear()
            self.requests.clear()

    @contextmanager
    def _one_at_a_time(self) -> Iterator[threading.Event]:
        """The single slot: interrupt whoever holds or awaits it, then wait for it. Yields the event
        that a later request (or the server stopping) sets to interrupt this one."""
        mine = threading.Event()
        with self._lock:
            if self._newest is not None:
                self._newest.set()
            self._newest = mine
        with self._slot:
            yield mine

    def _record(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)

    def _next_reply(self, request: Request) -> Reply:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        reply = self.responder(request) if self.responder else self.default_text
        return Reply(reply) if isinstance(reply, str) else reply


def main() -> None:
    parser = argparse.ArgumentParser(description="Serve scripted LLM answers on 127.0.0.1 until interrupted.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--text", default="Yes", help="the answer to every request")
    parser.add_argument("--batch-polls", type=int, default=1, help="retrieves a batch stays in progress")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before each answer (a fixed latency)")
    parser.add_argument(
        "--single-slot", action="store_true", help="one request at a time; a new one interrupts it (llama.cpp)"
    )
    parser.add_argument("--no-stream-usage", action="store_true", help="streams carry no token counts")
    args = parser.parse_args()
    answer = Reply(args.text, delay=args.delay)
    srv = LLMServer(
        responder=lambda _request: answer,
        batch_polls=args.batch_polls,
        single_slot=args.single_slot,
        stream_usage=not args.no_stream_usage,
    ).start(args.port)
    print(f"openai {srv.openai_base_url}\nanthropic {srv.anthropic_base_url}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        srv.stop()
