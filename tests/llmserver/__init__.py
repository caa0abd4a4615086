"""A real HTTP server on 127.0.0.1 that speaks the OpenAI chat-completions and Anthropic messages
protocols with scripted answers, so LLM code is tested through the real SDKs and their transport
(retries, timeouts, streaming, JSON decoding) instead of a patched client.

    with LLMServer() as srv:
        srv.queue(Reply(status=429, headers={"retry-after-ms": "10"}), Reply("No"))
        client = openai.OpenAI(base_url=srv.openai_base_url, api_key="k")
        ...
        assert [r.retry_count for r in srv.requests] == [0, 1]

Answers come from the queue first, then from `responder(request)`, then `default_text`. The
server runs in a daemon thread and listens on 127.0.0.1, so a subprocess (the app under test)
reaches it too; `python -m tests.llmserver --port P --text Yes` runs one on its own.

Batch APIs: OpenAI `files.create(purpose="batch")` + `batches.create/retrieve/cancel` +
`files.content`, and Anthropic `messages.batches.create/retrieve/cancel/results`. Every batch line
is answered by the same queue/responder/default, in input order, when the batch completes, and
recorded in `requests` with `batch_id` and `custom_id` set. `LLMServer(batch_polls=N)` (default 1):
a batch answers "in progress" to its first N retrieves and completes at the next (0: at creation).
`srv.batches` (id -> Batch: protocol, custom_ids, status, retrieves, outcomes, lines) and
`srv.files` (id -> StoredFile) show what was created. A Reply with status != 200 makes an errored
line; `malformed` a line that does not decode; `refusal` a refused answer; `delay`/`cut_after` are
ignored in batches.

Modules: `script` (what a test writes and reads: Reply, Request), `wire` (the providers' JSON,
server-sent events and batch lines), `server` (HTTP, threads, the queue), `batches` (the batch
routes and their state).
"""

from tests.llmserver.batches import Batch, StoredFile
from tests.llmserver.script import REFUSAL_TEXT, Reply, Request, Responder, chunks
from tests.llmserver.server import LLMServer

__all__ = ["REFUSAL_TEXT", "Batch", "LLMServer", "Reply", "Request", "Responder", "StoredFile", "chunks"]
