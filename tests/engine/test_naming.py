"""Names a person recognises: concept labels are noun phrases of the members' own words,
intent titles are to-do items of the evidence's own actions (topologies.naming)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from schemas.events import RawEvent
from schemas.graph import NodeKind
from topologies.config import EngineConfig
from topologies.embedding import HashingEmbedder
from topologies.engine import FoldEngine
from topologies.heuristic_planner import HeuristicPlanner
from topologies.memory import TenantMemory, event_node_id
from topologies.naming import Namer, next_naming, redate, with_deadline
from topologies.naming.activities import activity_labels, names_a_doing
from topologies.naming.labels import rank_labels
from topologies.naming.phrases import PhraseParser, name_words
from topologies.naming.titles import rank_actions, rank_goals

MakeEvent = Callable[..., RawEvent]
TRIP = datetime(2026, 12, 18, 8, 0, tzinfo=UTC)


def phrases(parser: PhraseParser, body: str, title: str = "", people: tuple[str, ...] = ()) -> set:
    (analysis,) = parser.analyse([(title, body, name_words(people))])
    return {p.text.lower() for p in analysis.phrases}


def actions(parser: PhraseParser, body: str) -> list[str]:
    (analysis,) = parser.analyse([("", body, frozenset())])
    return [a.text for a in analysis.actions]


def goals(parser: PhraseParser, body: str) -> dict[str, float]:
    """Each action of the text and how far its clause states it as the person's goal."""
    (analysis,) = parser.analyse([("", body, frozenset())])
    return {a.text: a.goal for a in analysis.actions}


def doings(parser: PhraseParser, bodies: list[str]) -> list[str]:
    analyses = parser.analyse([("", body, frozenset()) for body in bodies])
    return [a.text for a in activity_labels(analyses)]


async def folded(engine: FoldEngine, events: list[RawEvent]) -> TenantMemory:
    memory = engine.new_memory("alice")
    for event in events:
        await engine.fold(memory, event)
    return memory


def event_ids(events: list[RawEvent]) -> list[str]:
    return [event_node_id("alice", e.id) for e in events]


# ------------------------------------------------------------- label candidates
def test_candidates_are_noun_phrases_never_function_words_or_verbs(parser: PhraseParser) -> None:
    found = phrases(parser, "Whether or not we go, book the dentist because the tooth hurts.")
    assert "dentist" in found and "tooth" in found
    assert not found & {"whether", "book", "go", "because", "or"}


def test_candidates_never_span_two_clauses(parser: PhraseParser) -> None:
    found = phrases(parser, "Chase the landlord about the ceiling, then renew the passport.")
    assert {"landlord", "ceiling", "passport"} <= found
    assert all(len({"ceiling", "passport", "landlord"} & set(p.split())) <= 1 for p in found)


def test_candidates_hold_no_name_date_or_number(parser: PhraseParser) -> None:
    found = phrases(
        parser,
        "Mam Rang and Farida Osei moved the Flux Tariffs review to 19 Nov at 14:00, room 4.",
        people=("Farida Osei <farida@example.org>",),
    )
    words = {w for p in found for w in p.split()}
    assert not words & {"mam", "rang", "farida", "osei", "nov", "19", "14:00", "4"}
    assert "review" in {p.split()[-1] for p in found}


def test_a_phrase_never_starts_inside_a_name(parser: PhraseParser) -> None:
    found = phrases(parser, "The Sand Creek substation transformer failed again.")
    assert "creek substation transformer" not in found
    assert "substation transformer" in found


# ----------------------------------------------------------------- label check
@pytest.mark.parametrize(
    ("label", "problem"),
    [
        ("Whether", "a function word, not a topic"),
        ("Run", "does not end in a noun"),
        ("19 Nov", "a date or a number"),
        ("Mam Rang", "contains a person's name"),
        ("Passport renewal, then the trip", "spans more than one clause"),
        ("Cousins beside", "does not end in a noun"),
        ("Renewal of the old passport for the family trip", "longer than a short noun phrase"),
    ],
)
def test_a_label_that_is_not_a_folder_name_is_refused(
    namer: Namer, label: str, problem: str
) -> None:
    assert namer.label_problem(label) == problem


def test_a_name_known_from_the_evidence_is_refused_in_a_label(namer: Namer) -> None:
    assert namer.label_problem("Leonie party", frozenset({"leonie"})) == (
        "contains a person's name"
    )


@pytest.mark.parametrize("label", ["Passport renewal", "Water damage", "Flux Tariffs launch"])
def test_a_short_noun_phrase_passes(namer: Namer, label: str) -> None:
    assert namer.label_problem(label) is None


# ------------------------------------------------------------ activity labels
@pytest.mark.parametrize(
    ("bodies", "label"),
    [
        (
            ["I need to renew my passport before the trip.", "Renewed the passport today."],
            "passport renewal",
        ),
        (
            ["Asked the landlord to reduce the rent.", "The rent should be reduced."],
            "rent reduction",
        ),
        (["I applied for a visa in March.", "Apply for the visa by Monday."], "visa application"),
        (
            ["We have to repair the ceiling.", "The plumber will repair the ceiling."],
            "ceiling repair",
        ),
        (
            ["Please clean the windows on Friday.", "I cleaned the windows today."],
            "window cleaning",
        ),
    ],
)
def test_a_doing_shared_by_members_is_named_object_first_with_the_verb_as_a_noun(
    parser: PhraseParser, bodies: list[str], label: str
) -> None:
    assert doings(parser, bodies)[0] == label


def test_a_doing_mentioned_once_is_no_theme(parser: PhraseParser) -> None:
    assert doings(parser, ["I need to renew my passport.", "The trip is in December."]) == []


def test_a_noun_of_the_verb_elsewhere_in_a_message_is_not_the_doing(parser: PhraseParser) -> None:
    """ "charge the phone" once and "a double charge" on the bill are two things."""
    assert (
        doings(
            parser, ["Please charge the phone tonight.", "The phone bill shows a double charge."]
        )
        == []
    )


def test_common_verbs_name_no_doing(parser: PhraseParser) -> None:
    """ "running the race", "getting the keys" name no folder: too general."""
    assert doings(parser, ["Run the race on Sunday.", "I will run the race in 50 minutes."]) == []
    assert doings(parser, ["Get the keys from Jonas.", "I got the keys."]) == []


def test_a_label_can_name_the_members_doing(
    embedder: HashingEmbedder, namer: Namer, parser: PhraseParser
) -> None:
    texts = [
        ("Landlord", "The landlord refused to reduce the rent."),
        ("Bathroom", "They should reduce the rent while the bathroom is unusable."),
        ("Letter", "The rent reduction letter went out today."),
    ]
    analyses = parser.analyse([(t, b, frozenset()) for t, b in texts])
    vectors = embedder.embed([f"{t}\n{b}" for t, b in texts])
    assert "Rent reduction" in [label for _, label in rank_labels(analyses, vectors, namer.embed)]


@pytest.mark.parametrize(
    ("noun", "expected"),
    [("planning", True), ("hiring", True), ("morning", False), ("ceiling", False)],
)
def test_a_gerund_of_an_english_verb_names_a_doing(noun: str, expected: bool) -> None:
    assert names_a_doing(noun) is expected


# ------------------------------------------------------------ concept labels
async def test_a_concept_is_named_by_the_phrase_its_members_share(
    embedder: HashingEmbedder, namer: Namer, make_event: MakeEvent
) -> None:
    events = [
        make_event("Water damage in the bathroom", "The ceiling shows water damage again."),
        make_event("Plumber visit", "The plumber checks the water damage on Wednesday."),
        make_event("Landlord", "Sent Jonas the photos of the water damage."),
    ]
    engine = FoldEngine(embedder, HeuristicPlanner(embedder, EngineConfig()), EngineConfig())
    memory = await folded(engine, events)
    (concept,) = memory.graph.nodes(NodeKind.CONCEPT)
    assert namer.label_concept(memory, event_ids(events), concept.id) == "Water damage"
    assert concept.title == "Water damage"


def test_a_label_differs_from_its_siblings(
    embedder: HashingEmbedder, namer: Namer, parser: PhraseParser
) -> None:
    texts = [
        ("Water damage in the bathroom", "The ceiling shows water damage again."),
        ("Plumber visit", "The plumber checks the water damage and the ceiling."),
    ]
    analyses = parser.analyse([(t, b, frozenset()) for t, b in texts])
    vectors = embedder.embed([f"{t}\n{b}" for t, b in texts])
    alone = rank_labels(analyses, vectors, namer.embed)[0][1]
    beside = rank_labels(analyses, vectors, namer.embed, [alone], namer.embed([alone]))[0][1]
    assert alone == "Water damage" and beside not in (alone, "Damage", "Water")


def test_naming_milestones_double() -> None:
    sequence = [2]
    while len(sequence) < 6:
        sequence.append(next_naming(sequence[-1]))
    assert sequence == [2, 4, 8, 16, 32, 64]
    assert next_naming(3) == 6  # a concept formed with three members


async def test_a_concept_is_renamed_at_its_growth_milestones_only(
    embedder: HashingEmbedder, make_event: MakeEvent
) -> None:
    config = EngineConfig(assign_similarity=0.3, pair_similarity=0.3)
    planner = HeuristicPlanner(embedder, config)
    engine = FoldEngine(embedder, planner, config)
    memory = engine.new_memory("alice")
    texts = [
        ("Bathroom ceiling leak", "Water drips from the bathroom ceiling leak."),
        ("Bathroom ceiling leak again", "The bathroom ceiling leak is worse."),
        ("Bathroom ceiling leak damage", "The bathroom ceiling leak left water damage."),
        ("Bathroom ceiling leak photos", "Photos of the water damage from the ceiling leak."),
        ("Bathroom ceiling leak report", "The water damage report on the bathroom ceiling leak."),
    ]
    seen: list[tuple[int, str, int]] = []  # (members, title, members when last named)
    for title, body in texts:
        await engine.fold(memory, make_event(title, body))
        for concept in memory.graph.nodes(NodeKind.CONCEPT):
            attrs = concept.attrs
            seen.append((int(attrs["members"]), concept.title, int(attrs["named_at"])))
    assert [(m, n) for m, _, n in seen] == [(2, 2), (3, 2), (4, 4), (5, 4)]
    titles = [t for _, t, _ in seen]
    assert titles[0] == titles[1] and titles[2] == titles[3]  # named when formed, then at 4
    (concept,) = memory.graph.nodes(NodeKind.CONCEPT)
    members = planner.namer.concept_members(memory, concept.id)
    assert len(members) == 5
    assert titles[2] == planner.namer.label_concept(memory, members[:4], concept.id)


async def test_a_concept_is_named_again_when_a_title_writes_its_one_word_name_in_full(
    embedder: HashingEmbedder, make_event: MakeEvent
) -> None:
    """A group chat named "Mara 50 (surprise!)" makes the folder "Surprise"; the calendar
    entry "Mara's 50th - surprise party" joins before the next growth milestone and names
    it in full. The milestones stay where they were."""
    # every message joins the folder by its words (HashingEmbedder cosines are low): two
    # folders of one chat no longer merge for the chat name their texts used to repeat
    config = EngineConfig(assign_similarity=0.1, pair_similarity=0.3)
    engine = FoldEngine(embedder, HeuristicPlanner(embedder, config), config)
    memory = engine.new_memory("alice")
    chats = [
        ("Reminder: it's a surprise. Saturday at Café Rosa, she thinks we go out for dinner."),
        ("Gift idea: a sailing weekend for two, 20 € each. Please pay by Wednesday."),
        ("Paid! Who is bringing the candles for the surprise?"),
        ("All paid, the sailing weekend is booked. Keep the surprise!"),
    ]
    for body in chats:
        await engine.fold(memory, make_event("Mara 50 (surprise!)", body, source="chat"))
    (concept,) = memory.graph.nodes(NodeKind.CONCEPT)
    assert concept.title == "Surprise"
    named_at = int(concept.attrs["named_at"])
    entry = make_event(
        "Mara's 50th - surprise party",
        "Back room at Café Rosa for the surprise. Bring the voucher for the sailing weekend.",
        source="calendar",
    )
    await engine.fold(memory, entry)
    (concept,) = memory.graph.nodes(NodeKind.CONCEPT)
    assert int(concept.attrs["members"]) < next_naming(named_at)
    assert concept.title == "Surprise party"
    assert int(concept.attrs["named_at"]) == named_at


# ------------------------------------------------------------------- titles
def test_actions_are_imperatives_of_what_the_text_asks(parser: PhraseParser) -> None:
    found = actions(
        parser,
        "I need to renew my passport before the trip. The airline changed the booking. "
        "Please confirm both appointments.",
    )
    assert "renew the passport before the trip" in found
    assert "confirm both appointments" in found
    assert not any(a.startswith("change") for a in found)  # a report, not a to-do


@pytest.mark.parametrize(
    ("sentence", "action", "goal"),
    [
        ("I need to renew my passport.", "renew the passport", 1.0),
        ("We have to book the venue soon.", "book the venue", 1.0),
        (
            "The crown must be cemented before the trip.",
            "get the crown cemented before the trip",
            1.0,
        ),
        ("The crown needs to be cemented.", "get the crown cemented", 1.0),
        ("The feature text is due on 25 Nov.", "finish the feature text", 1.0),
        ("Please confirm both appointments.", "confirm both appointments", 0.5),
        ("Reply by Tuesday so I can give the numbers.", "give the numbers", 0.0),
    ],
)
def test_a_sentence_that_states_a_goal_marks_its_action_as_one(
    parser: PhraseParser, sentence: str, action: str, goal: float
) -> None:
    assert goals(parser, sentence).get(action) == goal


def test_a_goal_that_is_declined_is_no_action(parser: PhraseParser) -> None:
    assert goals(parser, "We don't need to book the venue.") == {}


def test_what_another_person_will_do_is_not_the_owners_to_do(
    embedder: HashingEmbedder, namer: Namer, parser: PhraseParser
) -> None:
    analyses = parser.analyse([("", "I will send the slides tomorrow.", frozenset())])
    vectors = embedder.embed(["I will send the slides tomorrow."])
    theirs = rank_actions(analyses, vectors, namer.embed, own=[False])
    mine = rank_actions(analyses, vectors, namer.embed, own=[True])
    assert theirs == [] and [a.text for a in mine] == ["Send the slides"]


def test_a_stated_goal_makes_the_title_rather_than_a_thing_to_bring(namer: Namer) -> None:
    title = namer.title_texts(
        [
            "Bring the health insurance card to the appointment.",
            "The crown must be cemented before the trip.",
            "Bring the insurance card and the cost plan.",
        ]
    )
    assert title == "Get the crown cemented before the trip"


def test_evidence_that_only_reports_a_doing_is_titled_by_following_it_up(namer: Namer) -> None:
    """The doing names the goal, and a title is an action: the person follows it up."""
    title = namer.title_texts(
        ["The landlord reduced the rent by ten percent.", "The rent reduction starts in March."]
    )
    assert title == "Follow up on the rent reduction"
    assert namer.title_problem(title) is None and namer.states_action(title)


async def test_an_intent_title_is_an_action_from_the_evidence_with_its_deadline(
    embedder: HashingEmbedder, namer: Namer, make_event: MakeEvent
) -> None:
    events = [
        make_event("Passport problem", "Mine expires in March: I need to renew the passport."),
        make_event("Flights booked", "Flights to Bangkok on 18 Dec are booked."),
        make_event("Passport photo", "Got the photo for the passport renewal."),
    ]
    engine = FoldEngine(embedder, HeuristicPlanner(embedder, EngineConfig()), EngineConfig())
    memory = await folded(engine, events)
    title = namer.title_intent(memory, event_ids(events), TRIP)
    assert title == "Renew the passport (by 18 Dec)"
    assert namer.title_problem(title) is None
    assert " before " not in title.replace(" before the trip", "")


def test_an_aside_is_no_title_when_the_evidence_is_about_something_else(namer: Namer) -> None:
    """One message asks a favour; the rest is about the visa: the title is the visa, followed
    up (no event does anything to it the person could do)."""
    title = namer.title_texts(
        [
            "Can you swap the invigilation with me on Friday?",
            "My visa application is missing a bank statement.",
            "The embassy received the visa application.",
            "The visa application fee is 80 euros.",
            "Photos for the visa application are done.",
        ]
    )
    assert title == "Follow up on the visa application"


def test_a_phrase_an_event_is_titled_by_is_a_goal_candidate_before_details(
    embedder: HashingEmbedder, namer: Namer, parser: PhraseParser
) -> None:
    """What an event is titled by says what it is about; the phrases of its body that are
    used as often are details ("Leonie's 40th - surprise party" beside a cake stand)."""
    texts = [
        ("Gift", "A pottery weekend for two, a birthday card, a cake stand and a gift bag."),
        ("Surprise party", "Back room at the corner cafe, arrive by seven."),
    ]
    analyses = parser.analyse([(t, b, frozenset()) for t, b in texts])
    vectors = embedder.embed([f"{t}\n{b}" for t, b in texts])
    assert "Surprise party" in [g.text for g in rank_goals(analyses, vectors, namer.embed)]


def test_titles_that_are_not_to_do_items_are_refused(namer: Namer) -> None:
    assert namer.title_problem("Book before Parcel Elephants (by 19 Nov)") is not None
    assert namer.title_problem("Feed before Launch Plan") == "does not start with an action"
    assert namer.title_problem("Crown and tooth") == "does not start with an action"
    assert namer.title_problem("Passport") == "an action needs an object"
    assert namer.title_problem("Renew the passport before the trip (by 18 Dec)") is None


def test_a_title_is_one_sentence_with_an_object_that_is_not_a_date(namer: Namer) -> None:
    """From "Recommendation: GO for Tue 1 Dec. Risk slide: push notifications ..." the hashing
    run titled an intent "Go for Tue Dec. Risk slide"."""
    assert namer.title_problem("Go for Tue Dec. Risk slide (by 1 Dec)") is not None
    assert namer.title_problem("Go for Tue 1 Dec") == "an action needs an object, not a date"
    assert namer.title_problem("Call Dr. Weber about the crown") is None
    assert namer.title_problem("Send the review deck (by 1 Dec)") is None


@pytest.mark.parametrize("goal", ["Passport renewal (by 24 Nov)", "Rent reduction", "Code review"])
def test_a_noun_phrase_of_a_goal_is_a_title(namer: Namer, goal: str) -> None:
    assert namer.title_problem(goal) is None


def test_the_deadline_suffix_is_replaced_not_stacked() -> None:
    title = with_deadline("Renew the passport", TRIP)
    assert title == "Renew the passport (by 18 Dec)"
    assert with_deadline(title, datetime(2026, 12, 4, tzinfo=UTC)) == (
        "Renew the passport (by 4 Dec)"
    )


async def test_the_description_says_why_in_sentences(
    embedder: HashingEmbedder, namer: Namer, make_event: MakeEvent
) -> None:
    events = [
        make_event("Passport problem", "Mine expires in March: I need to renew it.", hours=0),
        make_event("#family", "Flights to Bangkok on 18 Dec are booked for us.", hours=30),
        make_event("Passport photo", "Got the photo for the passport renewal.", hours=60),
    ]
    engine = FoldEngine(embedder, HeuristicPlanner(embedder, EngineConfig()), EngineConfig())
    memory = await folded(engine, events)
    text = namer.describe_intent(
        memory, event_ids(events), [], TRIP, event_node_id("alice", events[1].id)
    )
    lines = text.split("\n")
    flights = '"Flights to Bangkok on 18 Dec are booked for us."'
    assert lines[0] == (
        "This came up because 3 events between 2 Nov and 4 Nov 2026 point to the same goal. "
        f'It started with "Passport problem" (2 Nov), then {flights} (3 Nov); '
        'the latest is "Passport photo" (4 Nov).'
    )
    assert "#family" not in text  # a channel name says nothing: the text is quoted instead
    assert lines[1] == f"Due by 18 Dec 2026, from {flights}."
    assert all(line.endswith(".") for line in lines)
    assert redate(text, datetime(2026, 12, 4, tzinfo=UTC)).endswith("Due by 4 Dec 2026.")


def test_a_folder_named_for_a_project_does_not_make_the_project_the_goal(
    embedder: HashingEmbedder, namer: Namer, parser: PhraseParser
) -> None:
    """The launch's folder is "Kestrel Payments": the name says what the goal is for (the
    title adds "for Kestrel Payments"), so it weighs the goal no more than the folder's
    common-noun name would weigh a thing it names; "Launch sync" still weighs the sync."""
    texts = [
        ("Kestrel Payments weekly launch sync", "Please send the review deck by Wed."),
        ("Go/No-Go for Kestrel Payments", "The review is on Thu 19 Nov."),
    ]
    analyses = parser.analyse([(t, b, frozenset()) for t, b in texts])
    vectors = embedder.embed([f"{t}\n{b}" for t, b in texts])

    def scores(labels: list[str]) -> dict[str, float]:
        ranked = rank_goals(analyses, vectors, namer.embed, labels=labels)
        return {g.text: g.score for g in ranked}

    assert scores(["Kestrel Payments"]) == scores([])
    assert scores(["Launch sync"]) != scores([])
