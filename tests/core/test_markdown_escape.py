"""Text we wrap in Streamlit Markdown shows literally: no icons or colours made from data, and a URL in
our own messages becomes code, so that it reads as typed and links nowhere (issue 27, item 12; the
rendering itself is checked in a browser by tests/browser/test_error_box.py)."""

from __future__ import annotations

from components.markdown import md_escape, md_with_code


def test_streamlit_directives_and_autolinks_in_data_stay_text() -> None:
    assert md_escape(":red[alarm] :material/error:") == "\\:red\\[alarm\\] \\:material/error\\:"
    assert md_escape("http://a.b/c") == "http\\://a\\.b/c", "the escaped colon stops GFM's autolink"


def test_a_url_in_our_message_is_code_without_its_closing_punctuation() -> None:
    text = md_with_code("openai at http://127.0.0.1:9/v1: down (see https://x.org/a_b). Run `make run`.")
    assert text == "openai at `http://127.0.0.1:9/v1`\\: down \\(see `https://x.org/a_b`\\)\\. Run `make run`\\."
