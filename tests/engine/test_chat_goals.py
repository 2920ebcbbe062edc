"""A goal is what its cues speak of (issue 11, item 3). Months of chat between two friends
commit to many small things on many days ("I'll definitely check it out", "I'll do my best",
"I'll keep pushing forward"); counted as a goal, they made intents of whatever the friends
talked about, with titles of other sentences' words: LoCoMo-10's pending intents read "Follow
up on the passionate people", "Follow up on the movie reccomendations", "Follow up on the
local garage", "Spread love". A goal that no event commits to for a day stands on the
sentences that carry its cues: one of them writes the thing the title is about ("we're
planning a big family reunion next summer"), and then the title says what that sentence
does to it ("Plan the family reunion", not "Follow up on the family reunion")."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from fold_helpers import ScriptedPlanner, Step

from schemas.events import RawEvent
from schemas.graph import NodeKind
from topologies.config import EngineConfig
from topologies.embedding import HashingEmbedder
from topologies.engine import FoldEngine, event_to_node
from topologies.goals import cue_sentences, event_signals
from topologies.memory import TenantMemory, event_node_id
from topologies.naming import Namer
from topologies.naming.phrases import PhraseParser

T0 = datetime(2022, 10, 20, 18, 0, tzinfo=UTC)
# a friend's film talk: promises on three days, none about the films
CHATTER = [
    ("Joanna", "Have you watched any good movies lately? I could use some movie "
     "recommendations.", 0),
    ("Nate", "Cool! I'll definitely check it out. Thanks for the movie recommendations!", 0),
    ("Joanna", "The movie recommendations you gave me were so good, the acting was great.", 4),
    ("Nate", "Thanks! Your words mean a lot. I'll do my best!", 4),
    ("Joanna", "I watched two more movies from your recommendations, both were gripping.", 9),
    ("Nate", "That sounds like a great one! I'll add it to my list.", 9),
]  # fmt: skip


def chat(event_id: str, speaker: str, text: str, day: int) -> RawEvent:
    return RawEvent(
        id=event_id,
        tenant="nate",
        source="chat",
        ts=T0 + timedelta(days=day, minutes=int(event_id[1:])),
        title=speaker,
        body=text,
        participants=[speaker],
    )


async def intents_of(lines: list[tuple[str, str, int]]) -> list[str]:
    """Fold the chat, its turns on two themes that alternate (a film talk and its films),
    and return the titles of the intents that emerged."""
    events = [chat(f"m{i}", *line) for i, line in enumerate(lines)]
    themes = [["Movies", "Films"], ["Movies"]]
    script = {e.id: Step(themes[i % 2]) for i, e in enumerate(events)}
    config = EngineConfig()
    config.topics.split_min_members = 1000
    engine = FoldEngine(HashingEmbedder(dim=256), ScriptedPlanner(script), config)
    memory = engine.new_memory("nate")
    for raw in events:
        await engine.fold(memory, raw)
    return [intent.title for intent in memory.graph.nodes(NodeKind.INTENT)]


def title_of(lines: list[tuple[str, str, int]]) -> str:
    """The title the namer gives a goal whose evidence is the chat's turns, stored unfolded."""
    events = [chat(f"m{i}", *line) for i, line in enumerate(lines)]
    engine = FoldEngine(HashingEmbedder(dim=256), ScriptedPlanner({}), EngineConfig())
    memory: TenantMemory = engine.new_memory("nate")
    for raw in events:
        engine.ingest(memory, raw)
    namer = Namer(HashingEmbedder(dim=256))
    return namer.title_intent(memory, [event_node_id("nate", e.id) for e in events], None)


def twice(lines: list[tuple[str, str, int]]) -> list[tuple[str, str, int]]:
    """Two weeks of the same talk."""
    return lines + [(speaker, text, day + 12) for speaker, text, day in lines]


async def test_a_friends_promises_on_many_days_make_no_goal_of_what_they_talk_about() -> None:
    """Before: "I'll definitely check it out", "I'll do my best" and "I'll add it to my
    list" were commitments on three days, and "Use the movie recommendations" an intent;
    no sentence that promises anything speaks of the recommendations."""
    assert await intents_of(twice(CHATTER)) == []


async def test_promises_about_the_thing_itself_make_a_goal() -> None:
    """The same talk, the friend's promises now about the recommendations themselves."""
    promises = [
        "I'll send you my movie recommendations tonight.",
        "I'll write down more movie recommendations for you.",
        "I'll add the new recommendations to my list for you.",
    ]
    joanna = [line for line in CHATTER if line[0] == "Joanna"]
    committed = [
        turn
        for (speaker, text, day), promise in zip(joanna, promises, strict=True)
        for turn in ((speaker, text, day), ("Nate", promise, day))
    ]
    assert await intents_of(twice(committed)) == ["Send the movie recommendations"]


def test_a_goal_cue_is_read_in_its_own_sentence() -> None:
    """What a goal is about is said where its cue is: the people met at the hospital are
    not what "the need to give back" is about."""
    node = event_to_node(
        chat(
            "m0",
            "John",
            "Last week I visited a veteran's hospital and met some amazing people. It made "
            "me appreciate what we have and the need to give back.",
            0,
        ),
        "n0",
    )
    assert cue_sentences(node) == [" It made me appreciate what we have and the need to give back"]


@pytest.mark.parametrize(
    "text",
    [
        "Yeah, we're planning a big family reunion next summer.",
        "We are planning a trip to Lisbon in spring.",
        "I'm planning a surprise party for Leonie.",
    ],
)
def test_a_plan_under_way_is_a_commitment(text: str) -> None:
    assert event_signals(event_to_node(chat("m0", "Evan", text, 0), "n0")).commitment


def test_a_thing_one_sentence_plans_is_named_by_what_it_does_to_it() -> None:
    """No two events do the same thing to the reunion, but the sentence that commits to it
    plans it: the title says so, where the fallback said nothing a person would do."""
    lines = [
        ("Evan", "Thanks, Sam! Yeah, we're planning a big family reunion next summer.", 0),
        ("Sam", "A family reunion sounds lovely! Who is coming?", 0),
        ("Evan", "All the cousins. The family reunion is going to be huge.", 4),
        ("Sam", "Send me a photo of the family reunion!", 9),
    ]
    assert title_of(lines) == "Plan the family reunion"


@pytest.mark.parametrize(
    ("text", "verb", "todo"),
    [
        ("I hope to build my own family and give kids a loving home.", "build", "build a family"),
        ("I want to make my own awesome strategy game.", "make", "make an awesome strategy game"),
    ],
)
def test_a_hope_of_ones_own_is_a_stated_goal(text: str, verb: str, todo: str) -> None:
    """ "I hope to" is a commitment cue (``goals._COMMIT``), and the action it takes is the
    writer's goal, said as a to-do: "build my own family" is a family to have, not "the own
    family"."""
    (analysis,) = PhraseParser().analyse([("", text, frozenset())])
    (action,) = [a for a in analysis.actions if a.verb == verb]
    assert (action.text, action.goal) == (todo, 1.0)


class CountingNamer(Namer):
    """A namer that counts the intent titles it is asked for."""

    titled = 0

    def title_intent(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        self.titled += 1
        return super().title_intent(*args, **kwargs)


async def test_a_topic_found_no_goal_is_not_titled_again_until_a_new_cue() -> None:
    """Each turn of the film talk reaches the same cluster: its title was chosen again at
    every turn, to be refused again; what could make it a goal is a new cue."""
    said = "The film number {} from your recommendations was gripping."
    talk = [("Joanna", said.format(n), 21) for n in range(6)]
    events = [chat(f"m{i}", *line) for i, line in enumerate(twice(CHATTER) + talk)]
    themes = [["Movies", "Films"], ["Movies"]]
    script = {e.id: Step(themes[i % 2]) for i, e in enumerate(events)}
    config = EngineConfig()
    config.topics.split_min_members = 1000
    namer = CountingNamer(HashingEmbedder(dim=256))
    engine = FoldEngine(HashingEmbedder(dim=256), ScriptedPlanner(script), config, namer=namer)
    memory = engine.new_memory("nate")
    for raw in events[:-5]:
        await engine.fold(memory, raw)
    asked = namer.titled
    assert asked > 0
    for raw in events[-5:]:  # no cue: the same cues, refused before
        await engine.fold(memory, raw)
    assert namer.titled == asked
    assert list(memory.graph.nodes(NodeKind.INTENT)) == []


def test_a_speakers_own_goal_names_the_intent_when_no_one_is_the_user() -> None:
    """A chat turn that says only who spoke: each speaker is a person of this memory, and
    "I hope to build my own family" their goal. Before, every "I ..." was another person's
    doing, left out, and the title followed up on the interviews she had already passed."""
    lines = [
        ("Caroline", "I passed the adoption agency interviews last Friday! This is a big "
         "move towards my goal of having a family.", 0),
        ("Melanie", "Congrats! The adoption agency interviews sound intense.", 0),
        ("Caroline", "I hope to build my own family and give kids a loving home.", 1),
        ("Melanie", "Giving a home to kids is such a loving way to build a family.", 1),
    ]  # fmt: skip
    assert title_of(lines) == "Build a family"
