"""The Code page's explanation points in ARM preference mode, in AppTest on a private database copy: a
rewrite made through the real ask path on the scripted server, whose split into points (ARM A.3) did
not parse. A coder who prefers that version is told, by its letter alone, why there is nothing to mark,
asks again from the page (one call, the split alone), then marks the points and saves them."""

from __future__ import annotations

import html
import json
import re

import pytest

from faithlens import config, store
from faithlens.coding import sessions
from faithlens.llm import ask, targets
from tests import raw
from tests.apptest import clean
from tests.coders import ADMIN
from tests.llm.conftest import ME
from tests.llmserver import LLMServer

DATASET = "storysumm"
SOURCE = "llm/arm-rewrite-both/gpt-4o"
SUMMARY = sorted(raw.storysumm_records())[0]
UNIT = f"{SUMMARY}#s0"
REWRITE = "A plainer first sentence."
SPLIT = "Summarize the key reasons described in this explanation"


@pytest.fixture
def coding(open_page, db_copy, monkeypatch):
    with LLMServer() as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-points")
        monkeypatch.setenv("FAITHLENS_OPENAI_BASE_URL", server.openai_base_url)
        monkeypatch.setenv(config.SETTINGS["db"].env, str(db_copy))
        monkeypatch.setenv(config.SETTINGS["user"].env, "ana")  # local mode's one user, who codes
        server.queue(f"The story never says so.\n<answer>{REWRITE}</answer>", "1. It drops a detail.")
        conn = store.connect(db_copy)
        with conn.cursor() as cur:
            unit = targets.resolve(cur, DATASET, UNIT)
        answer = ask.ask(conn, unit, ask.Ask("arm-rewrite", "openai", "gpt-4o", "both"), ME)
        assert answer.points_failure and answer.rewrite == REWRITE
        spec = sessions.SessionSpec(
            "points", DATASET, "sentence", "arm-preference", "arm-preference", suggestions=SOURCE, coders=("ana",)
        )
        made = sessions.create(conn, ADMIN, spec)
        conn.close()
        at = open_page("pages/code.py", dataset=DATASET, session=made.name, coder="ana")
        yield server, db_copy, made, at


def test_a_coder_is_told_why_there_are_no_points_asks_again_and_marks_them(coding) -> None:
    server, db_copy, made, at = coding
    assert list(made.units) == [UNIT]
    markup = "".join(h.value for h in at.html)
    tags = dict(re.findall(r'<span class="flc-tag">([AB])</span>([^<]*)</div>', markup))
    tag = next(t for t, text in tags.items() if html.unescape(text).strip() == REWRITE)
    next(b for b in at.button if b.label == f"{tag} is better").click().run()
    clean(at)
    (info,) = [i.value for i in at.info if "explanation points" in i.value]
    assert info.startswith(f"No explanation points to mark for {tag}")
    assert "the answer did not parse" in info
    assert not re.search(r"\b(original|rewrite|rewritten)\b", info, re.IGNORECASE), "A or B only"
    prefix = f"code.{DATASET}.{made.name}.ana.unit.{UNIT}"
    assert not [r for r in at.radio if r.key.startswith(prefix + ".p.")], "nothing to mark yet"

    server.queue("<item>It drops a detail.</item><item>It keeps the time.</item>")
    before = len(server.requests)
    at.button(key=prefix + ".points.ask").click().run()
    clean(at)
    asked = server.requests[before:]
    assert len(asked) == 1 and asked[0].last_user_text().startswith(SPLIT), "the split alone, asked once"
    assert not [i for i in at.info if "explanation points" in i.value]
    at.radio(key=prefix + ".p.0").set_value("IMPORTANT")
    at.radio(key=prefix + ".p.1").set_value("WRONG")
    at.run()
    at.button(key=f"code.{DATASET}.{made.name}.ana.save").click().run()
    clean(at)
    conn = store.connect(db_copy)
    ((codes, detail),) = conn.execute(
        "SELECT codes, detail FROM coding_event WHERE session_id = ?", [made.session_id]
    ).fetchall()
    conn.close()
    assert codes == ["rewrite"] and json.loads(detail)["points"] == ["IMPORTANT", "WRONG"]
