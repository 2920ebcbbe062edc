"""Intents read as goals a person set (issue 11, third round): a title is always an action,
in the verb the evidence keeps using; the deadline is what the goal was due by; a goal that
was decided is resolved, one whose step is done and whose rest has its day is scheduled."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from fold_helpers import ScriptedPlanner, Step

from schemas.events import RawEvent
from schemas.graph import NodeKind
from schemas.intents import IntentMessage, IntentStatus
from topologies.config import EngineConfig
from topologies.embedding import HashingEmbedder
from topologies.engine import FoldEngine
from topologies.goals import done_reports, event_signals
from topologies.memory import TenantMemory, event_node_id
from topologies.naming import Namer
from topologies.naming.phrases import PhraseParser
from topologies.naming.titles import (
    Ranked,
    dated_heads,
    derived_action,
    in_kept_verb,
    is_derived,
    mentions_day,
    written_as_name,
)

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
RACE = datetime(2026, 11, 29, tzinfo=UTC)
REVIEW = datetime(2026, 11, 19, 14, 0, tzinfo=UTC)
FLIGHT = datetime(2026, 12, 18, tzinfo=UTC)


def event(event_id: str, text: str, at: datetime, source: str, sender: str = "") -> RawEvent:
    attrs = {"from": sender} if sender else {}
    return RawEvent(id=event_id, tenant="alice", source=source, ts=at, title=text, attrs=attrs)


def stored(embedder: HashingEmbedder, events: list[RawEvent]) -> TenantMemory:
    engine = FoldEngine(embedder, ScriptedPlanner({}), EngineConfig())
    memory = engine.new_memory("alice")
    for raw in events:
        engine.ingest(memory, raw)
    return memory


def title_of(namer: Namer, events: list[RawEvent], deadline: datetime | None) -> str:
    memory = stored(HashingEmbedder(dim=256), events)
    return namer.title_intent(memory, [event_node_id("alice", e.id) for e in events], deadline)


async def fold(
    script: dict[str, Step], events: list[RawEvent]
) -> tuple[TenantMemory, list[IntentMessage]]:
    config = EngineConfig()  # one theme stays one concept here: no split of its members
    config.topics.split_min_members = 1000
    engine = FoldEngine(HashingEmbedder(dim=256), ScriptedPlanner(script), config)
    memory = engine.new_memory("alice")
    messages = []
    for raw in events:
        messages.extend((await engine.fold(memory, raw)).messages)
    return memory, messages


def the_intent(memory: TenantMemory):  # type: ignore[no-untyped-def]
    (intent,) = memory.graph.nodes(NodeKind.INTENT)
    return intent


# ------------------------------------------------------------------------ titles
def test_a_noun_goal_no_event_acts_on_takes_a_general_verb() -> None:
    assert derived_action("Spreeufer 10k", occasion=True, named=True) == (
        "Prepare for the Spreeufer 10k"
    )
    assert derived_action("Surprise party", occasion=True) == "Prepare for the surprise party"
    assert derived_action("Insurance claim", occasion=False) == "Follow up on the insurance claim"
    assert derived_action("Harbourside Dental Group", occasion=False) == (
        "Follow up on Harbourside Dental Group"
    )
    assert is_derived("Prepare for the Spreeufer 10k (by 29 Nov)")
    assert not is_derived("Prepare the Kessler Logistik demo")


def test_a_dated_occasion_no_event_acts_on_is_prepared_for(namer: Namer) -> None:
    """The race's events register, train and pick up a bib, but none does anything to the
    race itself: the title is still an action, not the race's name."""
    events = [
        event(
            "r-0",
            "Run log: 6 x 800 m. To break 50 minutes at the Spreeufer 10k on Sun "
            "29 Nov I need 5:00/km.",
            T0,
            "note",
        ),
        event(
            "r-1",
            "Registration confirmed - Spreeufer 10k, Sun 29 Nov 2026",
            T0 + timedelta(days=2),
            "email",
        ),
        event(
            "r-2",
            "Race info: Spreeufer 10k on Sun 29 Nov, bag drop closes at 10:10",
            T0 + timedelta(days=9),
            "email",
        ),
    ]
    title = title_of(namer, events, RACE)
    assert title == "Prepare for the Spreeufer 10k (by 29 Nov)"
    assert namer.states_action(title) and namer.title_problem(title) is None


def test_a_calendar_entry_names_the_day_it_starts_on_said_or_not() -> None:
    """The party's own calendar entry ("Back room at the cafe") names no date in its words,
    but it is the occasion on the day it starts; a note written that day about something
    else names no day, nor does an entry starting another day."""
    party = datetime(2026, 11, 14, 19, 15, tzinfo=UTC)

    def entry(event_id: str, title: str, starts: datetime) -> RawEvent:
        start = {"start": starts.isoformat()}
        return RawEvent(
            id=event_id, tenant="alice", source="calendar", ts=party, title=title, attrs=start
        )

    note = RawEvent(id="n-0", tenant="alice", source="note", ts=party, title="Groceries")
    memory = stored(
        HashingEmbedder(dim=256),
        [
            entry("c-0", "Surprise party", party),
            entry("c-1", "Dentist", party + timedelta(3)),
            note,
        ],
    )
    entry_node, other_day, note_node = (
        memory.graph.node(event_node_id("alice", i)) for i in ("c-0", "c-1", "n-0")
    )
    deadline = datetime(2026, 11, 14, tzinfo=UTC)
    assert mentions_day(deadline, entry_node)
    assert not mentions_day(deadline, other_day)
    assert not mentions_day(deadline, note_node)


def test_the_verb_is_the_one_the_evidence_keeps_using_not_one_messages(
    parser: PhraseParser,
) -> None:
    """The tenant asks for the repair, the notes and the notice speak of it; the landlord's one
    reply says the painter will repaint: the goal is the repair."""
    analyses = parser.analyse(
        [
            ("", text, frozenset())
            for text in (
                "Please confirm who repairs the ceiling afterwards and by when.",
                "Our painter will repaint the bathroom ceiling in the week of 7 Dec.",
                "Rent reduced by 10% until the bathroom ceiling is repaired.",
            )
        ]
    )
    repaint = Ranked(1.0, "Repaint the bathroom ceiling", verb="repaint", head="ceiling")
    assert in_kept_verb(analyses, repaint) == "Repair the bathroom ceiling"
    # a verb two events use stays; so does one no other verb outnumbers
    assert in_kept_verb(analyses[1:2], repaint) == "Repaint the bathroom ceiling"
    repair = Ranked(1.0, "Repair the bathroom ceiling", verb="repair", head="ceiling")
    assert in_kept_verb(analyses, repair) == "Repair the bathroom ceiling"


# ------------------------------------------------------------------------ status and deadline
def launch() -> tuple[dict[str, Step], list[RawEvent]]:
    texts = [
        (
            "l-0",
            "Go/no-go review on Thu 19 Nov: please send me the review deck by 19 Nov",
            "email",
            "Farida",
        ),
        ("l-1", "I need to write the go/no-go deck by 19 Nov", "note", ""),
        ("l-2", "Deck for the go/no-go review on 19 Nov: load test and legal sign-off", "note", ""),
        ("l-3", "Reminder: go/no-go review 19 Nov 14:00, we must send the deck", "calendar", ""),
    ]
    script = {i: Step(["Go/no-go review"], category="work", deadline=REVIEW) for i, *_ in texts}
    events = [
        event(i, t, T0 + timedelta(days=n), s, sender) for n, (i, t, s, sender) in enumerate(texts)
    ]
    return script, events


async def test_a_passed_deadline_does_not_roll_on_to_a_later_date_of_the_theme() -> None:
    """After the review's day, the theme speaks of the launch on 1 Dec: the intent stays due
    by the review, what it was set for."""
    script, events = launch()
    later = [
        ("l-4", "Public launch on Tue 1 Dec: we need to brief support before 1 Dec", "note"),
        ("l-5", "Launch 1 Dec: I must update the FAQ by 1 Dec", "note"),
    ]
    for n, (event_id, text, source) in enumerate(later):
        script[event_id] = Step(["Go/no-go review"], category="work")
        events.append(event(event_id, text, REVIEW + timedelta(days=1, hours=n), source))
    memory, _ = await fold(script, events)
    intent = the_intent(memory)
    assert intent.deadline is not None and intent.deadline.date() == REVIEW.date()
    assert intent.title.endswith("(by 19 Nov)")


async def test_a_moved_date_moves_a_passed_deadline() -> None:
    script, events = launch()
    moved = (
        "l-4",
        "The go/no-go review was postponed to 26 Nov, I need to send the deck by 26 Nov",
        "note",
    )
    script["l-4"] = Step(
        ["Go/no-go review"], category="work", deadline=datetime(2026, 11, 26, 14, 0, tzinfo=UTC)
    )
    events.append(event(moved[0], moved[1], REVIEW + timedelta(days=1), moved[2]))
    memory, _ = await fold(script, events)
    intent = the_intent(memory)
    assert intent.deadline is not None and intent.deadline.date().day == 26


async def test_a_decision_on_the_goals_day_resolves_it_whatever_it_sets_for_later() -> None:
    script, events = launch()
    script["go"] = Step(["Go/no-go review"], category="work")
    events.append(
        event("go", "We have a GO for Tue 1 Dec, launch on 1 Dec as planned", REVIEW, "chat")
    )
    memory, messages = await fold(script, events)
    intent = the_intent(memory)
    assert intent.status == IntentStatus.RESOLVED
    assert intent.attrs["note"].startswith("decided: We have a GO")
    assert [m.type for m in messages] == ["intent.created", "intent.status_changed"]


async def test_a_go_before_the_goals_day_does_not_resolve_it() -> None:
    script, events = launch()
    script["go"] = Step(["Go/no-go review"], category="work")
    events.append(
        event("go", "Recommendation: GO for Tue 1 Dec", REVIEW - timedelta(days=3), "note")
    )
    memory, _ = await fold(script, events)
    assert the_intent(memory).status == IntentStatus.PENDING


def passport(after: RawEvent) -> tuple[dict[str, Step], list[RawEvent]]:
    texts = [
        ("p-0", "My passport expires in March: I need to renew the passport before 18 Dec", "note"),
        ("p-1", "Appointment confirmation: passport application on 17 Nov", "email"),
        ("p-2", "I must bring the passport photo to the appointment on 17 Nov", "note"),
        ("p-3", "Reminder: the passport has to be renewed before the flight on 18 Dec", "calendar"),
    ]
    script = {i: Step(["Passport"], category="travel", deadline=FLIGHT) for i, _, _ in texts}
    events = [event(i, t, T0 + timedelta(days=n), s) for n, (i, t, s) in enumerate(texts)]
    script[after.id] = Step(["Passport"], category="travel")
    return script, [*events, after]


async def test_the_persons_step_done_with_the_rest_dated_is_action_scheduled() -> None:
    done = event(
        "p-4",
        "Done! Express passport applied, ready for pick-up from 24 Nov",
        datetime(2026, 11, 17, 11, 30, tzinfo=UTC),
        "chat",
        "Alice Keller",
    )
    memory, messages = await fold(*passport(done))
    intent = the_intent(memory)
    assert intent.status == IntentStatus.ACTION_SCHEDULED
    assert intent.attrs["note"].startswith("scheduled: Done! Express passport")
    assert messages[-1].type == "intent.status_changed"


async def test_anothers_report_or_a_step_without_a_day_leaves_the_goal_pending() -> None:
    when = datetime(2026, 11, 17, 11, 30, tzinfo=UTC)
    theirs = event(
        "p-4",
        "Done! Your passport will be ready for pick-up from 24 Nov",
        when,
        "email",
        "Bürgeramt",
    )
    memory, _ = await fold(*passport(theirs))
    assert the_intent(memory).status == IntentStatus.PENDING
    undated = event("p-4", "Done! Express passport applied.", when, "note")
    memory, _ = await fold(*passport(undated))
    assert the_intent(memory).status == IntentStatus.PENDING


async def test_a_neighbouring_step_done_leaves_the_goal_pending() -> None:
    """The partner demo went well and the feed moves on 16 Nov: the demo is a step of the
    launch, not of sending the review deck, so the deck is not action_scheduled."""
    script, events = launch()
    demo = "Partner demo went well. Their feed job moves to 06:00 from 16 Nov."
    script["demo"] = Step(["Go/no-go review"], category="work")
    events.append(event("demo", demo, datetime(2026, 11, 11, 11, 40, tzinfo=UTC), "note"))
    memory, messages = await fold(script, events)
    assert the_intent(memory).status == IntentStatus.PENDING
    assert [m.type for m in messages] == ["intent.created"]


async def test_a_stated_step_of_the_goal_done_with_the_rest_dated_is_action_scheduled() -> None:
    """The photo the person said to bring to the passport appointment is done, the
    appointment has its day: a step of this goal, named by its events with the passport."""
    done = event(
        "p-4",
        "Photo done at the studio. Bring the code to the Bürgeramt on 17 Nov.",
        datetime(2026, 11, 12, 12, 50, tzinfo=UTC),
        "note",
    )
    memory, _ = await fold(*passport(done))
    assert the_intent(memory).status == IntentStatus.ACTION_SCHEDULED


def test_words_a_report_shares_with_the_goal_by_chance_make_it_no_step(namer: Namer) -> None:
    """The passport's events also name Maria, a call, a form and today; a report of the call
    with Maria about the offsite shares those words, not the passport or a thing they name
    with it: it is no step of renewing the passport. The passport photo is one."""
    texts = [
        "Maria: call me today about the passport, there is a form to fill in",
        "I must bring the passport photo to the appointment on 17 Nov",
        "Passport thing: I need time to update the address first",
    ]
    title = "Renew the passport (by 18 Dec)"
    assert not namer.step_of_goal(title, ["Call with Maria done today"], texts)
    assert not namer.step_of_goal(title, ["Offsite update done, one thing left"], texts)
    assert not namer.step_of_goal(title, ["The tax form is done, took some time"], texts)
    assert namer.step_of_goal(title, ["Photo done at the studio"], texts)
    assert namer.step_of_goal(title, ["Express passport, ready from 24 Nov"], texts)


def test_a_report_of_it_done_speaks_of_what_its_event_is_about(namer: Namer) -> None:
    """ "FYI, what I sent to Farida" forwards the go/no-go deck: what was sent is the thing the
    event's title names, a step of sending the deck; the offsite agenda sent to her is not."""
    texts = ["Farida wants the go/no-go deck by Wed 18 Nov noon", "Deck for the review on 19 Nov"]
    title = "Send the review deck (by 18 Nov)"
    report = ["FYI, what I sent to Farida"]
    assert namer.step_of_goal(title, report, texts, "Fwd: Flux Tariffs go/no-go deck")
    assert not namer.step_of_goal(title, report, texts, "Fwd: offsite agenda")


def test_a_bare_done_reports_what_the_next_sentence_names() -> None:
    from topologies.engine import event_to_node

    def reports(text: str) -> list[str]:
        return done_reports(event_to_node(event("x", text, T0, "chat"), "n-x"))

    assert reports("Done! Express passport, ready from 24 Nov. I'll add it") == [
        "Express passport, ready from 24 Nov"
    ]
    assert reports("Partner demo went well. Feed moves to 16 Nov") == ["Partner demo went well"]
    assert reports("The feed moves to 16 Nov") == []


def test_a_day_that_has_passed_is_no_day_ahead_of_an_event() -> None:
    """What a notifier would send as a deadline is a day ahead of the event: a day its words
    say has passed is none, however it is written without a year."""

    def ahead(text: str) -> datetime | None:
        from topologies.engine import event_to_node

        return event_signals(event_to_node(event("x", text, T0, "note"), "n-x")).ahead

    assert ahead("Off coffee since 14 March, and I must keep it up") is None
    assert ahead("Back on 20 Nov we still had the old car") is None
    assert ahead("Last Friday the crown cracked, I must call the dentist") is None
    assert ahead("Friday's demo went well, I need to write it up") is None
    assert ahead("Friday's demo: I need to write it up by then") == datetime(
        2026, 11, 6, tzinfo=UTC
    )


def test_decision_and_moved_cues() -> None:
    def cues(text: str):  # type: ignore[no-untyped-def]
        from topologies.engine import event_to_node

        return event_signals(event_to_node(event("x", text, T0, "note"), "n-x"))

    assert cues("We have a GO for Tue 1 Dec").decided
    assert cues("The exec team approved the launch").decided
    assert not cues("Go/no-go review, go for it").decided
    assert not cues("Recommendation: GO for Tue 1 Dec").decided
    assert not cues("All four green means GO for Tue 1 Dec").decided
    assert cues("The review was postponed to 26 Nov").moved
    assert not cues("The review is on 26 Nov").moved


CUT_OFF = datetime(2026, 10, 9, tzinfo=UTC)


def test_a_goal_that_starts_with_a_place_keeps_its_capital(namer: Namer) -> None:
    """A general verb before a noun-phrase goal writes a common noun in lower case, but a
    place the evidence writes as a name stays one ("the Lisbon spend forecast", never "the
    lisbon spend forecast"); a heading's capital ("Budget request: ...") is no name."""
    forecast = [
        event(
            "l-0",
            "Lisbon spend forecast: hotel 2,832 EUR, venue 2,337 EUR, dinner 819 EUR. "
            "Receipts go into Pleo by 9 October.",
            T0,
            "email",
        ),
        event(
            "l-1",
            "Updated the Lisbon spend forecast with the flights to Lisbon.",
            T0 + timedelta(days=1),
            "note",
        ),
        event(
            "l-2",
            "Lisbon spend forecast: the hotel invoice for Lisbon arrived, 9 October is the "
            "cut-off.",
            T0 + timedelta(days=2),
            "email",
        ),
    ]
    assert title_of(namer, forecast, CUT_OFF) == "Prepare for the Lisbon spend forecast (by 9 Oct)"
    request = [
        event(
            "b-0",
            "Budget request: hotel and venue for the team, please confirm by 9 October",
            T0,
            "email",
        ),
        event(
            "b-1",
            "Budget request sent, the budget request waits for Pieter",
            T0 + timedelta(days=1),
            "note",
        ),
        event(
            "b-2",
            "Re: Budget request: approved in principle, 9 October is the cut-off",
            T0 + timedelta(days=2),
            "email",
        ),
    ]
    assert title_of(namer, request, CUT_OFF) == "Prepare for the budget request (by 9 Oct)"


DEMO = datetime(2026, 11, 24, tzinfo=UTC)


def test_the_thing_the_deadline_is_written_against_is_the_goal_not_a_step(
    namer: Namer,
) -> None:
    """The demo is what the 24 November deadline is for; the load test and the dry run are
    steps towards it: the title prepares for the demo, not for a step."""
    events = [
        event("d-0", "Moving the partner demo to Tuesday 24 November", T0, "email"),
        event(
            "d-1",
            "Dry run: partner demo on the staging cluster, run the load test first",
            T0 + timedelta(days=1),
            "calendar",
        ),
        event(
            "d-2",
            "Load test on the staging cluster: run it twice, p95 still too high",
            T0 + timedelta(days=2),
            "chat",
        ),
        event(
            "d-3",
            "Rollout went red, the staging cluster lost its index",
            T0 + timedelta(days=3),
            "chat",
        ),
    ]
    assert title_of(namer, events, DEMO) == "Prepare for the partner demo (by 24 Nov)"


def dated(texts: list[str], deadline: datetime) -> frozenset[str]:
    events = [event(f"x-{i}", t, T0 + timedelta(days=i), "email") for i, t in enumerate(texts)]
    memory = stored(HashingEmbedder(dim=256), events)
    nodes = [memory.graph.node(event_node_id("alice", e.id)) for e in events]
    return dated_heads(nodes, PhraseParser().analyse_nodes(nodes), deadline)


def test_what_the_deadlines_day_is_written_against() -> None:
    """The noun phrase right before the date, a preposition at most between, in the date's
    own clause, and one the evidence comes back to."""
    demo = "Slides for the partner demo and the staging cluster"
    assert dated(["Moving the partner demo to Tuesday 24 November", demo], DEMO) == {"demo"}
    assert dated(
        ["Full paper Tue 24 Nov, abstract a week before", "Comments on the paper"], DEMO
    ) == {"paper"}
    # a verb between the phrase and the date, another clause, one event only: none
    assert not dated(["A staging copy, so I'd like to propose Tuesday 24 November", demo], DEMO)
    assert not dated(["Budget request: 24 November", "Budget request sent"], DEMO)
    assert not dated(["Good luck on Tuesday 24 November!", demo], DEMO)


def test_the_dated_thing_is_named_as_an_event_names_it(namer: Namer) -> None:
    """The dry run's title says whose demo it is ("Zorvex partner demo"): the goal is that
    demo by its particular name, not "the partner demo"."""
    events = [
        event("z-0", "Moving the partner demo to Tuesday 24 November", T0, "email"),
        event(
            "z-1",
            "Dry run: Zorvex partner demo on the staging cluster, run the load test first",
            T0 + timedelta(days=1),
            "calendar",
        ),
        event(
            "z-2",
            "Load test on the staging cluster: run it twice, p95 still too high",
            T0 + timedelta(days=2),
            "chat",
        ),
    ]
    assert title_of(namer, events, DEMO) == "Prepare for the Zorvex partner demo (by 24 Nov)"


def test_a_word_is_a_name_when_the_evidence_writes_it_as_one() -> None:
    texts = ["Dry run: Kessler demo", "Flights to Lisbon booked", "Partner demo: slides"]
    assert written_as_name("Kessler", texts, frozenset())  # no English word
    assert written_as_name("Lisbon", texts, frozenset())  # a capital inside a sentence
    assert not written_as_name("Partner", [*texts, "the partner demo"], frozenset())
    assert not written_as_name("Anja", ["Dear Anja, the demo moved"], frozenset({"anja"}))
