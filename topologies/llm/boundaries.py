"""Concept boundaries from the rules: which concept an event is evidence of is the heuristic
planner's call; the model's plan keeps its names, facts, intents and links.

A model sees one event and a short context: it cannot see the pool of unassigned events a
theme forms from, and small models open a concept for nearly every event (Qwen2.5-Coder 0.5B
on the dev scenarios: 24 concepts per scenario against 8.5 gold, grounded F1 0.15 against the
heuristic's 0.78; ``benchmarks/results/llm_local_qwen05.md``). With
``LLMConfig.concept_boundaries == "rules"`` the plan's concept membership is the heuristic
plan's (join a concept, open one with earlier unassigned events, or none yet), and the
model's choice is mapped onto it:

- the model's new concept becomes the heuristic's concept for the event: the model's label
  names a concept the heuristic opens (it passed the naming checks already), its other ops
  (intent triggers, links) point at the heuristic's concept; when the heuristic gives the
  event no concept yet, the model's new concept is dropped with the ops that name it;
- the model's evidence edges from events to concepts, concepts' DERIVED_FROM to events and
  merges of concepts give way to the heuristic's;
- the heuristic's update of a joined concept (member count, keywords, a relabel as it grows)
  is kept; a rename the model proposed for the same concept wins over the heuristic's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from schemas.graph import EdgeKind, NodeKind
from schemas.plans import AddEdge, AddNode, MergeNodes, PlanOp, UpdateNode, UpdatePlan

KindOf = Callable[[str], NodeKind | None]

_EVIDENCE = (EdgeKind.GROUNDS, EdgeKind.REINFORCES)
RULE_CONCEPT_REF = "hc"  # the heuristic's new concept in the merged plan: hc1


@dataclass(frozen=True)
class Bounded:
    """The model's plan with the rules' concept boundaries; ``overridden``: the model chose
    another concept for the event (or another number of them) than the rules."""

    plan: UpdatePlan
    overridden: bool


def concept_targets(plan: UpdatePlan, event_id: str, kind_of: KindOf) -> set[str]:
    """The concepts (existing ids or the plan's new refs) the plan makes the event evidence of."""
    new = _new_concepts(plan)
    return {
        op.dst
        for op in plan.ops
        if isinstance(op, AddEdge)
        and op.src == event_id
        and op.kind in _EVIDENCE
        and (op.dst in new or kind_of(op.dst) == NodeKind.CONCEPT)
    }


def rule_boundaries(
    model: UpdatePlan, heuristic: UpdatePlan, event_id: str, kind_of: KindOf
) -> Bounded:
    """The model's plan with the heuristic plan's concept membership (module docstring)."""
    model_new = _new_concepts(model)
    rule_new = _new_concepts(heuristic)
    model_targets = concept_targets(model, event_id, kind_of)
    rule_targets = concept_targets(heuristic, event_id, kind_of)
    rule_ref = rule_concept_refs(heuristic)
    target = _single(rule_targets)
    target = rule_ref.get(target, target) if target is not None else None

    def concept_node(node: str) -> bool:
        return node in model_new or kind_of(node) == NodeKind.CONCEPT

    label = next((model_new[ref].title for ref in sorted(model_targets) if ref in model_new), None)
    renames = {op.id: op for op in model.ops if isinstance(op, UpdateNode)}
    kept: list[PlanOp] = []
    for op in model.ops:
        if isinstance(op, AddNode) and op.ref in model_new:
            continue  # the rules' concept (or none) stands for it
        if isinstance(op, MergeNodes) and any(concept_node(n) for n in (op.keep, *op.absorb)):
            continue
        if isinstance(op, AddEdge):
            if _membership(op, kind_of, concept_node):
                continue
            mapped = _mapped_edge(op, model_new, target)
            if mapped is not None:
                kept.append(mapped)
            continue
        if isinstance(op, UpdateNode) and op.id in model_new:
            continue
        kept.append(op)
    for op in heuristic.ops:
        rule_op = _rule_concept_op(op, rule_ref, kind_of, label, renames)
        if rule_op is None:
            continue
        if isinstance(rule_op, UpdateNode) and rule_op.id in renames:
            kept = [_with_attrs(o, rule_op) if o is renames[rule_op.id] else o for o in kept]
            continue
        kept.append(rule_op)
    kept = _unique_edges(kept)
    overridden = _mapped_targets(model_targets, model_new) != _mapped_targets(
        rule_targets, rule_new
    )
    plan = model.model_copy(update={"ops": [*_nodes_first(kept)]})
    return Bounded(plan, overridden)


def rule_concept_refs(heuristic: UpdatePlan) -> dict[str, str]:
    """The heuristic plan's new concepts (its refs) and their refs in the merged plan."""
    return {ref: f"{RULE_CONCEPT_REF}{i + 1}" for i, ref in enumerate(_new_concepts(heuristic))}


def rule_labels(heuristic: UpdatePlan) -> dict[str, str]:
    """The heuristic's own label of each concept it opens, by its ref in the merged plan."""
    new = _new_concepts(heuristic)
    return {merged: new[ref].title for ref, merged in rule_concept_refs(heuristic).items()}


def _new_concepts(plan: UpdatePlan) -> dict[str, AddNode]:
    return {
        op.ref: op for op in plan.ops if isinstance(op, AddNode) and op.kind == NodeKind.CONCEPT
    }


def _single(targets: set[str]) -> str | None:
    return sorted(targets)[0] if targets else None


def _mapped_targets(targets: set[str], new: dict[str, AddNode]) -> tuple[int, frozenset[str]]:
    """What a choice of concepts amounts to: how many new ones, and which existing ones."""
    return sum(1 for t in targets if t in new), frozenset(t for t in targets if t not in new)


def _membership(op: AddEdge, kind_of: KindOf, concept_node: Callable[[str], bool]) -> bool:
    """An edge that says which events a concept holds (the rules' part)."""
    if op.kind in _EVIDENCE:
        return concept_node(op.dst) and not concept_node(op.src)
    if op.kind == EdgeKind.DERIVED_FROM:
        return concept_node(op.src) and kind_of(op.dst) == NodeKind.EVENT
    return False


def _mapped_edge(op: AddEdge, model_new: dict[str, AddNode], target: str | None) -> AddEdge | None:
    """The model's edge with its new concept replaced by the rules' concept (None: it named
    the new concept and the rules give the event none, or it became a loop)."""
    src, dst = op.src, op.dst
    if src in model_new:
        src = target or ""
    if dst in model_new:
        dst = target or ""
    if not src or not dst or src == dst:
        return None
    if (src, dst) == (op.src, op.dst):
        return op
    return op.model_copy(update={"src": src, "dst": dst})


def _rule_concept_op(
    op: PlanOp,
    rule_ref: dict[str, str],
    kind_of: KindOf,
    label: str | None,
    renames: dict[str, UpdateNode],
) -> PlanOp | None:
    """One op of the heuristic plan that the merged plan takes: its new concept (named by the
    model's label when there is one), edges touching a concept whose other end exists, and
    its update of a joined concept."""
    if isinstance(op, AddNode):
        if op.ref not in rule_ref:
            return None  # TIME and the like: the rules' structure step adds those
        update: dict[str, object] = {"ref": rule_ref[op.ref]}
        if label:
            update["title"] = label
        return op.model_copy(update=update)
    if isinstance(op, AddEdge):
        src, dst = rule_ref.get(op.src, op.src), rule_ref.get(op.dst, op.dst)
        ends = (src, dst)
        touches = any(e in rule_ref.values() or kind_of(e) == NodeKind.CONCEPT for e in ends)
        exists = all(e in rule_ref.values() or kind_of(e) is not None for e in ends)
        if not touches or not exists:
            return None
        return op.model_copy(update={"src": src, "dst": dst})
    if isinstance(op, UpdateNode) and kind_of(op.id) == NodeKind.CONCEPT:
        if op.id in renames and renames[op.id].title is not None:
            return op.model_copy(update={"title": None})
        return op
    return None


def _with_attrs(model_op: PlanOp, rule_op: UpdateNode) -> PlanOp:
    """The model's update of a concept plus the rules' bookkeeping (members, keywords), and
    the rules' relabel when the model proposed no title."""
    assert isinstance(model_op, UpdateNode)
    update: dict[str, object] = {"attrs": {**rule_op.attrs, **model_op.attrs}}
    if model_op.title is None and rule_op.title is not None:
        update["title"] = rule_op.title
    return model_op.model_copy(update=update)


def _unique_edges(ops: list[PlanOp]) -> list[PlanOp]:
    seen: set[tuple[str, str, EdgeKind]] = set()
    out: list[PlanOp] = []
    for op in ops:
        if isinstance(op, AddEdge):
            key = (op.src, op.dst, op.kind)
            if key in seen:
                continue
            seen.add(key)
        out.append(op)
    return out


def _nodes_first(ops: list[PlanOp]) -> list[PlanOp]:
    """New nodes before the ops that name them (the executor resolves refs in order)."""
    return [op for op in ops if isinstance(op, AddNode)] + [
        op for op in ops if not isinstance(op, AddNode)
    ]
