"""Which concept merges would be right: centroid cosines against the gold themes.

    .venv/bin/python -m benchmarks.boundary_probe [--embedder minilm|hashing] [--floor 0.25]

Folds the six dev scenarios and the sample stream as ``bench_structural`` does (heuristic
planner, default EngineConfig) and asks two questions a merge rule for splinter concepts has
to answer (issue 11, item 3; findings in ``docs/boundaries.md``):

- **Centroid bands**: for every pair of live concepts whose topic centroids are at cosine
  ``floor`` or more, whether the two hold the same gold theme (the theme most of each one's
  events belong to), counted per band of 0.05. A lower merge threshold is right only in
  bands where same-theme pairs dominate.
- **Consistent nearest**: a small concept (at most ``--small`` events) whose every member's
  nearest other concept (member topic vector against the other centroids) is one and the
  same, at cosine ``floor`` or more: the merge that rule would make, and whether the two
  concepts hold the same gold theme.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchmarks.bench_locomo import make_embedder
from benchmarks.bench_structural import (
    Folded,
    cogeval_gold,
    concept_events,
    fold,
    fold_stream,
    live_concepts,
    load_sample,
)
from benchmarks.common import DEFAULT_DATA_DIR, quiet_logs
from topologies import topics
from topologies.config import TopicConfig
from topologies.memory import TOPIC, event_node_id
from topologies.vector_index import Vector

BAND = 0.05


@dataclass(frozen=True)
class Concept:
    """A live concept as the probe reads it: its centroid, events and majority gold theme."""

    id: str
    title: str
    centroid: Vector
    events: frozenset[str]
    theme: str


def band_counts(pairs: Iterable[tuple[float, bool]], floor: float) -> dict[str, tuple[int, int]]:
    """(same theme, different themes) per band of 0.05 from ``floor`` up, lowest band first."""
    counts: dict[int, list[int]] = {}
    for cosine, same in pairs:
        if cosine < floor:
            continue
        slot = counts.setdefault(math.floor(cosine / BAND + 1e-9), [0, 0])
        slot[0 if same else 1] += 1
    return {f"{key * BAND:.2f}": (same, other) for key, (same, other) in sorted(counts.items())}


def consistent_target(nearest: list[tuple[str, float]], floor: float) -> str | None:
    """The concept every member names as its nearest other one, each at ``floor`` or more;
    None when the members disagree, one falls short, or there are no members."""
    targets = {target for target, _ in nearest}
    if len(targets) != 1 or min(cosine for _, cosine in nearest) < floor:
        return None
    return targets.pop()


def majority(events: Iterable[str], theme_of: Mapping[str, str]) -> str:
    """The gold theme most of the events belong to ('-' for none; a tie goes to the
    alphabetically first theme, so a run does not depend on set order)."""
    counts = Counter(theme_of.get(e, "-") for e in events)
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return ranked[0][0] if ranked else "-"


def concepts(folded: Folded, theme_of: Mapping[str, str]) -> list[Concept]:
    """The live concepts that have a centroid, oldest first."""
    memory = folded.memory
    out = []
    for node in live_concepts(memory.graph):
        centroid = memory.index(TOPIC).get(node.id)
        if centroid is None:
            continue
        events = frozenset(concept_events(memory.graph, node.id))
        out.append(Concept(node.id, node.title, centroid, events, majority(events, theme_of)))
    return out


def nearest_elsewhere(
    folded: Folded, concept: Concept, others: list[Concept], config: TopicConfig
) -> list[tuple[str, float]]:
    """Each member's nearest other concept and its cosine (topic vector vs centroid)."""
    memory = folded.memory
    found = []
    for event in sorted(concept.events):
        vector = topics.event_topic(memory, event_node_id(memory.tenant, event), config)
        if vector is None:
            continue
        rivals = [(float(np.dot(vector, o.centroid)), o.id) for o in others if o.id != concept.id]
        if not rivals:
            continue
        cosine, target = max(rivals)
        found.append((target, cosine))
    return found


def probe(
    name: str, folded: Folded, theme_of: Mapping[str, str], args: argparse.Namespace
) -> list[tuple[float, bool]]:
    """Print the stream's consistent-nearest merges; return its centroid pairs."""
    config = TopicConfig()
    live = concepts(folded, theme_of)
    by_id = {c.id: c for c in live}
    pairs = [
        (float(np.dot(a.centroid, b.centroid)), a.theme == b.theme)
        for i, a in enumerate(live)
        for b in live[i + 1 :]
    ]
    for concept in live:
        if len(concept.events) > args.small:
            continue
        nearest = nearest_elsewhere(folded, concept, live, config)
        target = consistent_target(nearest, args.floor)
        if target is None:
            continue
        into = by_id[target]
        verdict = "right" if into.theme == concept.theme else "wrong"
        cosines = ", ".join(f"{c:.2f}" for _, c in nearest)
        print(
            f"{name}: '{concept.title}' ({concept.theme}) -> '{into.title}' ({into.theme}), "
            f"members at {cosines}: {verdict}"
        )
    return pairs


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedder", choices=("minilm", "hashing"), default="minilm")
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--floor", type=float, default=0.25)
    parser.add_argument("--small", type=int, default=4, help="events of a small concept")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    quiet_logs()
    embedder = make_embedder(args.embedder)
    pairs: list[tuple[float, bool]] = []
    for path in sorted((args.data_dir / "cogeval").glob("*.json")):
        scenario = json.loads(path.read_text())
        gold, _ = cogeval_gold(scenario)
        theme_of = {e: g.label for g in gold for e in g.events}
        pairs += probe(path.stem, asyncio.run(fold(scenario, embedder)), theme_of, args)
    events, themes = load_sample()
    theme_of = {e: t.id for t in themes for e in t.events}
    pairs += probe("sample", asyncio.run(fold_stream("alice", events, embedder)), theme_of, args)
    embedder.save()
    print("centroid cosine band: same theme / different themes")
    for band, (same, other) in band_counts(pairs, args.floor).items():
        print(f"  {band}: {same} / {other}")


if __name__ == "__main__":
    main()
