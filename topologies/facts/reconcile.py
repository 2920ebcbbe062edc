"""Reconciliation (DCPM System 1, step iii): ADD, SUPERSEDE, UPDATE or exact duplicate.

Each extracted item carries its slots (:mod:`topologies.facts.slots`: holder, attributes,
topic, revision cue, mode). Its candidates are the current beliefs (chain heads) among

- the k = 5 nearest FACT items by sentence vector (``memory.indexes["FACT"]``), and
- the most recent beliefs of the same holder, and of the names it mentions (the slot index,
  :mod:`topologies.facts.slot_index`), however differently they are worded.

Rules, first match wins:

1. **Duplicate**: the item's normalised text equals a head's -> nothing is written.
2. **Same one-value key** (``identity:home_city``, ``identity:employer``, ..., or a subject
   the LLM extractor named) of a compatible holder: equal value -> UPDATE; changed value ->
   SUPERSEDE.
3. **Near-identical** (sentence cosine >= ``update_similarity``) -> UPDATE.
4. **Same slot**: the item states a current belief (not a question, hypothetical or past
   habit) of a known holder, and a candidate of a compatible holder shares an attribute with
   it (or the item has none but says strongly that something changed): the topic similarity
   (topic phrases, best over the candidate's last ``chain_depth`` revisions, plus
   ``shared_name_bonus`` when both name the same rare word) must reach the threshold of the
   item's revision cue (strong / weak / none) -> SUPERSEDE the best such candidate.
5. Otherwise ADD.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Literal, NamedTuple

import numpy as np

from schemas.graph import Node
from topologies.facts.chains import head_of, walk
from topologies.facts.extract import TOPICS, ExtractedItem, normalise
from topologies.facts.slot_index import recent_heads
from topologies.facts.slots import SINGLE_VALUED, Slots, holders_compatible
from topologies.memory import TenantMemory
from topologies.vector_index import Vector

Op = Literal["ADD", "SUPERSEDE", "UPDATE", "DUPLICATE"]
TopicVectors = Callable[[list[str]], list[Vector]]


@dataclass(frozen=True)
class ReconcileConfig:
    k: int = 5
    update_similarity: float = 0.93
    slot_candidates: int = 48  # recent beliefs per holder considered
    chain_depth: int = 3  # revisions of a candidate chain its topic is compared with
    topic_strong_cue: float = 0.30  # same attribute, "switched / instead / moved to ..."
    topic_weak_cue: float = 0.45  # same attribute, "now / these days"
    topic_no_cue: float = 0.55  # same attribute, no cue
    topic_no_attribute: float = 0.50  # the item names no attribute but a strong cue
    single_valued_relief: float = 0.20  # lower thresholds for one-value attributes (residence)
    shared_name_bonus: float = 0.15  # both name the same rare word ("Halcyon", "decaf")
    restatement_similarity: float = 0.75  # no strong cue, no new number: the same belief again
    unique_relief: float = 0.15  # a strong cue and one fitting belief only: lower threshold


@dataclass(frozen=True)
class Decision:
    op: Op
    target: str | None = None  # the head superseded / updated / duplicated
    similarity: float = 0.0
    rule: str = ""


class Candidate(NamedTuple):
    """A current belief the item may revise, with what the rules compare (a named tuple: an
    item is compared with some forty of them, each made for it)."""

    head: Node
    similarity: float  # sentence cosine (0 when found through the slot index only)
    slots: Slots | None
    history: tuple[Node, ...]  # the head and up to chain_depth - 1 older revisions
    history_slots: tuple[Slots | None, ...] = ()  # the slots of each node of ``history``


def _cos(a: Vector | None, b: Vector | None) -> float:
    return float(np.dot(a, b)) if a is not None and b is not None else 0.0


def _older(node: Node) -> str | None:
    return node.supersedes or None


def _slots(node: Node) -> Slots | None:
    return Slots.from_attrs(node.attrs)


def _normalised(node: Node) -> str:
    return normalise(node.text)


def _history_and_slots(
    memory: TenantMemory, head: Node, depth: int
) -> tuple[tuple[Node, ...], tuple[Slots | None, ...]]:
    """The head and up to ``depth`` - 1 older revisions (a first belief has none), and the
    slots of each (read once per version of each node)."""
    memo = memory.node_memo
    if not head.supersedes or depth <= 1:  # most beliefs were never revised
        return memo.get("history", head, _alone)
    history = tuple(walk(memory.graph, head, _older, depth))
    return history, tuple(memo.get("slots", node, _slots) for node in history)


def _alone(head: Node) -> tuple[tuple[Node, ...], tuple[Slots | None, ...]]:
    """The history of a belief never revised: itself and its slots."""
    return (head,), (_slots(head),)


def _history_slots(candidate: Candidate) -> tuple[Slots | None, ...]:
    """The slots of the candidate's revisions (kept on the candidate when it was found)."""
    if len(candidate.history_slots) == len(candidate.history):
        return candidate.history_slots
    return tuple(_slots(node) for node in candidate.history)


def candidates(
    memory: TenantMemory,
    vector: Vector,
    slots: Slots | None,
    config: ReconcileConfig,
    exclude: set[str],
    when: datetime | None = None,
) -> list[Candidate]:
    """Current beliefs near the item: kNN heads first (by cosine), then the holder's recent
    beliefs; a head newer than ``when`` is left out (a late event does not revise the future).
    The heads' vectors are read in one look-up (about 40 candidates an item)."""
    index = memory.indexes["FACT"]
    named = [node_id for node_id, _ in index.search(vector, config.k, exclude=exclude or None)]
    if slots is not None and slots.asserts:
        named += recent_heads(memory, slots, config.slot_candidates)
    heads = _current_heads(memory, named, exclude, when)
    if not heads:
        return []
    rows, _ = index.get_many(list(heads))  # zeros where a head has no vector: cosine 0
    found = []
    for head, row in zip(heads.values(), rows, strict=True):
        history, slots_of = _history_and_slots(memory, head, config.chain_depth)
        found.append(Candidate(head, float(np.dot(row, vector)), slots_of[0], history, slots_of))
    found.sort(key=_ranked)
    return found


def _current_heads(
    memory: TenantMemory, named: list[str], exclude: set[str], when: datetime | None
) -> dict[str, Node]:
    """The current beliefs of the chains holding the ``named`` facts, each once, in order;
    none in ``exclude`` and none newer than ``when``."""
    heads: dict[str, Node] = {}
    get = memory.graph.get
    for node_id in dict.fromkeys(named):  # the kNN and the slot index often name the same
        head = get(node_id)
        if head is not None and head.superseded_by:
            head = head_of(memory, node_id)
        if head is None or head.id in heads or head.id in exclude:
            continue
        if when is None or (head.valid_from or head.ts or when) <= when:
            heads[head.id] = head
    return heads


def _ranked(candidate: Candidate) -> tuple[float, str]:
    """Candidates in the order the rules read them: the closest sentence first."""
    return -candidate.similarity, candidate.head.id


def topic_similarity(
    slots: Slots, topic: str, candidate: Candidate, topics: TopicVectors
) -> tuple[float, bool]:
    """Best topic cosine of the item's topic phrase ``topic`` over the candidate's recent
    revisions, and whether they share a rare word or name with the item. The phrases are
    embedded here, when a candidate gets this far, not for every item."""
    phrases: list[str] = []
    names: set[str] = set()
    for node, node_slots in zip(candidate.history, _history_slots(candidate), strict=True):
        phrases.append(node_slots.topic if node_slots and node_slots.topic else node.text)
        if node_slots:
            names |= node_slots.names
    topic_vec, *vectors = topics([topic, *phrases])
    best = max((_cos(topic_vec, v) for v in vectors), default=0.0)
    return best, bool(slots.names & names)


def _by_cue(config: ReconcileConfig, cue: int) -> float:
    return (config.topic_no_cue, config.topic_weak_cue, config.topic_strong_cue)[cue]


@dataclass(frozen=True)
class SlotMatch:
    margin: float  # topic similarity (+ name bonus) above the rule's threshold
    restated: bool  # the same value said again: reinforce, do not revise


def same_slot(
    item: ExtractedItem,
    slots: Slots,
    topic: str,
    candidate: Candidate,
    topics: TopicVectors,
    config: ReconcileConfig,
) -> SlotMatch | None:
    """How the candidate matches as an earlier value of the item's slot (None: it is not).
    Every rule below needs a revision cue: a statement that says nothing changed revises
    nothing by its slot (most statements; checked first, before the candidate is read)."""
    if not slots.cue:
        return None
    other = candidate.slots
    if other is None or not other.asserts:
        return None
    history = [s for s in _history_slots(candidate) if s]
    if not any(holders_compatible(slots, s) for s in history):
        return None
    attributes: set[str] = set()
    for node_slots in history:
        attributes |= node_slots.attributes
    same_key = (
        item.key is not None
        and item.key == candidate.head.attrs.get("key")
        and item.topic in TOPICS  # a topic family ("stance:fitness"), not a head noun
    )
    shared = slots.attributes & attributes
    # a new number or date with "now" shows a new value (without it: maybe another occurrence)
    new_number = bool(numbers_of(item.text) - numbers_of(candidate.head.text))
    if same_key and slots.cue:  # the extractor read the same attribute, and it changed
        threshold = config.topic_strong_cue - (config.single_valued_relief if slots.cue == 2 else 0)
    elif shared & SINGLE_VALUED and slots.cue == 2:
        threshold = config.topic_strong_cue - config.single_valued_relief
    elif shared and (slots.cue == 2 or (new_number and slots.cue == 1)):
        threshold = _by_cue(config, slots.cue)
    elif not slots.attributes and slots.cue == 2:
        threshold = config.topic_no_attribute
    else:  # the same topic again: an elaboration or another item, not a revision
        return None
    similarity, shares_name = topic_similarity(slots, topic, candidate, topics)
    restated = slots.cue < 2 and similarity >= config.restatement_similarity and not new_number
    bonus = config.shared_name_bonus if shares_name else 0.0
    return SlotMatch(similarity + bonus - threshold, restated)


def restates(
    item: ExtractedItem,
    slots: Slots,
    topics: TopicVectors,
    config: ReconcileConfig,
    candidate: Candidate,
) -> bool:
    """Could the item say the candidate's belief again (the check a model's UPDATE must
    pass)? Nearly the same sentence, the same keyed attribute, or the same topic (closer when
    both set the same attribute of the holder, or name the same rare word)."""
    if candidate.similarity >= config.restatement_similarity:
        return True
    if item.key is not None and candidate.head.attrs.get("key") == item.key:
        return True
    topic, shares_name = topic_similarity(slots, slots.topic or item.text, candidate, topics)
    shared = candidate.slots is not None and bool(slots.attributes & candidate.slots.attributes)
    bonus = config.shared_name_bonus if shares_name else 0.0
    return topic + bonus >= (config.topic_no_cue if shared else config.restatement_similarity)


_NUMBER = re.compile(r"\d+(?:[:.,]\d+)?")


@lru_cache(maxsize=8192)  # a belief's text is compared with every later item of its holder
def numbers_of(text: str) -> frozenset[str]:
    """The numbers a statement gives (times, dates, amounts): a value that changed."""
    return frozenset(_NUMBER.findall(text))


def _one_value(item: ExtractedItem) -> bool:
    """The item's key names an attribute with one value at a time: an identity item
    ("identity:home_city"), or a subject the model named (its prompt asks for the same subject
    for later revisions)."""
    return bool(item.key) and (
        str(item.key).startswith("identity:") or item.attrs.get("extractor") == "llm"
    )


def decide(
    memory: TenantMemory,
    item: ExtractedItem,
    vector: Vector,
    slots: Slots | None,
    topic: str | None,
    topics: TopicVectors,
    found: list[Candidate],
    config: ReconcileConfig,
) -> Decision:
    """The heuristic decision for one item against its candidates; reads memory, never writes."""
    norm = normalise(item.text)
    memo = memory.node_memo
    for c in found:
        if memo.get("normalised", c.head, _normalised) == norm:
            return Decision("DUPLICATE", c.head.id, c.similarity, "exact")
    if item.key and _one_value(item) and slots is not None and slots.asserts:
        for c in found:
            if c.head.attrs.get("key") != item.key:
                continue
            if c.slots is not None and not (c.slots.asserts and holders_compatible(slots, c.slots)):
                continue
            if c.head.attrs.get("value") == item.value:
                return Decision("UPDATE", c.head.id, c.similarity, "same key, same value")
            return Decision("SUPERSEDE", c.head.id, c.similarity, "same key, new value")
    for c in found:
        if c.similarity >= config.update_similarity and c.head.attrs.get("key") in (
            None,
            item.key,
        ):
            same_holder = slots is None or c.slots is None or slots.holder == c.slots.holder
            if same_holder:
                return Decision("UPDATE", c.head.id, c.similarity, "near-identical")
    if slots is not None and slots.asserts and topic is not None:
        matches = [(m, c) for c in found if (m := same_slot(item, slots, topic, c, topics, config))]
        # a change said of the only belief that fits ("cutting down to one cup" after "three
        # espressos a day") refers to it, even when the topics are far apart
        floor = -config.unique_relief if len(matches) == 1 and slots.cue == 2 else 0.0
        best: tuple[float, Candidate, SlotMatch] | None = None
        for match, c in matches:
            if match.margin >= floor and (best is None or match.margin > best[0]):
                best = (match.margin, c, match)
        if best is not None and best[2].restated:
            return Decision("UPDATE", best[1].head.id, best[1].similarity, "same slot, restated")
        if best is not None:
            return Decision("SUPERSEDE", best[1].head.id, best[1].similarity, "same slot")
    return Decision("ADD", None, found[0].similarity if found else 0.0, "novel")
