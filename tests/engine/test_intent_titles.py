"""Intent titles set against their occasion, and renamed as the goal's evidence grows."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from schemas.graph import Node, NodeKind
from topologies.naming import Namer
from topologies.naming.occasions import agreed_occasion, occasion
from topologies.naming.phrases import PhraseParser
from topologies.naming.titles import with_occasion

TS = datetime(2026, 11, 3, 9, 0, tzinfo=UTC)


def note(text: str, node_id: str = "n") -> Node:
    return Node(
        id=node_id,
        tenant="alice",
        kind=NodeKind.EVENT,
        title=text,
        ts=TS,
        created_at=TS,
        updated_at=TS,
    )


@pytest.mark.parametrize(
    ("text", "day", "expected"),
    [
        ("Registration confirmed - Spreeufer 10k, Sun 29 Nov 2026", 29, "Spreeufer 10k"),
        ("Publish it before the PUC emergency meeting on 27 Nov", 27, "PUC emergency meeting"),
        ("The Kessler Logistik demo is on 28 Nov at 14:00.", 28, "Kessler Logistik demo"),
        ("Please send me the forms by 20 Nov", 20, None),  # the date hangs on a verb
        ("Your appointment is on 20 Nov", 20, None),  # a common noun alone: which one?
    ],
)
def test_the_occasion_is_the_named_thing_the_deadline_is_the_date_of(
    parser: PhraseParser, text: str, day: int, expected: str | None
) -> None:
    deadline = datetime(2026, 11, day, tzinfo=UTC)
    assert occasion(note(text), deadline, parser.parse, frozenset()) == expected


def test_an_occasion_needs_two_events_that_agree_on_it(parser: PhraseParser) -> None:
    deadline = datetime(2026, 11, 29, tzinfo=UTC)
    one = note("Registration confirmed - Spreeufer 10k, Sun 29 Nov 2026", "a")
    other = note("The Spreeufer 10k is on Sun 29 Nov, start at 10:30", "b")
    forward = note("Registration confirmed - Spreeufer 10k, Sun 29 Nov 2026", "c")
    assert agreed_occasion([one, forward], deadline, parser.parse, frozenset()) is None
    assert agreed_occasion([one, other], deadline, parser.parse, frozenset()) == "Spreeufer 10k"


def test_a_title_is_set_against_its_occasion_unless_it_already_speaks_of_it() -> None:
    assert with_occasion("Renew the passport", "Thailand flight") == (
        "Renew the passport before the Thailand flight"
    )
    assert (
        with_occasion("Book the Thailand flight", "Thailand flight") == "Book the Thailand flight"
    )
    assert with_occasion("Renew the passport", None) == "Renew the passport"


def test_a_thing_to_prepare_for_gives_way_to_the_occasion_of_the_deadline() -> None:
    """Hashing embedder, the sample: the race intent emerged from the two race mails ("Bib
    pickup: Sat 28 Nov", "Spreeufer 10k on Sun 29 Nov") and read "Prepare for the Bib
    pickup before the Spreeufer 10k (by 29 Nov)"."""
    assert (
        with_occasion("Prepare for the Bib pickup", "Spreeufer 10k")
        == "Prepare for the Spreeufer 10k"
    )
    assert with_occasion("Follow up on the claim", "PUC emergency meeting") == (
        "Follow up on the claim before the PUC emergency meeting"
    )


def test_an_action_title_is_told_from_a_topic(namer: Namer) -> None:
    assert namer.states_action("Repaint the bathroom ceiling (by 18 Dec)")
    assert not namer.states_action("Treptower park (by 29 Nov)")
