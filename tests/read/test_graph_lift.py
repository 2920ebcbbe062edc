"""What the graph lifts from a hit does not outrank the evidence (topologies/read/entities.py
``entity_hops``: a hit's name shares the hit's strength; topologies/read/lift.py, the cap
``ReadConfig.graph_cap``, off by default).

A friend's running chats are linked to each other; one of them mentions a party in passing.
Another cluster is about a party. Asked "party", the reader answers with the messages that
say it, not with the friend's other chats that the graph reaches from the passing mention.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from read_helpers import Builder, fold_into, hashing_settings, set_participants

from schemas.events import RawEvent
from schemas.graph import NodeKind
from schemas.query import QueryHit, QueryRequest
from stream_app.factory import build_hub
from topologies.config import EngineConfig
from topologies.embedding import HashingEmbedder
from topologies.entities import ensure_entity_index
from topologies.memory import event_node_id
from topologies.read import ReadConfig, Reader
from topologies.read.entities import EntityCache, Hop, entity_hops
from topologies.read.expansion import Expansion
from topologies.read.lift import held, leaders

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
ME, NADIA = "Alice Keller", "Nadia Rahimi"
PARTY_GROUP = [ME, "Marco Fischer", "Paul Brenner", "Hanna Brenner"]

RUNS = [  # (day, text): a friend's chats, one with the word in passing
    (1, "Did you register for the Spreeufer 10k yet? Early price ends Friday"),
    (5, "Saw your name on the start list! Wave C with me. Long run tomorrow at 9?"),
    (9, "Intervals tonight: 6 x 800 at the track, then stretching"),
    (13, "Easy 8k along the canal at 11? My legs are dead after yesterday's party"),
    (18, "Race in 9 days!! Short shakeout Tuesday and then nothing silly, promise?"),
    (22, "New shoes arrived, testing them on the long run Sunday"),
    (24, "Recovery jog after the race, then brunch at the bakery?"),
    (26, "Club run Thursday at the park, are you coming along?"),
]
PARTY = [  # (day, title, text): the cluster about the word
    (0, "Leonie 40 (surprise!)", "Surprise party for Leonie on Sat 14 Nov at Café Lotte"),
    (4, "Leonie 40 (surprise!)", "Who brings the cake to the party? RSVP by Tuesday"),
    (8, "Leonie 40 (surprise!)", "Party budget: 25 euros each for the pottery voucher"),
    (12, "Leonie's 40th - surprise party", "Back room at Café Lotte, bring the voucher"),
]


def _events() -> list[RawEvent]:
    out = [
        RawEvent(
            id=f"run-{i}",
            tenant="alice",
            source="chat",
            ts=T0 + timedelta(days=day),
            title=NADIA,
            body=text,
            participants=[NADIA, ME],
            attrs={"channel": NADIA, "from": NADIA},
        )
        for i, (day, text) in enumerate(RUNS)
    ]
    out += [
        RawEvent(
            id=f"party-{i}",
            tenant="alice",
            source="chat",
            ts=T0 + timedelta(days=day, hours=3),
            title=title,
            body=text,
            participants=PARTY_GROUP,
            attrs={"channel": title, "from": "Marco Fischer"},
        )
        for i, (day, title, text) in enumerate(PARTY)
    ]
    return sorted(out, key=lambda e: e.ts)


@pytest.fixture(scope="module")
def folded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fold_into(tmp_path_factory.mktemp("lift") / "data", _events())


def _ask(data_dir: Path, text: str, config: ReadConfig | None = None) -> list[QueryHit]:
    hub = build_hub(hashing_settings(data_dir), sinks=[])
    try:
        reader = Reader(hub.engine.embedder, EngineConfig(read=config or ReadConfig()))
        return reader.query(hub.view("alice"), QueryRequest(text=text, k=5)).items
    finally:
        hub.store.close()


def _direct(hit: QueryHit) -> bool:
    return hit.explanation.bm25_rank is not None


def test_what_says_the_word_comes_before_what_the_graph_reached_from_it(folded: Path) -> None:
    hits = _ask(folded, "party")
    said = [i for i, hit in enumerate(hits) if "party" in f"{hit.title} {hit.text}".lower()]
    reached = [i for i, hit in enumerate(hits) if not _direct(hit)]
    assert len(said) == 5
    assert not reached or max(said) < min(reached)


def test_without_the_rules_the_friends_chats_push_the_party_out(folded: Path) -> None:
    """The check above can fail: the same memory read the old way."""
    hits = _ask(folded, "party", ReadConfig(graph_cap=False, hop_spread=False))
    reached = [i for i, hit in enumerate(hits) if not _direct(hit)]
    assert reached and reached[0] < 4


def test_a_hits_name_shares_the_hits_strength(embedder: HashingEmbedder) -> None:
    b = Builder(embedder)
    for i in range(4):
        b.event(f"n-{i}", "Nadia", f"Run number {i} along the canal", hours=i)
    set_participants(b, {f"n-{i}": ["Nadia"] for i in range(4)})
    first = [(event_node_id(b.memory.tenant, "n-0"), 0.6)]
    index, graph = ensure_entity_index(b.memory), b.memory.graph
    spread = entity_hops(index, EntityCache(), graph, frozenset(), first, 16)
    whole = entity_hops(index, EntityCache(), graph, frozenset(), first, 16, spread=False)
    assert len(spread) == len(whole) == 3  # the hit itself is no hop of its own
    assert {round(hop.strength, 6) for hop in spread.values()} == {0.2}
    assert {hop.strength for hop in whole.values()} == {0.6}
    assert {hop.origin for hop in spread.values()} == {first[0][0]}
    asked = entity_hops(index, EntityCache(), graph, frozenset({"nadia"}), [], 16)
    assert {(hop.strength, hop.origin) for hop in asked.values()} == {(1.0, None)}


def test_a_fact_hits_own_event_is_no_second_hop(embedder: HashingEmbedder) -> None:
    b = Builder(embedder)
    b.event("n-0", "Nadia", "My legs are dead after the party", hours=0)
    b.event("n-1", "Nadia", "Race in nine days", hours=5)
    set_participants(b, {"n-0": ["Nadia"], "n-1": ["Nadia"]})
    fact = b.node("f-0", NodeKind.FACT, "My legs are dead after the party", source_event_id="n-0")
    index, graph = ensure_entity_index(b.memory), b.memory.graph
    hops = entity_hops(index, EntityCache(), graph, frozenset(), [(fact, 1.0)], 16)
    assert set(hops) == {event_node_id(b.memory.tenant, "n-1")}


def _expansion(via: dict[str, str]) -> Expansion:
    return Expansion(via=dict(via), hops={n: 1 for n in via})


def test_a_node_is_held_below_the_stronger_hit_that_led_to_it() -> None:
    evidence = {"hit": 1.0, "weak-hit": 0.2, "strong-hit": 0.5}
    via = {"friend": "hit", "weak-hit": "hit", "strong-hit": "weak-hit"}
    led = leaders(_expansion(via), {}, {}, evidence)
    assert led == {"friend": {"hit"}, "weak-hit": {"hit"}}  # a stronger hit is led by nothing
    score = {"hit": 1.2, "friend": 1.5, "weak-hit": 0.4, "strong-hit": 0.9}
    out = held(score, led, evidence)
    assert out["friend"] < out["hit"] == 1.2 and out["friend"] == pytest.approx(1.2)
    assert out["weak-hit"] == 0.4 and out["strong-hit"] == 0.9  # below already; stronger


def test_a_chain_of_lifts_stays_in_order() -> None:
    evidence = {"hit": 1.0, "hopped": 0.1}
    via = {"hopped": "hit", "beside": "hopped"}
    led = leaders(_expansion(via), {}, {}, evidence)
    score = {"hit": 1.0, "hopped": 2.0, "beside": 3.0}
    chained = held(score, led, evidence)
    assert chained["hit"] > chained["hopped"] > chained["beside"]
    flat = held(score, led, evidence, chained=False)  # each against its leader as it came
    assert flat["beside"] == pytest.approx(2.0)


def test_the_hit_whose_name_led_there_and_the_seeds_that_surfaced_lead() -> None:
    evidence = {"hit": 1.0, "event": 0.5, "other": 0.05}
    hopped = {"other": Hop(0.2, "nadia", "hit"), "asked": Hop(1.0, "leonie", None)}
    surfaced = {"concept": [("event", 0.5), ("hit", 1.0)]}
    led = leaders(Expansion(), hopped, surfaced, evidence)
    assert led == {"other": {"hit"}, "concept": {"event", "hit"}}
