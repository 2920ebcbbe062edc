"""The Namer: names of concepts and intents from the events behind them.

Entry points (all read the memory, none writes it):

- ``label_concept(memory, member_ids, concept_id=None) -> str``: the label of a concept whose
  members are these EVENT node ids (a new concept, one that grew, one just merged or split);
- ``title_intent(memory, evidence_ids, deadline, supporting=()) -> str``: an intent's to-do
  title from its evidence events, with the "(by 18 Dec)" suffix when there is a deadline;
- ``describe_intent(memory, evidence_ids, supporting, deadline, deadline_source)``: why it
  emerged, in sentences;
- ``label_problem(label, names)`` / ``title_problem(title)``: why a proposed name (an LLM's)
  is not one, None when it is.

Costs are bounded: at most ``MAX_MEMBERS`` events (the most central) are read per naming,
each event is parsed once (the parser's cache), phrase vectors are cached, and callers name
a concept when it forms and at growth milestones (:func:`next_naming`), not per event.
"""

from __future__ import annotations

import math
import re
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from datetime import datetime
from functools import lru_cache, partial
from typing import Any

import numpy as np
import structlog

from schemas.errors import ConfigError
from schemas.graph import EdgeKind, Node, NodeKind
from topologies import topics
from topologies.embedding import Embedder
from topologies.goals import sentences
from topologies.lexicon import DAY_WORDS, DONE_PRONOUNS, LABEL_SKIP
from topologies.memory import TenantMemory
from topologies.naming.labels import (
    COMMON_ZIPF,
    UNTITLED,
    Candidate,
    Embed,
    Matrix,
    label_candidates,
    label_problem,
    rank_labels,
    writes_in_full,
)
from topologies.naming.occasions import agreed_occasion
from topologies.naming.phrases import (
    CARRY_VERBS,
    MAX_PARSE_CHARS,
    RESCHEDULE_VERBS,
    Analysis,
    Phrase,
    PhraseParser,
    name_words,
    shared_parser,
)
from topologies.naming.titles import (
    GOAL_HANDICAP,
    Goal,
    Ranked,
    acted_on,
    as_action,
    by_its_heading,
    by_its_name,
    chat_turn,
    committed_verb,
    dated_heads,
    dated_things,
    day_words,
    derived_action,
    describe,
    entry_thing,
    head_word,
    in_kept_verb,
    mentions_day,
    object_verb,
    rank_actions,
    rank_doings,
    rank_goals,
    spoken_of,
    the_thing_named,
    title_problem,
    two_sentences,
    with_article,
    with_deadline,
    with_occasion,
    without_deadline,
    written_by,
)
from topologies.text import STOPWORDS, label_from_texts, zipf

log = structlog.get_logger(__name__)

MAX_MEMBERS = 8  # events read per naming: the most central ones
MAX_SCAN = 200  # predecessors of a concept read to find its members
SIBLINGS = 6  # nearest other concepts whose labels a new label must differ from
VECTOR_CACHE = 4096
OBJECT_CACHE = 4096  # titles whose object is kept (``Namer.title_object``)
EVIDENCE = (EdgeKind.GROUNDS, EdgeKind.REINFORCES)
GROWTH = 2.0  # a concept is renamed when its member count has doubled
MAX_TARGET_TITLE_WORDS = 12  # an action and its target stay a to-do item
MAX_COVERAGE_EVENTS = 32  # evidence events read to weigh a retitle (the most recent)


@lru_cache(maxsize=4096)
def noun_forms(head: str) -> tuple[str, ...]:
    """The written forms of a noun ("tooth", "teeth"): an event whose text holds none of
    them has no phrase with that head and no such word, so it is not parsed to find out
    (a goal of a long stream has thousands of evidence events)."""
    from lemminflect import getAllInflections

    inflected = getAllInflections(head, upos="NOUN").values()
    return tuple(sorted({head, *(f.lower() for group in inflected for f in group)}))


def writes_any(text: str, forms: Sequence[str]) -> bool:
    """Whether the text holds any of the (lower-case) forms, in any case."""
    lowered = text.lower()
    return any(form in lowered for form in forms)


def _word_pattern(words: Sequence[str]) -> re.Pattern[str]:
    """Any of the words, written as a word of its own, in any case."""
    alternatives = "|".join(re.escape(word) for word in words)
    return re.compile(rf"(?<![\w-])(?:{alternatives})(?![\w-])", re.IGNORECASE)


def _phrase_mates(token: Any) -> list[Any]:
    """The nouns of one phrase with ``token``: its compound parts and the noun it is one of
    ("passport photo"), nouns joined to it by a preposition either way ("photo for the
    passport", "passport with photo"), its conjuncts; and the conjuncts of each of them."""
    mates = [t for t in token.children if t.dep_ in ("compound", "conj")]
    if token.dep_ in ("compound", "conj"):
        mates.append(token.head)
    if token.dep_ == "pobj" and token.head.dep_ == "prep" and token.head.head.pos_ == "NOUN":
        mates.append(token.head.head)
    mates.extend(p for prep in token.children if prep.dep_ == "prep" for p in prep.children)
    mates.extend(c for m in list(mates) for c in m.children if c.dep_ == "conj")
    return [m for m in mates if m.pos_ in ("NOUN", "PROPN") and m.i != token.i]


_NAMES_NOTHING = STOPWORDS | LABEL_SKIP | DAY_WORDS


def _names_a_thing(token: Any) -> bool:
    """A noun that names a thing by itself: not a person ("Maria"), a stopword, a word of
    time or of an update ("today", "week", "update"), nor a word too common to name anything
    ("thing", "time")."""
    low = token.lower_
    return token.ent_type_ != "PERSON" and low not in _NAMES_NOTHING and zipf(low) < COMMON_ZIPF


def _is_address(name: str, texts: Sequence[str]) -> bool:
    """The name is written before a house number somewhere ("Grünberger Str. 41"): a
    place the person lives or meets at, not what a goal is for."""
    pattern = re.compile(re.escape(name) + r"\.?,?\s+\d")
    return any(pattern.search(text) for text in texts)


def _names_day(memory: TenantMemory, deadline: datetime | None, node: Node) -> bool:
    """``mentions_day`` of the event, read once per version of it and deadline
    (``memory.node_memo``): a goal's evidence is read for its deadline's day at every
    titling, and most of it was read at the one before."""
    if deadline is None:
        return False
    what = f"mentions_day:{deadline.isoformat()}"
    return memory.node_memo.get(what, node, partial(mentions_day, deadline))


def next_naming(named_at: int) -> int:
    """The member count at which a concept named at ``named_at`` members is named again:
    2 -> 4 -> 8 -> 16 -> 32 ... (a logarithmic number of namings per concept)."""
    return max(named_at + 2, math.ceil(named_at * GROWTH))


def _beats(goal: Goal, action: Ranked) -> bool:
    """A named target makes the title instead of the best action when it is clearly more
    central, and the action is not already about it ("Refund the extra GST" about "GST")."""
    score, text = action.score, action.text
    if set(goal.text.lower().split()) & set(text.lower().split()) - STOPWORDS:
        return False
    return goal.score - GOAL_HANDICAP > score


def _verb(title: str) -> str:
    """The title's first word, lower-cased: its verb."""
    words = without_deadline(title).split()
    return words[0].lower() if words else ""


def _common(goal: Goal) -> bool:
    return not goal.named


class Namer:
    """Names concepts and intents from their events, and groups of texts (a nightly
    schema's facts). ``embedder`` None: names are ranked by their words alone."""

    def __init__(self, embedder: Embedder | None, parser: PhraseParser | None = None) -> None:
        self.embedder = embedder
        self.parser = parser if parser is not None else shared_parser()
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._objects: dict[str, str] = {}  # title -> ``title_object``: asked at every fold
        self.namings = 0
        self.cpu_seconds = 0.0  # process CPU time spent naming (for cost reports)

    # ----------------------------------------------------------------- vectors
    def embed(self, texts: list[str]) -> Matrix:
        """Vectors of short phrases, cached (labels and actions recur across namings)."""
        if self.embedder is None:
            return np.zeros((len(texts), 1), dtype=np.float32)
        missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if missing:
            for text, vector in zip(missing, self.embedder.embed(missing), strict=True):
                self._vectors[text] = vector
        for text in texts:  # the texts asked for are the newest before any is evicted
            self._vectors.move_to_end(text)
        rows = [self._vectors[t] for t in texts]
        while len(self._vectors) > VECTOR_CACHE:
            self._vectors.popitem(last=False)
        if not texts:
            return np.zeros((0, self.embedder.dim), dtype=np.float32)
        return np.vstack(rows).astype(np.float32)

    def _events(
        self,
        memory: TenantMemory,
        ids: Sequence[str],
        keep: Callable[[Node], bool] | None = None,
    ) -> tuple[list[Node], Matrix]:
        """The EVENT nodes among ``ids`` (resolved, deduplicated) and their vectors; at most
        ``MAX_MEMBERS``: those ``keep`` holds for first, then the closest to their centroid."""
        if self.embedder is None:
            raise ConfigError("naming events needs an embedder")
        graph, index = memory.graph, memory.index(NodeKind.EVENT)
        nodes: dict[str, Node] = {}
        for raw in ids:
            node = graph.get(graph.resolve(raw))
            if node is not None and node.kind == NodeKind.EVENT:
                nodes.setdefault(node.id, node)
        ordered = sorted(nodes.values(), key=lambda n: (n.ts or n.created_at, n.id))
        if not ordered:
            return [], np.zeros((0, self.embedder.dim), dtype=np.float32)
        stored = [index.get(n.id) for n in ordered]
        missing = [n.embed_text for n, v in zip(ordered, stored, strict=True) if v is None]
        fresh = iter(self.embedder.embed(missing)) if missing else iter(())
        vectors = np.vstack([v if v is not None else next(fresh) for v in stored])
        if len(ordered) > MAX_MEMBERS:
            centroid = vectors.mean(axis=0)
            first = np.array([keep is not None and keep(n) for n in ordered], dtype=np.float32)
            order = np.argsort(-(vectors @ centroid) - 2 * first, kind="stable")[:MAX_MEMBERS]
            chosen = sorted(int(i) for i in order)
            ordered, vectors = [ordered[i] for i in chosen], vectors[chosen]
        return ordered, vectors.astype(np.float32)

    # ----------------------------------------------------------------- concepts
    def concept_members(self, memory: TenantMemory, concept_id: str) -> list[str]:
        """EVENT node ids that ground or reinforce the concept, the latest first (a bounded read
        of the newest edges, so a hub concept costs what a small one does)."""
        concept = memory.graph.resolve(concept_id)
        if concept not in memory.graph:
            return []
        return topics.member_events(memory, concept)

    def label_concept(
        self,
        memory: TenantMemory,
        member_ids: Sequence[str],
        concept_id: str | None = None,
        joining: str | None = None,
    ) -> str:
        """The folder name of a concept with these member events (see labels.py);
        ``joining``: an event node id read whatever its centrality (the member whose title
        asked for the naming)."""
        started = time.process_time()
        try:
            return self._label(memory, member_ids, concept_id, joining)
        finally:
            self.namings += 1
            self.cpu_seconds += time.process_time() - started

    def _label(
        self,
        memory: TenantMemory,
        member_ids: Sequence[str],
        concept_id: str | None,
        joining: str | None = None,
    ) -> str:
        keep = (lambda node: node.id == joining) if joining else None
        members, vectors = self._events(memory, member_ids, keep=keep)
        if not members:
            return UNTITLED
        inputs = self._label_inputs(memory, members, vectors, concept_id)
        ranked = rank_labels(*inputs, person=self.is_person)
        if ranked:
            return ranked[0][1]
        return label_from_texts([n.embed_text for n in members], exclude=[memory.tenant])

    def titles_in_full(self, label: str, event: Node) -> bool:
        """Whether the event's title writes a one-word label as a two-word noun phrase
        ("surprise party" for "Surprise"): it may name in full what the folder says by one
        word, so the folder is named again with it. Only a title that writes the word beside
        another is parsed."""
        if not writes_in_full(label, event.title):
            return False
        (analysis,) = self.parser.analyse_nodes([event])
        word = label.strip().casefold()
        return any(
            p.in_title and len(p.key.split()) == 2 and word in p.key.split()
            for p in analysis.phrases
        )

    def label_candidates(
        self, memory: TenantMemory, member_ids: Sequence[str], concept_id: str | None = None
    ) -> list[Candidate]:
        """The candidates :meth:`label_concept` ranks, each with the terms of its score (for
        a bench that asks why one phrase beat another)."""
        members, vectors = self._events(memory, member_ids)
        if not members:
            return []
        inputs = self._label_inputs(memory, members, vectors, concept_id)
        return label_candidates(*inputs).candidates

    def _label_inputs(
        self, memory: TenantMemory, members: list[Node], vectors: Matrix, concept_id: str | None
    ) -> tuple[
        list[Analysis], Matrix, Embed, list[str], Matrix | None, frozenset[str], frozenset[str]
    ]:
        siblings, sibling_vectors = self._siblings(memory, vectors, concept_id)
        return (
            self.parser.analyse_nodes(members),
            vectors,
            self.embed,
            siblings,
            sibling_vectors,
            self.names_of(members),
            self._used_labels(memory, concept_id),
        )

    @staticmethod
    def _used_labels(memory: TenantMemory, concept_id: str | None) -> frozenset[str]:
        """Case-folded labels of the user's other live concepts, however far from this one:
        two folders never carry one name ("Pic" twice in a chat history)."""
        graph = memory.graph
        own = graph.resolve(concept_id) if concept_id else None
        return frozenset(
            node.title.casefold()
            for node in graph.nodes(NodeKind.CONCEPT)
            if node.id != own and not node.superseded_by and node.title
        )

    def _siblings(
        self, memory: TenantMemory, vectors: Matrix, concept_id: str | None
    ) -> tuple[list[str], Matrix | None]:
        """Labels and concept vectors of the nearest other concepts (their index vectors: a
        label must not describe a neighbour better than its own members)."""
        graph, index = memory.graph, memory.index(NodeKind.CONCEPT)
        own = graph.resolve(concept_id) if concept_id else None
        centroid = vectors.mean(axis=0)
        norm = float(np.linalg.norm(centroid))
        if not norm:
            return [], None
        hits = index.search((centroid / norm).astype(np.float32), SIBLINGS + 1)
        labels, rows = [], []
        for node_id, _ in hits:
            node = graph.get(node_id)
            vector = index.get(node_id)
            if node is None or node.id == own or node.superseded_by or not node.title:
                continue
            if vector is None:
                continue
            labels.append(node.title)
            rows.append(vector)
        if not rows:
            return [], None
        return labels[:SIBLINGS], np.vstack(rows[:SIBLINGS]).astype(np.float32)

    def label_fit(
        self, memory: TenantMemory, member_ids: Sequence[str], labels: Sequence[str]
    ) -> list[float]:
        """How well each label describes a concept with these member events: the cosine of
        the label's vector with the members' centroid (0.0 for every label without members)."""
        members, vectors = self._events(memory, member_ids)
        centroid = vectors.mean(axis=0) if members else None
        norm = float(np.linalg.norm(centroid)) if centroid is not None else 0.0
        if centroid is None or not norm or not labels:
            return [0.0] * len(labels)
        rows = self.embed(list(labels))
        lengths = np.linalg.norm(rows, axis=1)
        lengths[lengths == 0] = 1.0
        return [float(x) for x in (rows @ (centroid / norm)) / lengths]

    # ------------------------------------------------------------------ intents
    def title_intent(
        self,
        memory: TenantMemory,
        evidence_ids: Sequence[str],
        deadline: datetime | None,
        supporting: Sequence[str] = (),
    ) -> str:
        """A to-do title from the evidence events' own actions (see titles.py); ``supporting``
        are concept node ids (their labels say what the intent is about)."""
        started = time.process_time()
        try:
            title = self._title(memory, evidence_ids, supporting, deadline)
        finally:
            self.namings += 1
            self.cpu_seconds += time.process_time() - started
        return title if deadline is None else with_deadline(title, deadline)

    def _title(
        self,
        memory: TenantMemory,
        evidence_ids: Sequence[str],
        supporting: Sequence[str],
        deadline: datetime | None,
    ) -> str:
        labels = self.labels(memory, supporting)
        names_day = partial(_names_day, memory, deadline)
        events, vectors = self._events(memory, evidence_ids, keep=names_day)
        if not events:
            return labels[0] if labels else "Follow up"
        own = [written_by(n) for n in events]
        anchored = [names_day(n) for n in events]
        analyses = self.parser.analyse_nodes(events)
        names = self.names_of(events)
        texts = [f"{n.title}\n{n.text}" for n in events]
        due = dated_things(events, analyses, deadline, self.parser.parse_without_entities)
        chat = [chat_turn(n) for n in events]
        title = self._best_title(analyses, vectors, labels, own, anchored, names, texts, due, chat)
        if not title:
            return labels[0] if labels else "Follow up"
        if deadline is None:
            return title
        dated = [n for n, anchor in zip(events, anchored, strict=True) if anchor]
        return with_occasion(title, agreed_occasion(dated, deadline, self.parser.parse, names))

    def _best_title(
        self,
        analyses: Sequence[Analysis],
        vectors: Matrix,
        labels: Sequence[str],
        own: Sequence[bool | None],
        anchored: Sequence[bool],
        names: frozenset[str],
        texts: Sequence[str] = (),
        dated: Sequence[Phrase] = (),
        chat: Sequence[bool] = (),
    ) -> str:
        """The goal's title, always an action: what it is about, in the evidence's own verb,
        and the named thing the evidence keeps returning to (:meth:`_with_target`);
        ``dated``: what the deadline's day is written against (``dated_things``); ``chat``:
        which events are chat turns that say only who spoke (``titles.chat_turn``)."""
        heads = frozenset(p.head for p in dated)
        ranking = (
            partial(
                rank_actions,
                analyses,
                vectors,
                labels=labels,
                own=own,
                anchored=anchored,
                chat=chat,
            ),
            partial(
                rank_goals,
                analyses,
                vectors,
                labels=labels,
                anchored=anchored,
                dated=heads,
                due=dated,
            ),
            partial(rank_doings, analyses, vectors),
        )
        self._prefetch(ranking)
        goals = ranking[1](self.embed)
        said = frozenset(day_words(analyses, anchored))
        title = self._goal_title(analyses, ranking, goals, names, texts, said)
        return self._with_target(title, goals, names, texts) if title else ""

    def _goal_title(
        self,
        analyses: Sequence[Analysis],
        ranking: Sequence[Callable[[Embed], list[Any]]],
        goals: list[Goal],
        names: frozenset[str],
        texts: Sequence[str] = (),
        said: frozenset[str] = frozenset(),
    ) -> str:
        """In this order: a named target that stands out ("Kessler Logistik demo"); the best
        action when a sentence states a goal ("Get the crown cemented"), unless no event that
        names the deadline's day speaks of its object (``said``: their phrases' words) while
        one names a thing that day is written against: the goal stated is then a step of
        what is due ("we have to cite AccentTTA" beside "full paper Thu 14 May"); else the
        thing the deadline's day is written against, which the other actions are steps to
        ("Prepare for the multi-depot demo" rather than "Run the scenario with simulated
        trucks"), by the name an event or its heading gives it ("SoCML 2026: ... full paper
        Thu 14 May"), unless the best action is done to it, and in the words of an action a
        sentence states or asks that is done to it ("Send the review deck"); else the
        evidence's
        doing when it is more central than the best action ("Follow up on the rent
        reduction"); a common noun phrase of what the evidence is about when it is clearly
        more central than the best action, which is then an aside ("Visa application" beside
        "Swap the invigilation"); the best action, in the verb the evidence keeps doing to its
        object (``in_kept_verb``); a noun phrase of what the evidence is about, unless it only
        names a thing in passing and there is something to bring; "" when none. A noun phrase
        is said with the verb the evidence does to it ("Prepare the Kessler Logistik demo"),
        else with a general one ("Prepare for the Spreeufer 10k"): a title is an action."""
        ranked = ranking[0](self.embed)
        ranked = [a for a in ranked if not two_sentences(a.text)]  # "go for Tue Dec. Risk slide"
        steps = [a for a in ranked if a.text.split()[0].lower() in CARRY_VERBS]
        actions = [a for a in ranked if a not in steps]  # what to bring: a step, no goal
        best = in_kept_verb(analyses, actions[0], texts) if actions else ""
        # a named target that recurs and that the deadline's own event speaks of: "GST" alone
        # is no goal, nor a tool or a place mentioned in passing ("Google Meet", "Kinetic PT")
        targets = [g for g in goals if g.named and g.anchored and g.events > 1 and " " in g.text]
        named = self._first_sound(targets, names)
        if named and (not actions or _beats(named, actions[0])):
            return self._acted(analyses, named, texts)
        # the dated thing by its most particular name: "Kessler demo" before "the demo"
        due = self._first_sound(sorted((g for g in goals if g.dated), key=_common), names)
        if actions and actions[0].goal and not self._serves(actions[0], due, said, analyses, texts):
            return best
        if due is not None and (not actions or actions[0].head not in due.key.split()):
            asked = next((a for a in actions if a.goal and a.head in due.key.split()), None)
            if asked is not None:  # the person's own to-do for what is due: "Send the deck"
                return in_kept_verb(analyses, asked, texts)
            named_due = self._named(due, texts, names)
            if named_due is not None:  # "the Kessler multi-depot demo"
                due = replace(due, text=named_due, named=True)
            return self._acted(analyses, due, texts)  # what the steps are for: "the demo"
        doing = self._first_sound_doing(ranking[2](self.embed), names)
        if doing is not None and (not actions or doing.base > actions[0].base):
            return derived_action(doing.text, occasion=False)  # "Follow up on the rent reduction"
        goal = self._first_sound(goals, names)
        if actions and goal is not None and not goal.named and _beats(goal, actions[0]):
            return self._acted(analyses, goal, texts)  # beside an aside
        if actions:
            return best
        if steps and (goal is None or (goal.named and goal not in targets)):
            return steps[0].text  # rather than a tool or a place named in passing
        return self._acted(analyses, goal, texts) if goal else ""

    @staticmethod
    def _named(due: Goal, texts: Sequence[str], names: frozenset[str]) -> str | None:
        """The dated thing by the name the texts give it most ("Lisbon offsite" beside the
        calendar's "Data Platform offsite"), a common one by its heading when no text writes
        a name before it ("SoCML 2026 full paper"); None when it keeps its text."""
        if not due.named:
            return by_its_name(due.text, texts, names) or by_its_heading(due.text, texts, names)
        thing = the_thing_named(due.text)
        return None if thing == due.text else by_its_name(thing, texts, names, (due.text,))

    @staticmethod
    def _serves(
        action: Ranked,
        due: Goal | None,
        said: frozenset[str],
        analyses: Sequence[Analysis],
        texts: Sequence[str],
    ) -> bool:
        """Whether a goal a sentence states is a step of the thing that is due: no event that
        names the deadline's day speaks of its object (``said``), and the evidence speaks of
        what is due at least as often ("cite AccentTTA" beside the full paper; not "renew the
        passport" beside a flight two events name)."""
        if due is None or action.head in said or not texts:
            return False
        head = due.key.split()[-1] if due.key else due.text.split()[-1].lower()
        return spoken_of(head, analyses, texts) >= spoken_of(action.head, analyses, texts)

    @staticmethod
    def _acted(analyses: Sequence[Analysis], goal: Goal, texts: Sequence[str] = ()) -> str:
        """The noun-phrase goal with the verb the evidence does to it, or that a sentence
        committing to it does ("we're planning a big family reunion": ``committed_verb``),
        else with a verb of what a person does about such a thing (``derived_action``: an
        occasion the deadline's events name is prepared for): a title is an action, never a
        bare noun phrase."""
        head = goal.key.split()[-1] if goal.key else goal.text.split()[-1].lower()
        verb = object_verb(analyses, frozenset({head})) or committed_verb(analyses, texts, head)
        if verb:
            return as_action(verb, goal.text, goal.capital)
        return derived_action(goal.text, goal.anchored, goal.named or goal.capital)

    def _with_target(
        self, title: str, goals: Sequence[Goal], names: frozenset[str], texts: Sequence[str]
    ) -> str:
        """The action set for the named thing the evidence keeps returning to ("Send the
        questions for Willow Creek Care Center"): a name of several words (a single one may
        be a person, a tool, a time zone), used by two evidence events or more and by the
        title of one (what an event is about, not a meeting room in passing), written as a
        name (not a heading's capital: "Flaky test"), that the action
        does not already name, nor an address ("Grünberger Str. 41": a number follows it)."""
        words = {w.lower().strip(",.") for w in title.split()}
        if "for" in words:
            return title  # the action already says what it is for ("Go for the launch")
        for goal in goals[:1]:  # the thing the evidence is most about, or none
            if not goal.proper or goal.events < 2 or not goal.titled or " " not in goal.text:
                continue
            if words & (set(goal.text.lower().split()) - STOPWORDS):
                return title  # the action already names the goal's target
            if self.label_problem(goal.text, names) is not None or _is_address(goal.text, texts):
                continue
            if len(title.split()) + len(goal.text.split()) + 1 > MAX_TARGET_TITLE_WORDS:
                return title
            return f"{title} for {with_article(goal.text)}"
        return title

    def _first_sound_doing(self, doings: Sequence[Ranked], names: frozenset[str]) -> Ranked | None:
        words = {w for n in names for w in n.split()}
        return next(
            (
                d
                for d in doings
                if not words & set(d.text.lower().split()) and self.label_problem(d.text) is None
            ),
            None,
        )

    # --------------------------------------------------------------- text groups
    def label_texts(self, texts: Sequence[str], vectors: Matrix | None = None) -> str:
        """The label of a group of texts that are no events (a nightly schema's facts): the
        same candidates and ranking as a concept's. ``vectors``: the texts' own, if stored."""
        started = time.process_time()
        try:
            analyses, vectors = self._texts(texts, vectors)
            ranked = (
                rank_labels(analyses, vectors, self.embed, person=self.is_person)
                if analyses
                else []
            )
            return ranked[0][1] if ranked else label_from_texts(texts)
        finally:
            self.namings += 1
            self.cpu_seconds += time.process_time() - started

    def title_texts(
        self,
        texts: Sequence[str],
        vectors: Matrix | None = None,
        deadline: datetime | None = None,
    ) -> str:
        """A to-do title for a group of texts (a nightly intention's facts), as for an
        intent's evidence; their label when they state nothing to do."""
        started = time.process_time()
        try:
            analyses, vectors = self._texts(texts, vectors)
            title = self._best_title(analyses, vectors, (), (), (), frozenset(), texts)
        finally:
            self.namings += 1
            self.cpu_seconds += time.process_time() - started
        title = title or self.label_texts(texts, vectors)
        return title if deadline is None else with_deadline(title, deadline)

    def _texts(self, texts: Sequence[str], vectors: Matrix | None) -> tuple[list[Analysis], Matrix]:
        analyses = self.parser.analyse([("", t[:MAX_PARSE_CHARS], frozenset()) for t in texts])
        if vectors is None or len(vectors) != len(texts):
            vectors = (
                self.embedder.embed(list(texts))
                if self.embedder is not None and texts
                else np.zeros((len(texts), 1), dtype=np.float32)
            )
        return analyses, np.asarray(vectors, dtype=np.float32)

    def _prefetch(self, rankings: Sequence[Callable[[Embed], object]]) -> None:
        """Embed the candidates of several rankings in one batch (a batch of ten short
        phrases costs little more than one): a dry run with zero vectors lists them."""
        if self.embedder is None:
            return
        wanted: list[str] = []
        dim = self.embedder.dim

        def record(texts: list[str]) -> Matrix:
            wanted.extend(texts)
            return np.zeros((len(texts), dim), dtype=np.float32)

        for rank in rankings:
            rank(record)
        self.embed(wanted)

    def _first_sound(self, goals: Iterable[Goal], names: frozenset[str]) -> Goal | None:
        """The first goal that is a sound noun phrase (parsed only as far as needed)."""
        return next((g for g in goals if self.label_problem(g.text, names) is None), None)

    @staticmethod
    def labels(memory: TenantMemory, concept_ids: Sequence[str]) -> list[str]:
        graph = memory.graph
        nodes = [graph.get(graph.resolve(c)) for c in concept_ids]
        return [n.title for n in nodes if n is not None and n.title]

    def describe_intent(
        self,
        memory: TenantMemory,
        evidence_ids: Sequence[str],
        supporting: Sequence[str],
        deadline: datetime | None,
        deadline_source: str | None = None,
    ) -> str:
        """Why the intent emerged: its evidence events by title and date, and the deadline."""
        graph = memory.graph
        events = [
            n
            for n in (graph.get(graph.resolve(e)) for e in dict.fromkeys(evidence_ids))
            if n is not None and n.kind == NodeKind.EVENT
        ]
        source = graph.get(deadline_source) if deadline_source else None
        if source is not None and source.kind != NodeKind.EVENT:
            source = None
        return describe(events, self.labels(memory, supporting), deadline, source)

    # ------------------------------------------------------------------- checks
    def is_person(self, name: str) -> bool:
        """Whether the entity recogniser reads a name alone as a person's ("Lukas Brenner",
        not "Flux Tariffs"); each name parsed once (the parser's cache)."""
        return any(t.ent_type_ == "PERSON" for t in self.parser.parse(name.strip()))

    def label_problem(self, label: str, names: frozenset[str] = frozenset()) -> str | None:
        """Why ``label`` is not a folder name (a short noun phrase), None when it is one."""
        return label_problem(label, self.parser.parse(label.strip()), names)

    def _title_doc(self, title: str) -> Any:
        """The parse of a title without its deadline, its first letter in lower case (a title
        is read as the sentence it would be: "get a new passport")."""
        text = without_deadline(title).strip()
        return self.parser.parse_without_entities(text[:1].lower() + text[1:])

    def acts_on(self, head: str, sentence: str) -> bool:
        """Whether the sentence acts on, or reports a problem with, the thing named by
        ``head`` (``titles.acted_on``)."""
        return acted_on(self.parser.parse_without_entities(sentence), head)

    def states_action(self, title: str) -> bool:
        """Whether the title (without its deadline) starts with an action: a verb in the
        imperative ("Repaint the bathroom ceiling"), not a noun phrase ("Treptower park")."""
        doc = self._title_doc(title)
        first = next((t for t in doc if not t.is_punct and not t.is_space), None)
        return first is not None and first.pos_ == "VERB" and first.tag_ in ("VB", "VBP")

    def title_object(self, title: str) -> str:
        """The lemma of the head of what the title's action is done to ("ceiling" in "Repair the
        bathroom ceiling", "forecast" in "Prepare for the Lisbon spend forecast"): the last noun
        of the first run of nouns and modifiers; "" when it has none. Read once per title:
        an open goal's title is asked for its object at each of its reinforcements."""
        head = self._objects.get(title)
        if head is None:
            if len(self._objects) >= OBJECT_CACHE:
                self._objects.clear()
            head = self._objects[title] = self._head_of(title)
        return head

    def _head_of(self, title: str) -> str:
        """``title_object`` of a title, read from its parse."""
        head = ""
        for token in list(self._title_doc(title))[1:]:
            if token.pos_ in ("NOUN", "PROPN"):
                head = token.lemma_.lower()
            elif head and token.pos_ not in ("ADJ", "NUM", "PUNCT") and token.text != "-":
                break
        return head

    def speaking_of(self, memory: TenantMemory, event_ids: Iterable[str], title: str) -> set[str]:
        """The events that speak of the thing the title's action is done to (its object's head
        in a phrase of theirs, or their words); empty when the title has no object."""
        head = self.title_object(title)
        if not head:
            return set()
        nodes = [n for e in event_ids if (n := memory.graph.get(e)) is not None]
        # an event's answer is kept with it (``memory.node_memo``): a goal's events are asked
        # about at every reinforcement, each event is read once per object
        speaks = memory.node_memo.many(f"speaks_of:{head}", nodes, partial(self._speak, head))
        return {node.id for node, said in zip(nodes, speaks, strict=True) if said}

    def _speak(self, head: str, nodes: list[Node]) -> list[bool]:
        """Whether each event speaks of ``head`` (see :meth:`speaking_of`). An event that
        writes the head as a word does, whatever its parse; one that writes none of its forms
        does not; only the others ("teeth" for "tooth", a compound) are parsed, in one batch."""
        word, forms = head_word(head), noun_forms(head)
        spoken = {id(n) for n in nodes if word.search(n.embed_text)}
        unsure = [n for n in nodes if id(n) not in spoken and writes_any(n.embed_text, forms)]
        if unsure:
            analyses = self.parser.analyse_nodes(unsure)
            spoken.update(
                id(node)
                for node, analysis in zip(unsure, analyses, strict=True)
                if spoken_of(head, [analysis], [node.embed_text])
            )
        return [id(node) in spoken for node in nodes]

    def step_of_goal(
        self, title: str, reports: Sequence[str], texts: Sequence[str], subject: str = ""
    ) -> bool:
        """Whether what an event reports done (``goals.done_reports``) is a step of the goal
        the title names: the report names the thing the title's action is done to ("Done!
        Express passport, ready from 24 Nov"), or a thing that the goal's own events
        (``texts``) name in one sentence with it, one of its stated steps ("Biometric photo
        done" beside "Passport photo Thu lunch"). A neighbouring goal's step is not ("Demo went
        well": no event of the review deck speaks of the partner demo). True when the title
        names no object. A report whose thing done is a pronoun ("FYI, what I sent to
        Farida") reports on the ``subject`` of its event (its title: "Fwd: go/no-go deck").
        Words the report shares with those sentences by chance do not count:
        a person's name, a word that names nothing by itself ("thing", "time", "update"), a
        thing the sentence names beside the object but not with it ("call me today about the
        passport": ``_named_with``)."""
        head = self.title_object(title)
        if not head:
            return True
        forms = noun_forms(head)
        goal = _word_pattern(forms)
        if subject and any(self._refers_back(report) for report in reports):
            reports = [*reports, subject]
        if any(goal.search(report) for report in reports):
            return True
        things = {w for report in reports for w in self._nouns(report)} - {head}
        if not things:
            return False
        return not things.isdisjoint(self._named_with(forms, goal, texts))

    def _nouns(self, text: str) -> set[str]:
        """The lower-cased nouns of a short text and their lemmas, no stopword."""
        return {
            form
            for token in self.parser.parse_without_entities(text)
            if token.pos_ in ("NOUN", "PROPN") and token.lower_ not in STOPWORDS
            for form in (token.lower_, token.lemma_.lower())
        }

    def _refers_back(self, report: str) -> bool:
        """Whether what the report says was done is a pronoun ("what I sent", "sent it",
        "that's done"): the thing is the one its event is about, not named in the report."""
        return any(
            token.pos_ == "PRON"
            and token.lower_ in DONE_PRONOUNS
            and (token.dep_ in ("dobj", "nsubjpass") or token.head.tag_ == "VBN")
            for token in self.parser.parse_without_entities(report)
        )

    def _named_with(
        self, forms: Sequence[str], goal: re.Pattern[str], texts: Sequence[str]
    ) -> set[str]:
        """The things the goal's sentences name with its object (lower-cased words and their
        lemmas): a noun of one phrase with it ("passport photo", "photo for the passport",
        "the passport and the visa") and what is named beside that noun ("passport photo and
        form"); no person and no word that names nothing by itself."""
        named: set[str] = set()
        for sentence in (s for text in texts for s in sentences(text) if goal.search(s)):
            for token in self.parser.parse(sentence):
                if token.lower_ in forms or token.lemma_.lower() in forms:
                    named.update(
                        form
                        for near in _phrase_mates(token)
                        if _names_a_thing(near)
                        for form in (near.lower_, near.lemma_.lower())
                    )
        return named - set(forms)

    def better_goal(
        self,
        memory: TenantMemory,
        evidence_ids: Sequence[str],
        deadline: datetime | None,
        old: str,
        new: str,
    ) -> bool:
        """Whether ``new`` names the goal better than ``old`` by what the evidence says, not by
        its wording: its object is what more evidence events speak of, or it is the thing the
        deadline's day is written against (``dated_heads``: what the steps serve) and the old
        one's is not, or the old one is only a step (what to bring: "Bring estimates") and the
        new one is not. A title of the same object is no better (no churn of verbs), nor one
        that only changes a plan's date ("Move the demo": a step of the goal, however much of
        the evidence speaks of the demo)."""
        new_head, old_head = self.title_object(new), self.title_object(old)
        if not new_head or new_head == old_head or _verb(new) in RESCHEDULE_VERBS:
            return False
        if _verb(old) in CARRY_VERBS and _verb(new) not in CARRY_VERBS:
            return True  # what to bring is a step towards the goal, the new one is the goal
        graph = memory.graph
        nodes = [graph.node(e) for e in dict.fromkeys(evidence_ids) if e in graph]
        nodes = [n for n in nodes if n.kind == NodeKind.EVENT]
        nodes.sort(key=lambda n: (n.ts or n.created_at, n.id))
        nodes = nodes[-MAX_COVERAGE_EVENTS:]
        analyses = self.parser.analyse_nodes(nodes)
        dated = dated_heads(nodes, analyses, deadline, self.parser.parse_without_entities)
        if new_head in dated and old_head not in dated:
            return True
        if old_head in dated:
            return False
        covering = [
            a.heads | {p.head for p in a.named} | {x.object_head for x in a.actions}
            for a in analyses
        ]
        return sum(new_head in c for c in covering) > sum(old_head in c for c in covering)

    def held_thing(self, memory: TenantMemory, event_id: str) -> str:
        """The head of what a calendar entry says happens ("offsite" of "Data Platform
        offsite - day 1", ``entry_thing``); "" when it names nothing or is no event."""
        node = memory.graph.get(event_id)
        if node is None or node.kind != NodeKind.EVENT:
            return ""
        (analysis,) = self.parser.analyse_nodes([node])
        thing = entry_thing(node, analysis, self.parser.parse_without_entities)
        return thing.head if thing is not None else ""

    def goal_words(self, title: str) -> frozenset[str]:
        """Lemmas of the nouns of an intent title (without its deadline): what the goal is
        about ("Get a new passport" and "Passport application": {"passport"})."""
        return frozenset(
            token.lemma_.lower()
            for token in self._title_doc(title)
            if token.pos_ in ("NOUN", "PROPN") and token.lower_ not in STOPWORDS
        )

    def title_problem(self, title: str) -> str | None:
        """Why ``title`` is not a to-do item (an action and its object), None when it is."""
        return title_problem(without_deadline(title).strip(), self._title_doc(title))

    @staticmethod
    def names_of(nodes: Sequence[Node]) -> frozenset[str]:
        """Lower-cased words of the people in these events (for :meth:`label_problem`)."""
        return frozenset().union(*(name_words(n.participants, n.tenant) for n in nodes))
