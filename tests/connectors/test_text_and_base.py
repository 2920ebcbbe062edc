"""Text reduction (HTML, quotes, signatures) and the RawEvent building helpers."""

from __future__ import annotations

from datetime import UTC, datetime

import orjson

from connectors.base import BadItem, make_event, participant, stable_id
from connectors.text import html_to_text, trim_reply, unflow
from schemas.events import RawEvent
from schemas.limits import MAX_ATTRS_BYTES, MAX_BODY_BYTES, MAX_TITLE_BYTES

TS = datetime(2024, 3, 1, tzinfo=UTC)


def test_html_to_text_blocks_lists_and_quotes() -> None:
    html = (
        "<html><head><title>t</title><style>p{color:red}</style></head><body>"
        "<p>Hi&nbsp;Alice,</p><ul><li>one</li><li>two</li></ul>"
        "<table><tr><td>Total</td><td>42 &euro;</td></tr></table>"
        '<div id="divRplyFwdMsg"><b>From:</b> Carol<br>old text</div>'
        '<blockquote type="cite">quoted</blockquote><script>x()</script></body></html>'
    )
    text = html_to_text(html, skip_quotes=True)
    assert text == "Hi Alice,\n\n- one\n- two\n\nTotal 42 €"
    assert "quoted" in html_to_text(html)  # quotes are kept unless asked


def test_trim_reply_styles() -> None:
    german = "Passt!\n\nAm 10.01.2024 um 14:02 schrieb Jean Dupont <j@x.fr>:\n> Hallo\n"
    assert trim_reply(german) == "Passt!"
    outlook = "Ok.\n\n-----Original Message-----\nFrom: Bob\nSent: Monday\n\nold"
    assert trim_reply(outlook) == "Ok."
    signature = "See you.\n-- \nBob\n+49 30 1234"
    assert trim_reply(signature) == "See you."
    rule = "Table:\n________________________________\nrow"  # a rule, not an Outlook header
    assert trim_reply(rule) == rule
    assert trim_reply("Got it.\n\nSent from my iPhone") == "Got it."
    assert unflow("a long \nline\n> quoted \nnext", delsp=False) == "a long line\n> quoted \nnext"


def test_make_event_clips_to_the_contract() -> None:
    event = make_event(
        "x:1",
        id="t:1",
        tenant="alice",
        source="email",
        ts=TS,
        title="T" * (MAX_TITLE_BYTES + 50),
        body="é" * MAX_BODY_BYTES,
        participants=["a", "a", " ", "b" * 400],
        attrs={"attachments": [{"filename": "f" * 100}] * 500, "small": 1},
    )
    assert isinstance(event, RawEvent)
    assert len(event.title.encode()) == MAX_TITLE_BYTES
    assert len(event.body.encode()) <= MAX_BODY_BYTES
    assert event.participants == ["a", "b" * 320]
    assert len(orjson.dumps(event.attrs)) <= MAX_ATTRS_BYTES and event.attrs["truncated"] is True
    assert event.attrs["small"] == 1
    bad = make_event("x:2", id="t:2", tenant="not a slug!", source="email", ts=TS)
    assert isinstance(bad, BadItem) and bad.location == "x:2" and bad.reason.startswith("tenant:")


def test_ids_and_participants() -> None:
    assert stable_id("email", "a", "b") == stable_id("email", "a", "b")
    assert stable_id("email", "a", "b") != stable_id("email", "ab")
    assert stable_id("calendar", "x").startswith("calendar:")
    assert participant("Bob", "MAILTO:Bob@Example.com") == "Bob <bob@example.com>"
    assert participant("bob@example.com", "bob@example.com") == "bob@example.com"
    assert participant(None, None) == ""
