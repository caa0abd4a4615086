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

Modules: `script` (what a test writes and reads: Reply, Request), `wire` (the providers' JSON and
server-sent events), `server` (HTTP, threads, the queue).
"""

from tests.llmserver.script import REFUSAL_TEXT, Reply, Request, Responder, chunks
from tests.llmserver.server import LLMServer

__all__ = ["REFUSAL_TEXT", "LLMServer", "Reply", "Request", "Responder", "chunks"]
