"""A model's plan reply -> an UpdatePlan: ids mapped back, the usual slips of small models fixed
or their ops dropped, before the executor validates anything.

What is mapped (each noted in :attr:`Converted.fixes`):

- short ids (``C3``, ``P2``, ``E``; any case, stray quotes) -> node ids; refs ``n1``.. -> plan
  refs. A ref used for two new nodes names the nearest definition before the op (the second
  node gets a fresh ref); a ref used before its ADD_NODE names the next definition; new nodes
  are moved before the ops that use them;
- MERGE_NODES with ``keep`` as a list: its first id is kept, the rest absorbed;
- an edge written backwards (``C3 REINFORCES E``) is turned round when only the reverse pair
  is allowed; REINFORCES or GROUNDS into an EVENT becomes RELATED_TO;
- a new CONCEPT or FACT without an edge from the event gets ``E GROUNDS n``;
- identical ops are kept once (runaway replies repeat themselves).

What is dropped as a slip (each noted in :attr:`Converted.dropped`, with the reason): ops
naming a short id that was not shown (among them the example's ``C99``), unknown ops and
kinds, an edge no kind rule allows, a TIME without a date or without DEADLINE_FOR, a FACT that
is a placeholder or not a statement of the event, an INTENT without TRIGGERS, and ops beyond
``max_ops``. The caller validates what is left and drops what the validator refuses
(:func:`drop_op`); only a reply with no usable op is a failed reply.

What refuses the whole reply (:attr:`Converted.refused`): an op that tries what no plan of one
event may do (``topologies/plan_bounds.py``): REMOVE_NODE, a change of a goal's status or
title, an id that is no short id of the prompt (a node id the model was never shown). A model
that writes those is likely obeying text in the event, so none of its ops is trusted; the
caller does the same with the validator's ``plan bound`` refusals.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from functools import cache
from typing import Any

from pydantic import TypeAdapter, ValidationError

from schemas.errors import PlanRejectedError
from schemas.graph import EDGE_RULES, EdgeKind, NodeKind
from schemas.plans import AddEdge, AddNode, MergeNodes, PlanOp, RemoveNode, UpdateNode, UpdatePlan
from topologies.llm.prompts.plan_update import (
    EVENT_ID,
    EXAMPLE_ID,
    MAX_FACTS,
    NEW_KINDS,
    NEW_REF,
    PLACEHOLDER_CLOSE,
    PLACEHOLDER_OPEN,
    IdMap,
)
from topologies.text import is_content_word, tokens

_REF = re.compile(rf"^{NEW_REF}\d{{1,3}}$", re.IGNORECASE)
_SHORT = re.compile(r"^(?:E|[A-Za-z]{1,2}\d{1,3})$")
BOUND = "plan bound:"
_MAX_TITLE = 200
_MAX_TEXT = 1000
_MAX_REASONING = 300


def is_placeholder(text: str) -> bool:
    """A phrase copied from the prompt's example or op list ("<noun phrase ...>")."""
    stripped = text.strip()
    return stripped.startswith(PLACEHOLDER_OPEN) and stripped.endswith(PLACEHOLDER_CLOSE)


def _words(text: str) -> frozenset[str]:
    return frozenset(w.lower() for w in tokens(text))


def stated_in(statement: str, event_words: frozenset[str], share: float = 0.5) -> bool:
    """Does the event say this? At least ``share`` of the statement's content words occur in
    the event (a fact copied from a past event or made up does not)."""
    if not event_words:
        return True
    content = {w.lower() for w in tokens(statement) if is_content_word(w)}
    if not content:
        return False
    return len(content & event_words) >= share * len(content)


@dataclass
class Converted:
    plan: UpdatePlan
    notes: str  # the model's notes ("" when missing or a placeholder)
    fixes: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # bound breaches: the reply is not used
    ops_in_reply: int = 0  # what the reply listed (concept, facts, ops), before any was dropped

    @property
    def empty_reply(self) -> bool:
        """The model itself answered no ops (not: all its ops were dropped)."""
        return self.ops_in_reply == 0


@dataclass
class _Node:
    ref: str
    kind: NodeKind
    position: int


@dataclass
class _State:
    ids: IdMap
    event_node_id: str
    tz: tzinfo | None
    event_words: frozenset[str]
    fixes: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    nodes: list[_Node] = field(default_factory=list)  # new nodes in reply order
    names: dict[int, str] = field(default_factory=dict)  # position -> the ref the model wrote
    labels: list[str] = field(default_factory=list)  # position -> "concept", "fact 0", "op 2"

    def label(self, position: int) -> str:
        return self.labels[position] if position < len(self.labels) else f"op {position}"

    def fix(self, position: int, what: str) -> None:
        self.fixes.append(f"{self.label(position)}: {what}")

    def drop(self, position: int, reason: str) -> None:
        self.dropped.append(f"{self.label(position)}: {reason}")

    def refuse(self, position: int, reason: str) -> None:
        self.refused.append(f"{self.label(position)}: {BOUND} {reason}")

    def unknown(self, position: int, value: Any) -> None:
        """An id that is not one of the request: a slip when it looks like a short id (the
        example's C99, a tier letter of an old prompt), a bound breach otherwise."""
        text = _text(value)
        if text.upper() == EXAMPLE_ID:
            self.drop(position, f"{text!r} is the example's id, not an id of this request")
        elif _SHORT.match(text):
            self.drop(position, f"{text!r} is not an id of this request (use E, the listed "
                      "ids or your n.. refs)")  # fmt: skip
        else:
            self.refuse(position, f"{text[:60]!r} is not an id the plan was shown")


def _text(value: Any) -> str:
    if isinstance(value, list):
        value = " ".join(str(v) for v in value)
    return "" if value is None else str(value).strip()


def _upper(value: Any) -> str:
    return _text(value).upper().replace(" ", "_").replace("-", "_")


def convert(
    data: dict[str, Any],
    ids: IdMap,
    planner: str,
    max_ops: int,
    tz: tzinfo | None = None,
    event_text: str = "",
    close: list[str] | None = None,
) -> Converted:
    """The reply as an UpdatePlan (maybe with no ops); PlanRejectedError when the reply is not
    a plan at all (no ``ops`` list). ``event_text``: what a new FACT must be a statement of;
    ``close``: the listed concepts close enough to be the event's concept (None: any)."""
    raw_ops = data.get("ops", [] if ("concept" in data or "facts" in data) else None)
    if not isinstance(raw_ops, list):
        raise PlanRejectedError(
            'the reply must be one JSON object {"notes": "...", "concept": "...", '
            '"facts": [...], "ops": [...]}'
        )
    notes = _text(data.get("notes"))
    notes = "" if is_placeholder(notes) else notes[:500]
    state = _State(ids, ids.short_to_node[EVENT_ID], tz, _words(event_text))
    listed = [op for op in raw_ops if isinstance(op, dict)]
    if len(listed) < len(raw_ops):
        state.fixes.append(f"{len(raw_ops) - len(listed)} op(s) that were not objects skipped")
    if len(listed) > max_ops:
        state.dropped.append(f"ops after the first {max_ops} dropped ({len(listed)} listed)")
        listed = listed[:max_ops]
    answers = _answers(state, data.get("concept"), data.get("facts"), close)
    state.labels = [label for label, _ in answers] + [f"op {i}" for i in range(len(listed))]
    listed = [op for _, op in answers] + listed
    _define_nodes(state, listed)
    converted: list[tuple[int, dict[str, Any]]] = []
    for position, raw in enumerate(listed):
        op = _convert_op(state, position, raw)
        if op is not None:
            converted.append((position, op))
    ops = _order_and_ground(state, converted, notes)
    plan = UpdatePlan(ops=ops, planner=planner, notes=notes)
    said = len(raw_ops) + _answered(data.get("concept"), data.get("facts"))
    return Converted(plan, notes, state.fixes, state.dropped, state.refused, said)


def _answers(
    state: _State, concept: Any, facts: Any, close: list[str] | None
) -> list[tuple[str, dict[str, Any]]]:
    """The reply's concept and facts as the ops they stand for: ``E REINFORCES C3`` or a new
    CONCEPT (the event grounds it), and a new FACT per statement. A listed concept that is not
    close to the event is not its concept (a small model picks the only one listed)."""
    out: list[tuple[str, dict[str, Any]]] = []
    theme = _text(concept)
    if theme and theme.lower() not in ("null", "none") and not is_placeholder(theme):
        named = state.ids.lookup(theme)
        short = named or _same_title(state.ids, theme)
        if short is not None and short != theme.strip():
            state.fixes.append(f"concept {theme[:40]!r} is the listed {short}: reinforced")
        if named is not None and close is not None and named not in close:
            sim = state.ids.sims.get(named)
            state.dropped.append(
                f"concept: {named} is not close to the event"
                + (f" (sim {sim:.2f})" if sim is not None else "")
                + ": not its theme"
            )
        elif short is not None or _SHORT.match(theme):
            out.append(("concept", {"op": "ADD_EDGE", "src": EVENT_ID, "kind": "REINFORCES",
                                    "dst": short or theme}))  # fmt: skip
        else:
            out.append(("concept", {"op": "ADD_NODE", "kind": "CONCEPT", "title": theme}))
    statements = facts if isinstance(facts, list) else [facts] if facts else []
    for i, statement in enumerate(statements[:MAX_FACTS]):
        text = _text(statement)
        if text:
            out.append((f"fact {i}", {"op": "ADD_NODE", "kind": "FACT", "title": text}))
    return out


def _answered(concept: Any, facts: Any) -> int:
    """How many answers the reply gave besides its ops (a concept, statements)."""
    theme = _text(concept)
    given = int(bool(theme) and theme.lower() not in ("null", "none"))
    statements = facts if isinstance(facts, list) else [facts] if facts else []
    return given + sum(1 for f in statements if _text(f))


def _same_title(ids: IdMap, title: str) -> str | None:
    """The listed concept a new concept's title repeats (a model that did not use its id)."""
    wanted = _words(title)
    for short in ids.shown(NodeKind.CONCEPT):
        if wanted and _words(ids.titles.get(short, "")) == wanted:
            return short
    return None


# ------------------------------------------------------------------------ new nodes
def _define_nodes(state: _State, listed: list[dict[str, Any]]) -> None:
    """Give every ADD_NODE a unique ref (a repeated or odd ref gets the next free one)."""
    adds = [(p, raw) for p, raw in enumerate(listed) if _upper(raw.get("op")) == "ADD_NODE"]
    written_refs = {_text(raw.get("ref")).lower() for _, raw in adds}
    used: set[str] = set()
    counter = 0
    for position, raw in adds:
        kind = _node_kind(raw.get("kind"))
        if kind is None:
            continue
        written = _text(raw.get("ref")).lower()
        ref = written
        if not _REF.match(ref) or ref in used:
            while ref in used or ref in written_refs or not _REF.match(ref):
                counter += 1
                ref = f"{NEW_REF}{counter}"
            if written:
                state.fix(position, f"ref {written!r} was used again; named {ref}")
        used.add(ref)
        state.nodes.append(_Node(ref, kind, position))
        state.names[position] = written or ref


def _node_kind(value: Any) -> NodeKind | None:
    try:
        kind = NodeKind(_upper(value))
    except ValueError:
        return None
    return kind if kind in NEW_KINDS else None


def _resolve(state: _State, value: Any, position: int) -> tuple[str, NodeKind] | None:
    """(plan id, kind) of an id as the model wrote it, or None when it is not one."""
    text = _text(value)
    short = state.ids.lookup(text)
    if short is not None:
        return state.ids.short_to_node[short], state.ids.kinds[short]
    name = text.lower()
    before = [n for n in state.nodes if state.names[n.position] == name and n.position <= position]
    if before:
        return before[-1].ref, before[-1].kind
    after = [n for n in state.nodes if state.names[n.position] == name]
    if after:
        return after[0].ref, after[0].kind
    return None


# ------------------------------------------------------------------------------ ops
def _convert_op(state: _State, position: int, raw: dict[str, Any]) -> dict[str, Any] | None:
    op = _convert(state, position, raw)
    why = _text(raw.get("reasoning") or raw.get("why"))
    if op is not None and why and not is_placeholder(why):
        op[_WHY] = why[:_MAX_REASONING]
    return op


_WHY = "_why"  # the model's own reasoning of an op, kept beside the op until it is parsed


def _key(op: dict[str, Any]) -> str:
    """What makes two ops the same op (not their ref or reasoning)."""
    return json.dumps({k: v for k, v in op.items() if k not in ("ref", _WHY)},
                      sort_keys=True, default=str)  # fmt: skip


def _convert(state: _State, position: int, raw: dict[str, Any]) -> dict[str, Any] | None:
    name = _upper(raw.get("op"))
    if name == "ADD_NODE":
        return _add_node(state, position, raw)
    if name == "ADD_EDGE":
        return _add_edge(state, position, raw)
    if name == "MERGE_NODES":
        return _merge(state, position, raw)
    if name == "UPDATE_NODE":
        return _update(state, position, raw)
    if name == "REMOVE_NODE":
        state.refuse(position, "a plan removes no node it did not create")
        return None
    state.drop(position, f"unknown op {_text(raw.get('op'))!r}")
    return None


def _date(value: Any, tz: tzinfo | None) -> datetime | None:
    text = _text(value)
    if not text:
        return None
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when.replace(tzinfo=tz) if when.tzinfo is None and tz is not None else when


def _add_node(state: _State, position: int, raw: dict[str, Any]) -> dict[str, Any] | None:
    node = next((n for n in state.nodes if n.position == position), None)
    if node is None:
        kind = _upper(raw.get("kind"))
        reason = (
            "EVENT nodes come only from the stream"
            if kind == "EVENT"
            else f"a new node's kind is CONCEPT, FACT, TIME or INTENT, not {kind!r}"
        )
        state.drop(position, reason)
        return None
    title = _text(raw.get("title")) or _text(raw.get("text"))
    if not title:
        state.drop(position, "a new node needs a title")
        return None
    if node.kind == NodeKind.FACT and is_placeholder(title):
        state.drop(position, "the fact's title is a placeholder of the example")
        return None
    if node.kind == NodeKind.FACT and not stated_in(title, state.event_words):
        state.drop(position, "the fact is not a statement of the new event")
        return None
    op: dict[str, Any] = {"op": "ADD_NODE", "ref": node.ref, "kind": node.kind.value,
                          "title": title[:_MAX_TITLE]}  # fmt: skip
    text = _text(raw.get("text"))
    if text and text != title and not is_placeholder(text):
        op["text"] = text[:_MAX_TEXT]
    ts = _date(raw.get("ts"), state.tz)
    deadline = _date(raw.get("deadline"), state.tz)
    if node.kind == NodeKind.TIME:
        if ts is None and deadline is None:
            state.drop(position, "a TIME node needs its date in ts (YYYY-MM-DD)")
            return None
        op["ts"] = ts or deadline
    if deadline is not None and node.kind in (NodeKind.TIME, NodeKind.INTENT):
        op["deadline"] = deadline
    return op


def _allowed(kind: EdgeKind, src: NodeKind, dst: NodeKind) -> bool:
    return (src, dst) in EDGE_RULES[kind]


def _add_edge(state: _State, position: int, raw: dict[str, Any]) -> dict[str, Any] | None:
    try:
        kind = EdgeKind(_upper(raw.get("kind")))
    except ValueError:
        state.drop(position, f"unknown edge kind {_text(raw.get('kind'))!r}")
        return None
    src, dst = _resolve(state, raw.get("src"), position), _resolve(state, raw.get("dst"), position)
    if src is None or dst is None:
        state.unknown(position, raw.get("src") if src is None else raw.get("dst"))
        return None
    if src[0] == dst[0]:
        state.drop(position, "an edge from a node to itself")
        return None
    if not _allowed(kind, src[1], dst[1]):
        if _allowed(kind, dst[1], src[1]):
            state.fix(position, f"{kind.value} turned round")
            src, dst = dst, src
        elif kind in (EdgeKind.REINFORCES, EdgeKind.GROUNDS) and dst[1] == NodeKind.EVENT:
            state.fix(position, f"{kind.value} into an EVENT made RELATED_TO")
            kind = EdgeKind.RELATED_TO
        else:
            state.drop(position, f"{kind.value} cannot go from {src[1].value} to {dst[1].value}")
            return None
    op: dict[str, Any] = {"op": "ADD_EDGE", "src": src[0], "dst": dst[0], "kind": kind.value}
    weight = raw.get("weight")
    if isinstance(weight, int | float) and 0 < weight <= 5:
        op["weight"] = float(weight)
    return op


def _ids_of(value: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    return [] if value is None or value == "" else [value]


def _merge(state: _State, position: int, raw: dict[str, Any]) -> dict[str, Any] | None:
    keep_raw = raw.get("keep")
    absorb_raw = _ids_of(raw.get("absorb"))
    if isinstance(keep_raw, list):
        if not keep_raw:
            state.drop(position, "MERGE_NODES needs one id in keep")
            return None
        state.fix(position, "keep was a list; kept its first id")
        absorb_raw = [*keep_raw[1:], *absorb_raw]
        keep_raw = keep_raw[0]
    keep = _resolve(state, keep_raw, position)
    if keep is None:
        state.unknown(position, keep_raw)
        return None
    absorb: list[str] = []
    for value in absorb_raw:
        other = _resolve(state, value, position)
        if other is None:
            state.unknown(position, value)
            return None
        if other[0] != keep[0] and other[0] not in absorb:
            absorb.append(other[0])
    if not absorb:
        state.drop(position, "MERGE_NODES needs at least one other id in absorb")
        return None
    return {"op": "MERGE_NODES", "keep": keep[0], "absorb": absorb[:16]}


def _update(state: _State, position: int, raw: dict[str, Any]) -> dict[str, Any] | None:
    target = _resolve(state, raw.get("id"), position)
    if target is None:
        state.unknown(position, raw.get("id"))
        return None
    if target[1] == NodeKind.INTENT:
        state.refuse(position, "a plan does not change an intent's status or title")
        return None
    op: dict[str, Any] = {"op": "UPDATE_NODE", "id": target[0]}
    for key, limit in (("title", _MAX_TITLE), ("text", _MAX_TEXT)):
        value = _text(raw.get(key))
        if value and not is_placeholder(value):
            op[key] = value[:limit]
    if len(op) == 2:
        state.drop(position, "UPDATE_NODE changes nothing (a title or text is needed)")
        return None
    return op


# ------------------------------------------------------------------------- assembly
def _order_and_ground(
    state: _State, converted: list[tuple[int, dict[str, Any]]], notes: str
) -> list[PlanOp]:
    """New nodes first, every new concept and fact grounded by the event, duplicates once,
    each op parsed into the pydantic op (one that does not parse is dropped)."""
    event = state.event_node_id
    nodes = [(p, op) for p, op in converted if op["op"] == "ADD_NODE"]
    others = [(p, op) for p, op in converted if op["op"] != "ADD_NODE"]
    _needs_edge(state, nodes, others, NodeKind.TIME, EdgeKind.DEADLINE_FOR, "src",
                "a TIME node needs DEADLINE_FOR to what is due then")  # fmt: skip
    _needs_edge(state, nodes, others, NodeKind.INTENT, EdgeKind.TRIGGERS, "dst",
                "an INTENT needs TRIGGERS from two listed concepts")  # fmt: skip
    nodes, others = _same_nodes_once(state, nodes, others)
    defined = {op["ref"] for _, op in nodes}
    grounded = {
        op["dst"]
        for _, op in others
        if op["op"] == "ADD_EDGE"
        and op["src"] == event
        and op["kind"] in (EdgeKind.GROUNDS.value, EdgeKind.REINFORCES.value)
    }
    extra: list[tuple[int, dict[str, Any]]] = []
    needs_ground = (NodeKind.CONCEPT.value, NodeKind.FACT.value)
    for position, op in nodes:
        if op["kind"] in needs_ground and op["ref"] not in grounded:
            extra.append((position, {"op": "ADD_EDGE", "src": event, "dst": op["ref"],
                                     "kind": EdgeKind.GROUNDS.value}))  # fmt: skip
    reasoning = notes[:_MAX_REASONING]
    out: list[PlanOp] = []
    seen: set[str] = set()
    for position, op in [*nodes, *extra, *others]:
        names = {op.get(k) for k in ("src", "dst", "id", "keep")} | set(op.get("absorb", []))
        if any(isinstance(n, str) and _REF.match(n) and n not in defined for n in names):
            state.drop(position, "names a new node that was dropped")
            continue
        key = _key(op)
        if key in seen:
            state.fix(position, "repeated op kept once")
            continue
        seen.add(key)
        why = op.pop(_WHY, "") or reasoning
        parsed = _parse(state, position, {**op, "reasoning": why, "grounded_in": [event]})
        if parsed is not None:
            out.append(parsed)
    return out


@cache
def _op_adapter() -> TypeAdapter[PlanOp]:
    return TypeAdapter(PlanOp)


def _same_nodes_once(
    state: _State,
    nodes: list[tuple[int, dict[str, Any]]],
    others: list[tuple[int, dict[str, Any]]],
) -> tuple[list[tuple[int, dict[str, Any]]], list[tuple[int, dict[str, Any]]]]:
    """A new node written twice is added once; ops naming the second name the first."""
    first: dict[str, str] = {}
    alias: dict[str, str] = {}
    kept = []
    for position, op in nodes:
        key = _key(op)
        if key in first:
            alias[op["ref"]] = first[key]
            state.fix(position, "repeated node kept once")
            continue
        first[key] = op["ref"]
        kept.append((position, op))
    if not alias:
        return nodes, others

    def renamed(op: dict[str, Any]) -> dict[str, Any]:
        out = {k: alias.get(v, v) if k in _ID_KEYS else v for k, v in op.items()}
        if "absorb" in out:
            out["absorb"] = [alias.get(v, v) for v in out["absorb"]]
        return out

    return kept, [(position, renamed(op)) for position, op in others]


_ID_KEYS = ("src", "dst", "id", "keep")


def _needs_edge(
    state: _State,
    nodes: list[tuple[int, dict[str, Any]]],
    others: list[tuple[int, dict[str, Any]]],
    kind: NodeKind,
    edge: EdgeKind,
    end: str,
    reason: str,
) -> None:
    """Drop each new node of ``kind`` that is not the ``end`` of an ``edge`` op."""
    linked = {op[end] for _, op in others if op["op"] == "ADD_EDGE" and op["kind"] == edge.value}
    for position, op in [n for n in nodes if n[1]["kind"] == kind.value]:
        if op["ref"] not in linked:
            state.drop(position, reason)
            nodes.remove((position, op))


def _parse(state: _State, position: int, op: dict[str, Any]) -> PlanOp | None:
    try:
        return _op_adapter().validate_python(op)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        state.drop(position, f"{where}: {first['msg']}")
        return None


def drop_op(plan: UpdatePlan, index: int) -> UpdatePlan:
    """The plan without op ``index`` and the ops that name the ref it added."""
    op = plan.ops[index]
    gone = {op.ref} if isinstance(op, AddNode) else set()
    kept: list[PlanOp] = []
    for i, other in enumerate(plan.ops):
        if i == index:
            continue
        names: set[str] = set()
        if isinstance(other, AddEdge):
            names = {other.src, other.dst}
        elif isinstance(other, MergeNodes):
            names = {other.keep, *other.absorb}
        elif isinstance(other, UpdateNode):
            names = {other.id}
        if names & gone:
            continue
        kept.append(other)
    return plan.model_copy(update={"ops": kept})


def fact_ops(plan: UpdatePlan) -> tuple[UpdatePlan, list[AddNode]]:
    """Split the plan's new FACT nodes off (with the edges that name them): the facts layer
    writes them, reconciled against the current beliefs."""
    facts = [op for op in plan.ops if isinstance(op, AddNode) and op.kind == NodeKind.FACT]
    refs = {op.ref for op in facts}
    kept = [
        op
        for op in plan.ops
        if not (isinstance(op, AddNode) and op.ref in refs)
        and not (isinstance(op, AddEdge) and ({op.src, op.dst} & refs))
    ]
    return plan.model_copy(update={"ops": kept}), facts


def rule_structure(
    heuristic: UpdatePlan,
    kind_of: Callable[[str], NodeKind | None],
    concepts: bool = False,
    concept_refs: dict[str, str] | None = None,
) -> list[PlanOp]:
    """The heuristic plan's dates and event links, to add to the model's plan: its new TIME
    nodes and the edges among events and those TIME nodes (entity links, DEADLINE_FOR to an
    event). Nothing that names a concept, a fact or an intent, those are the model's to
    decide, unless ``concepts`` (the model gave the event no concept): then the heuristic's
    whole plan. ``concept_refs`` (the rules decide concept membership): the heuristic's new
    concepts by their ref in the model's plan; the dates' DEADLINE_FOR edges to those and to
    existing concepts come too. Refs are renamed ``h1``, ``h2``, ... (the model's are ``n1``)."""
    refs: dict[str, str] = {}
    if concepts:
        for op in heuristic.ops:
            if isinstance(op, AddNode):
                refs[op.ref] = f"h{len(refs) + 1}"
        return [_renamed(op, refs) for op in heuristic.ops]
    kinds: dict[str, NodeKind] = {}
    out: list[PlanOp] = []
    for op in heuristic.ops:
        if isinstance(op, AddNode) and op.kind == NodeKind.TIME:
            refs[op.ref] = f"h{len(refs) + 1}"
            kinds[refs[op.ref]] = op.kind
            out.append(op.model_copy(update={"ref": refs[op.ref]}))
    for merged in (concept_refs or {}).values():
        kinds[merged] = NodeKind.CONCEPT
    structural = (NodeKind.EVENT, NodeKind.TIME)
    for op in heuristic.ops:
        if not isinstance(op, AddEdge):
            continue
        src, dst = refs.get(op.src, op.src), refs.get(op.dst, op.dst)
        if concept_refs is not None:
            src, dst = concept_refs.get(src, src), concept_refs.get(dst, dst)
        src_kind = kinds.get(src) or kind_of(src)
        dst_kind = kinds.get(dst) or kind_of(dst)
        dated = (
            concept_refs is not None
            and op.kind == EdgeKind.DEADLINE_FOR
            and src_kind == NodeKind.TIME
            and dst_kind == NodeKind.CONCEPT
        )
        if (src_kind in structural and dst_kind in structural) or dated:
            grounds = [refs.get(g, g) for g in op.grounded_in]
            if concept_refs is not None:
                grounds = [concept_refs.get(g, g) for g in grounds]
            known = [g for g in grounds if g in kinds or kind_of(g) is not None]
            out.append(op.model_copy(update={"src": src, "dst": dst, "grounded_in": known}))
    linked = {n for op in out if isinstance(op, AddEdge) for n in (op.src, op.dst)}
    return [op for op in out if not isinstance(op, AddNode) or op.ref in linked]


def _renamed(op: PlanOp, refs: dict[str, str]) -> PlanOp:
    """The op with plan refs renamed (``refs``: old -> new)."""
    if isinstance(op, AddNode):
        return op.model_copy(update={"ref": refs.get(op.ref, op.ref)})
    if isinstance(op, AddEdge):
        return op.model_copy(update={"src": refs.get(op.src, op.src),
                                     "dst": refs.get(op.dst, op.dst)})  # fmt: skip
    if isinstance(op, MergeNodes):
        absorb = [refs.get(a, a) for a in op.absorb]
        return op.model_copy(update={"keep": refs.get(op.keep, op.keep), "absorb": absorb})
    if isinstance(op, UpdateNode | RemoveNode):
        return op.model_copy(update={"id": refs.get(op.id, op.id)})
    return op
