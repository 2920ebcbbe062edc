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
from topologies.naming.titles import acted_on

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


def promised(promises: list[str]) -> list[tuple[str, str, int]]:
    """The film talk, each of Joanna's turns answered by one of Nate's promises."""
    joanna = [line for line in CHATTER if line[0] == "Joanna"]
    return [
        turn
        for (speaker, text, day), promise in zip(joanna, promises, strict=True)
        for turn in ((speaker, text, day), ("Nate", promise, day))
    ]


async def test_promises_about_the_thing_itself_make_a_goal() -> None:
    """The same talk, the friend's promises now about what he will do with the
    recommendations himself."""
    promises = [
        "I'll watch the movie recommendations tonight.",
        "I'll write down the movie recommendations in my journal.",
        "I'll add the new recommendations to my watch list.",
    ]
    assert await intents_of(twice(promised(promises))) == ["Watch the movie recommendations"]


async def test_a_promise_to_pass_a_thing_on_to_the_friend_is_the_chat_itself() -> None:
    """Sending, writing down or sharing recommendations for the friend he is talking to is
    done in the chat itself, no errand: before, "Send the movie recommendations" was an
    intent (LoCoMo-10: "Send a photo")."""
    promises = [
        "I'll send you my movie recommendations tonight.",
        "I'll write down more movie recommendations for you.",
        "I'll share the new recommendations with you.",
    ]
    assert await intents_of(twice(promised(promises))) == []


async def test_a_goal_said_on_several_days_is_the_action_its_cue_states() -> None:
    """ "Let's plan a hike" carries no cue, and the promises speak of the hike without
    planning it ("We'll definitely have a great time on our hike"): before, "Plan a hike"
    was an intent (LoCoMo-10, conv-49), which hike and when no one said. Promising to plan
    it makes the goal."""
    talk = [
        ("Evan", "Let's plan a hike soon! The trails near the lake are lovely.", 0),
        ("Sam", "We'll definitely have a great time on our hike.", 0),
        ("Evan", "The trails near the lake were muddy last week.", 4),
        ("Sam", "We'll have so much fun on the hike!", 4),
        ("Evan", "Let's plan a hike, the trails are dry now.", 9),
        ("Sam", "We'll have a blast on the hike.", 9),
    ]
    assert await intents_of(twice(talk)) == []
    planned = [
        *talk[:3],
        ("Sam", "I'll plan the hike to the lake this week!", 4),
        talk[4],
        ("Sam", "I'm going to plan the hike tonight.", 9),
    ]
    assert await intents_of(twice(planned)) == ["Plan the hike"]


async def test_worries_on_several_days_make_no_goal_of_a_thing_they_do_not_speak_of() -> None:
    """A problem coming back is a goal of what an event does about it; a thing no event
    acts on ("Follow up on ...") is its goal only when a sentence with a cue writes it:
    before, a late reply and exam worries made "Follow up on the colorful sunset" (LoCoMo-10,
    conv-48)."""
    talk = [
        ("Deborah", "The colorful sunset at the beach was magical.", 0),
        ("Jolene", "So sorry for the late reply, the exams are stressing me out.", 0),
        ("Deborah", "The colorful sunset reminded me of my mom.", 4),
        ("Jolene", "Sorry, I'm worried about the exams.", 4),
        ("Deborah", "The colorful sunset over the sea is my favourite view.", 9),
        ("Jolene", "The exams went badly, I'm worried again.", 9),
    ]
    assert await intents_of(twice(talk)) == []
    broken = ("Jolene", "Sorry, I'm worried. The colorful sunset photo is broken.", 4)
    assert await intents_of(twice([*talk[:3], broken, *talk[4:]])) == [
        "Follow up on the colorful sunset"
    ]


@pytest.mark.parametrize(
    "text",
    [
        "I'll give it a go and let you know how it turns out.",
        "Let's find a time that works for both of us.",
        "I'm excited to give it a try.",
        "I'm excited to try new things, should be fun.",
    ],
)
def test_a_light_verb_idiom_names_nothing_to_do(text: str) -> None:
    """ "Give it a go", "find a time": the idiom's noun stands for the verb's own event and
    names nothing (``lexicon.LIGHT_NOUNS``), nor does a general noun ("new things",
    ``lexicon.GENERAL_NOUNS``); LoCoMo-10 had "Give a go (by 28 Jul)" and "Find a time"
    pending."""
    (analysis,) = PhraseParser().analyse([("", text, frozenset())])
    assert analysis.actions == ()


def test_a_friends_cheer_is_no_goal_of_either() -> None:
    """ "Reach for your goals" tells the other friend what to do: advice, no errand; the
    title is what Jolene says she will do (before: "Reach for the goals", LoCoMo-10)."""
    lines = [
        ("Deborah", "Reach for your goals and enjoy the journey!", 0),
        ("Jolene", "Thanks! My goals for the robotics project keep me going.", 0),
        ("Deborah", "Reach for your goals, the robotics project will be great.", 3),
        ("Jolene", "I'll build the robot arm for the robotics project this month.", 3),
    ]
    assert title_of(lines) == "Build the robot arm for the robotics project"


def test_a_photo_sent_in_the_chat_is_no_errand() -> None:
    """A photo sent to the friend in the chat is sent there (before: "Send a photo",
    LoCoMo-10); restoring the engine is Dave's own."""
    lines = [
        ("Dave", "Oh, almost forgot to send a photo, look at this beautiful car.", 0),
        ("Calvin", "Wow, that car looks great! Send a photo of the engine too.", 0),
        ("Dave", "I'll send you a photo of the engine tomorrow. I need to restore the "
         "engine of the Mustang.", 3),
        ("Calvin", "The Mustang will look amazing, send me a photo when it is done.", 3),
    ]  # fmt: skip
    assert title_of(lines) == "Restore the engine"


@pytest.mark.parametrize(
    ("text", "verb", "for_reader"),
    [
        ("Reach for your goals and don't forget to enjoy the journey.", "reach", True),
        ("I'll always be here to support you and give you that boost.", "give", True),
        ("I can send you a link.", "send", True),
        ("Oh, almost forgot to send a photo, look at this beautiful car.", "send", True),
        ("I hope to build my own family and give kids a loving home.", "build", False),
        ("I need to send the insurance forms to the agency.", "send", False),
        ("Let's plan a hike soon.", "plan", False),
    ],
)
def test_who_a_clause_is_for(text: str, verb: str, for_reader: bool) -> None:
    """An order or advice to the one addressed, a thing given, sent or shown to them, or a
    thing of no particular kind sent with no one else named, is for the reader; a thing the
    speaker means to do, for themselves or for someone else named, is not."""
    (analysis,) = PhraseParser().analyse([("", text, frozenset())])
    (action,) = [a for a in analysis.actions if a.verb == verb]
    assert action.for_reader is for_reader


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


@pytest.mark.parametrize(
    ("text", "commitment"),
    [
        ("Finally, I don't have to stress about it, so I can just enjoy my movies and "
         "games.", False),
        ("I'm not going to quit the band.", False),
        ("We really don't have to hurry.", False),
        ("I have to go to the gym more often.", True),
        ("Don't forget the details!", True),
    ],
)  # fmt: skip
def test_a_negated_obligation_is_no_commitment(text: str, commitment: bool) -> None:
    """ "I don't have to stress about it" is a relief: before, its "have to" was a
    commitment, and "Follow up on the video games" a goal (LoCoMo-10, conv-42). A request
    put as "don't forget" stays one."""
    signals = event_signals(event_to_node(chat("m0", "Nate", text, 0), "n0"))
    assert signals.commitment is commitment


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


async def test_a_prediction_about_a_crowd_makes_no_goal_of_following_it_up() -> None:
    """A goal the namer follows up on, with no verb of its own, stands on a cue sentence
    that acts on its thing or reports a problem with it: before, "I'm sure everyone in the
    crowd is going to be pumped up" beside worries on several days made "Follow up on the
    large crowd" (LoCoMo-10, conv-50); the crowd a sentence has a problem with is one."""
    talk = [
        ("Calvin", "The large crowd at the show was amazing.", 0),
        ("Dave", "So sorry for the late reply, the tour is stressing me out.", 0),
        ("Calvin", "I'm sure everyone in the large crowd is going to be pumped up.", 4),
        ("Dave", "Sorry, I'm worried about the tour.", 4),
        ("Calvin", "The large crowd sang every song with us.", 9),
        ("Dave", "The tour went badly, I'm worried again.", 9),
    ]
    assert await intents_of(twice(talk)) == []
    problem = ("Calvin", "The large crowd is a problem, it broke the barrier again.", 4)
    assert await intents_of(twice([*talk[:2], problem, *talk[3:]])) == [
        "Follow up on the large crowd"
    ]


@pytest.mark.parametrize(
    ("text", "head", "acted"),
    [
        ("I need to fix the car", "car", True),
        ("The car broke down again", "car", True),
        ("The insurance claim is still not settled", "claim", True),
        ("Sorry, the colorful sunset photo is broken", "sunset", True),
        ("I'm sure everyone in the crowd is going to be pumped up", "crowd", False),
        ("I have such fond memories of that trip, I'll never forget it", "memory", False),
    ],
)
def test_what_a_sentence_acts_on(text: str, head: str, acted: bool) -> None:
    """The thing a "Follow up on" title names is one a sentence acts on or has a problem
    with: not a crowd in a prediction, nor memories one has."""
    assert acted_on(PhraseParser().parse(text), head) is acted
