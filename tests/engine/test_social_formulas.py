"""Politeness is no goal (issue 11, item 3): what friends say to part, thank, reassure or
encourage each other ("I have to go! Take care!", "No problem", "I'll keep you posted",
"keep it up, you'll make a difference") states no commitment, no problem and no to-do of
anyone's; months of chat end every talk so, and LoCoMo-10's pending intents read "Take care
(by 8 Nov)", "Make a difference", "Appreciate the support"."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from schemas.events import RawEvent
from topologies.config import EngineConfig
from topologies.engine import event_to_node
from topologies.goals import CUES_ATTR, GoalEvidence, cached_signals, event_signals
from topologies.memory import TenantMemory
from topologies.naming.phrases import PhraseParser

T0 = datetime(2023, 1, 6, 18, 0, tzinfo=UTC)


def chat(event_id: str, text: str, day: int = 0) -> RawEvent:
    return RawEvent(
        id=event_id,
        tenant="sam",
        source="chat",
        ts=T0 + timedelta(days=day),
        title="",
        body=text,
        participants=["Sam", "Evan"],
    )


def cues(text: str) -> tuple[bool, bool]:
    signals = event_signals(event_to_node(chat("e", text), "n"))
    return signals.commitment, signals.problem


@pytest.mark.parametrize(
    "text",
    [
        "Always happy to help. Well, I have to go! Bye!",
        "Thanks, John! I'll be sure to keep you updated. I really appreciate your support.",
        "Cool, Sam. I'll keep you posted. Talk soon!",
        "No problem. Talk to you soon!",
        "Winning must have felt so good. What was it like?",
    ],
)
def test_a_social_formula_is_no_goal_cue(text: str) -> None:
    assert cues(text) == (False, False)


@pytest.mark.parametrize(
    ("text", "commitment", "problem"),
    [
        ("I have to go to the Bürgeramt on Monday", True, False),
        ("We have to go over the deck before the review", True, False),
        ("I'll let you know. I need to book the dance studio", True, False),
        ("Please let me know by Friday", True, False),
        ("The form must be signed by the landlord", True, False),
        ("I need to take some time off in December", True, False),
        ("No problem with the flights, but the passport is a problem", False, True),
    ],
)
def test_a_goal_said_beside_a_formula_keeps_its_cue(
    text: str, commitment: bool, problem: bool
) -> None:
    assert cues(text) == (commitment, problem)


def test_goodbyes_on_three_days_are_no_goal() -> None:
    """Before: "I have to go!", "I'll keep you posted" and "I'll let you know" were
    commitments on three days, a goal score of 1.0, and "Take care" an intent."""
    goodbyes = [
        "Always happy to help. Well, I have to go! Take care!",
        "Thanks! I'll keep you posted. Take care!",
        "Sure, I'll let you know how it goes. Take care, bye!",
    ]
    evidence = GoalEvidence()
    for day, text in enumerate(goodbyes):
        node = event_to_node(chat(f"g{day}", text, day * 3), f"g{day}")
        evidence.add(node, event_signals(node))
    assert evidence.score < EngineConfig().intents.goal_min_score


def actions(text: str) -> list[str]:
    (analysis,) = PhraseParser().analyse([("", text, frozenset({"sam", "evan"}))])
    return [action.text for action in analysis.actions]


@pytest.mark.parametrize(
    "text",
    [
        "Really appreciate it, Evan. Your words help a lot. Take care!",
        "No worries, take care of yourself.",
        "I want to make a difference in my community.",
        "Enjoy the small things, they add up.",
        "Keep up the good work and follow your dreams!",
        "Take the time to relax, you deserve it.",
        "You're going to make a positive impact on those kids.",
        "Try to get a bit of rest tonight.",
        "It's so important to pursue your passions!",
    ],
)
def test_a_social_formula_is_no_action(text: str) -> None:
    assert actions(text) == []


def test_a_real_action_beside_a_formula_stays() -> None:
    assert actions("Take care! I need to take the car to the garage.") == [
        "take the car to the garage"
    ]


def test_thanks_name_no_doing() -> None:
    """Before: "I really appreciate your support" on two days was the doing "Support
    appreciation", and "Follow up on the support appreciation" an intent's title."""
    (analysis,) = PhraseParser().analyse(
        [("", "I really appreciate the support you gave me.", frozenset({"sam"}))]
    )
    assert [a.verb for a in analysis.activities] == []


def test_a_store_written_by_older_rules_reads_its_goodbyes_again_at_load() -> None:
    """An EVENT stored before politeness stopped counting keeps its old cues in its attrs
    ("Well, I have to go! Take care!" as a commitment); loaded again, it is read by today's
    rules, so an upgraded store makes no "Take care" goal of it."""
    node = event_to_node(chat("e", "Well, I have to go! Take care!"), "n")
    old = {"ahead": None, "deadline": False, "commitment": True, "problem": False}
    stored = node.model_copy(update={"attrs": {**node.attrs, CUES_ATTR: old}})
    assert cached_signals(stored).commitment  # what the old store says
    memory = TenantMemory("sam", dim=8)
    memory.load([stored], [], {}, [], {}, {})
    assert not cached_signals(memory.graph.node("n")).commitment
