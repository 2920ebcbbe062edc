"""Second round of naming rules (topologies.naming): what a goal is for, what a folder is
not named by, whose words are names, and one naming path for the fold and the nightly."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from schemas.events import RawEvent
from topologies.config import EngineConfig
from topologies.embedding import HashingEmbedder
from topologies.engine import FoldEngine, event_to_node
from topologies.heuristic_planner import HeuristicPlanner
from topologies.memory import TenantMemory, event_node_id
from topologies.naming import Namer
from topologies.naming.phrases import PhraseParser, name_words, shared_parser
from topologies.naming.titles import mentions_day

MakeEvent = Callable[..., RawEvent]
DEMO = datetime(2026, 4, 28, 14, 0, tzinfo=UTC)


def stored(embedder: HashingEmbedder, events: list[RawEvent]) -> TenantMemory:
    """The events as EVENT nodes with vectors, nothing folded (as the naming oracle does)."""
    engine = FoldEngine(embedder, HeuristicPlanner(embedder, EngineConfig()), EngineConfig())
    memory = engine.new_memory("alice")
    for event in events:
        engine.ingest(memory, event)
    return memory


def ids(events: list[RawEvent]) -> list[str]:
    return [event_node_id("alice", e.id) for e in events]


def analysed(parser: PhraseParser, body: str, title: str = "", people: tuple[str, ...] = ()):
    (analysis,) = parser.analyse([(title, body, name_words(people))])
    return analysis


# ------------------------------------------------------------------ candidates
def test_a_named_thing_is_a_candidate_target_and_a_person_is_not(parser: PhraseParser) -> None:
    analysis = analysed(
        parser,
        "Anja Vogt confirmed: the demo for Kessler Logistik is on Tuesday in Leipzig.",
        people=("Anja Vogt <a.vogt@kessler-logistik.de>",),
    )
    named = {p.text for p in analysis.named}
    assert "Kessler Logistik" in named
    assert not any("Anja" in n or "Vogt" in n for n in named)


def test_a_unit_after_a_number_names_no_folder(
    embedder: HashingEmbedder, namer: Namer, make_event: MakeEvent
) -> None:
    events = [
        make_event("Run log", "Easy 8 km along the canal, the knee held up."),
        make_event("Run log", "Intervals: 6 km with the club, knee fine."),
        make_event("Run log", "Long run, 14 km, the knee ached at the end."),
    ]
    memory = stored(embedder, events)
    label = namer.label_concept(memory, ids(events))
    assert label.lower() != "km"
    assert "km" not in label.lower().split()


def test_an_evaluative_adjective_is_cut_from_a_label(parser: PhraseParser) -> None:
    analysis = analysed(parser, "What an awesome family trip it was!")
    found = {p.text.lower() for p in analysis.phrases}
    assert "family trip" in found
    assert not any(p.startswith("awesome") for p in found)


def test_an_organisation_sender_keeps_its_common_words_as_topics() -> None:
    words = name_words(
        [
            "Colorado PUC Press Office <puc_press@state.co.us>",
            "billing@ledgerly.com.au",
            "Jana Okafor",
            "Mark Delaney <mdelaney@frontrangeelectric.com>",
        ]
    )
    assert {"jana", "okafor", "mark", "delaney", "puc"} <= words  # people, and a rare word
    assert not words & {"press", "office", "billing"}  # an organisation's common words


# ------------------------------------------------------------------ actions
def test_a_verb_with_a_prepositional_object_is_an_action(parser: PhraseParser) -> None:
    texts = [a.text for a in analysed(parser, "Please apply for the express passport.").actions]
    assert "apply for the express passport" in texts


def test_a_date_in_the_sentence_commits_without_the_entity_recogniser(
    parser: PhraseParser,
) -> None:
    (dated,) = analysed(parser, "Send the deck to Farida by Wed 18 Nov.").actions
    (undated,) = analysed(parser, "Send the deck to Farida.").actions
    assert dated.commitment > undated.commitment


# ------------------------------------------------------------------ titles
def test_an_event_that_names_the_deadline_day_is_where_the_goal_comes_from() -> None:
    when = datetime(2026, 4, 20, 9, 0, tzinfo=UTC)
    anchor = RawEvent(
        id="a", tenant="alice", source="note", ts=when, title="Kessler Logistik demo",
        body="Tue 28 Apr, 14:00 in Leipzig.",
    )  # fmt: skip
    other = anchor.model_copy(update={"title": "Standup", "body": "Rollback drill on Friday."})
    assert mentions_day(DEMO, event_to_node(anchor, "a"))
    assert not mentions_day(DEMO, event_to_node(other, "b"))
    assert not mentions_day(None, event_to_node(anchor, "a"))


def title_of(
    embedder: HashingEmbedder, namer: Namer, events: list[RawEvent], deadline: datetime | None
) -> str:
    """The namer's title of these events stored as an intent's evidence."""
    return namer.title_intent(stored(embedder, events), ids(events), deadline)


def april(n: int, title: str, body: str) -> RawEvent:
    when = datetime(2026, 4, 20, 9, 0, tzinfo=UTC) + timedelta(hours=n)
    return RawEvent(id=f"apr-{n}", tenant="alice", source="note", ts=when, title=title, body=body)


async def test_a_goal_with_a_particular_target_beats_a_weak_action(
    embedder: HashingEmbedder, namer: Namer
) -> None:
    events = [
        april(
            1, "Kessler Logistik demo", "Tue 28 Apr, 14:00: the Kessler Logistik demo in Leipzig."
        ),
        april(2, "Demo script", "The Kessler Logistik demo opens with their main depot."),
        april(3, "Rollout", "The Kessler Logistik demo depends on the second rollout."),
        april(4, "Slides", "Keep part to two slides."),
    ]
    # no event acts on it: the occasion the deadline's event names is prepared for
    derived = "Prepare for the Kessler Logistik demo (by 28 Apr)"
    assert title_of(embedder, namer, events, DEMO) == derived
    events.append(april(5, "Dry run", "We prepared the Kessler Logistik demo on staging."))
    # one event's doing is no goal's verb
    assert title_of(embedder, namer, events, DEMO) == derived
    events.append(april(6, "Rehearsal", "Anja prepared the Kessler Logistik demo too."))
    title = title_of(embedder, namer, events, DEMO)
    assert title == "Prepare the Kessler Logistik demo (by 28 Apr)"  # in the evidence's verb
    assert namer.states_action(title)


async def test_an_action_is_set_for_the_named_thing_the_evidence_keeps_returning_to(
    embedder: HashingEmbedder, namer: Namer
) -> None:
    events = [
        april(1, "Draft", "At Willow Creek Care Center the generator powers one wing."),
        april(2, "Call: Willow Creek Care Center", "Administrator call about room temperatures."),
        april(3, "Interview request", "Please send the questions in advance of the interview."),
    ]
    title = title_of(embedder, namer, events, None)
    assert title == "Send the questions for Willow Creek Care Center"


async def test_an_address_is_no_target_of_a_goal(embedder: HashingEmbedder, namer: Namer) -> None:
    events = [
        april(1, "Water damage, Grünberger Str. 41", "The bathroom ceiling is wet again."),
        april(2, "Leak detection, Grünberger Str. 41", "The plumber comes on Friday."),
        april(3, "Landlord", "Please repaint the bathroom ceiling once it is dry."),
    ]
    assert "Grünberger" not in title_of(embedder, namer, events, None)


async def test_a_capital_of_a_heading_names_no_target(
    embedder: HashingEmbedder, namer: Namer
) -> None:
    """ "Flaky test" at the head of two notes is a topic written with a capital, not a name."""
    events = [
        april(1, "Flaky test", "The integration test failed again: replace the cache singleton."),
        april(2, "Flaky test", "Third failure. Replace the cache singleton before the release."),
    ]
    assert not title_of(embedder, namer, events, None).endswith("Flaky test")


async def test_a_name_mentioned_once_or_off_the_deadline_day_is_no_goal(
    embedder: HashingEmbedder, namer: Namer
) -> None:
    events = [
        april(1, "Sprint planning", "Tue 28 Apr, 10:00 · Room Spree + Google Meet."),
        april(2, "Estimates", "Please bring estimates for the routing release."),
        april(3, "Kinetic PT", "Physio at Kinetic PT again, knee fine."),
        april(4, "Kinetic PT", "Kinetic PT moved my session."),
    ]
    memory = stored(embedder, events)
    title = namer.title_intent(memory, ids(events), DEMO)
    assert not title.startswith(("Google Meet", "Kinetic PT"))


async def test_a_person_or_a_place_alone_is_no_goal(
    embedder: HashingEmbedder, namer: Namer, make_event: MakeEvent
) -> None:
    events = [
        make_event("Mika", "Mika asks about Leipzig again."),
        make_event("Mika", "Mika and Leipzig, Leipzig and Mika."),
    ]
    memory = stored(embedder, events)
    title = namer.title_intent(memory, ids(events), None)
    assert title not in ("Mika", "Leipzig")


# ------------------------------------------------------------------ what a folder is of
def test_an_account_of_a_thing_yields_to_the_thing_two_members_speak_of(
    embedder: HashingEmbedder, namer: Namer, make_event: MakeEvent
) -> None:
    events = [
        make_event(
            "Jonas Weber",
            "Plumber is here. The leak is the shower drain upstairs, the water runs along the "
            "pipe into our ceiling. They have to open the ceiling and dry it.",
            source="chat",
        ),
        make_event(
            "Ceiling timeline",
            "Drying from 16 Nov to about 30 Nov, painter in the week of 7 Dec. Write the rent "
            "reduction letter this weekend.",
        ),
    ]
    label = namer.label_concept(stored(embedder, events), ids(events))
    assert label == "Ceiling"  # the thing both speak of, not one note's timeline of it


# -------------------------------------------------------------- one naming path
def test_groups_of_texts_are_named_as_concepts_and_intents_are(namer: Namer) -> None:
    facts = [
        "The bathroom ceiling has water damage since Monday.",
        "The plumber says the water damage comes from the flat above.",
        "I need to report the water damage to the landlord.",
    ]
    assert namer.label_texts(facts) == "Water damage"
    title = namer.title_texts(facts)
    assert namer.title_problem(title) is None
    assert title.startswith("Report the water damage")


def test_without_an_embedder_texts_are_named_by_their_words(parser: PhraseParser) -> None:
    namer = Namer(None, parser)
    facts = [
        "The water damage is in the bathroom.",
        "The plumber looked at the water damage.",
        "Photos of the water damage for the landlord.",
    ]
    assert namer.label_texts(facts) == "Water damage"


def test_every_namer_shares_one_parser_and_the_engine_the_planners_namer(
    embedder: HashingEmbedder,
) -> None:
    planner = HeuristicPlanner(embedder, EngineConfig())
    engine = FoldEngine(embedder, planner, EngineConfig())
    assert engine.namer is planner.namer
    assert Namer(embedder).parser is shared_parser() is Namer(None).parser


def test_letters_with_digits_can_name_a_thing_but_a_time_or_a_unit_cannot(
    parser: PhraseParser,
) -> None:
    analysis = analysed(parser, "Race info: Spreeufer 10k on Sun 29 Nov, start 10:30, 5:00/km.")
    found = {p.text for p in analysis.phrases}
    assert "Spreeufer 10k" in found
    assert not any(p.counted is False and p.text == "km" for p in analysis.phrases)
    assert not found & {"10:30", "29", "Nov"}


def test_a_name_after_an_honorific_is_a_person(parser: PhraseParser) -> None:
    analysis = analysed(
        parser, "Dear Ms Keller, Dr. Yilmaz confirmed the Techniker Krankenkasse plan."
    )
    named = {p.text for p in analysis.named}
    assert not any("Keller" in n or "Yilmaz" in n for n in named)


async def test_what_to_bring_is_a_step_and_the_goal_wins(
    embedder: HashingEmbedder, namer: Namer, make_event: MakeEvent
) -> None:
    events = [
        make_event("Appointment", "Service: apply for a passport."),
        make_event("Reminder", "Please bring your current passport on Tuesday at 10:20."),
    ]
    memory = stored(embedder, events)
    assert namer.title_intent(memory, ids(events), None) == "Apply for a passport"


def test_a_negated_or_conditional_verb_is_no_to_do(parser: PhraseParser) -> None:
    texts = [
        a.text
        for a in analysed(
            parser,
            "She said not to go on a long-haul trip with the temporary crown. "
            "Confirm the slot before you book the flight. Please schedule the fitting.",
        ).actions
    ]
    assert "schedule the fitting" in texts and "confirm the slot" in texts
    assert not any(t.startswith(("go ", "book ")) for t in texts)
