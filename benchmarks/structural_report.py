"""Result files of benchmarks.bench_structural: the figures (markdown and JSON), the names a
person reads aloud, and the plot."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import RESULTS, machine, stamp

LOCOMO_MAX_PENDING = 15  # issue 11: pending intents per LoCoMo-10 conversation, at most

# Naming rules are tuned on these dev scenarios; the other three are held out (reported apart).
TUNE_SCENARIOS = ("academic-deadline", "news-outage", "support-escalation")

ORACLE_COLUMNS = (
    "oracle_label_hit@0.6",
    "oracle_label_hit@0.75",
    "oracle_label_f1@0.6",
    "oracle_label_cosine",
    "oracle_label_reachable@0.6",
    "oracle_title_hit@0.5",
    "oracle_title_recall@0.5",
    "oracle_title_cosine",
)

# earlier structural metrics (metrics_structural.py)
METRICS = (
    "concept_f1",
    "concept_f1@0.5",
    "purity",
    "compression",
    "chains",
    "chain_hops",
    "clustering",
    "modularity",
    "edge_entropy",
    "pagerank_gini",
    "proactivity",
    "intent_recall",
    "intent_recall@0.5",
)

# issue 11 "Done when" (heuristic planner, mean of the six dev scenarios): (figure, op, target)
TARGETS: tuple[tuple[str, str, float], ...] = (
    ("label_f1@0.6", ">=", 0.5),
    ("grounded_f1", ">=", 0.7),
    ("concept_ratio", "<=", 1.5),
    ("intent_title_recall@0.5", ">=", 0.5),
    ("intent_evidence_precision", ">=", 0.8),
    ("chains", ">=", 0.8),
)

DEFINITIONS: dict[str, str] = {
    "concepts": "live CONCEPT nodes (merged ones are gone; superseded ones are left out)",
    "label_f1@0.6": "F1 of live concept titles vs gold concept labels: embedder cosine "
    "(MiniLM by default), one-to-one Hungarian (max total cosine), a pair counts at "
    "cosine >= 0.6",
    "label_f1@0.75": "the same at cosine >= 0.75",
    "grounded_f1": "F1 of concept member events vs gold concept events: one-to-one Hungarian "
    "(max total Jaccard), a pair counts at Jaccard >= 0.3; precision = pairs / predicted "
    "concepts, recall = pairs / gold concepts. Members: EVENT nodes among the concept's direct "
    "evidence (topologies.read.evidence.supporters: GROUNDS/REINFORCES in, DERIVED_FROM out); "
    "merged concepts' edges belong to the keeper",
    "concept_ratio": "concepts / gold concepts",
    "intents": "INTENT nodes in the graph, any status (an intent merged into another is gone)",
    "announced": "intent.created messages published while folding: the notifications a "
    "subscriber to the intents topic receives (an intent merged away later still counts)",
    "updates": "intent.updated messages published while folding: an intent's title or "
    "deadline changed while its status did not",
    "pending": "intents with status pending",
    "intent_title_recall@0.5": "share of gold intents whose label is matched one-to-one "
    "(Hungarian, max total cosine) by an intent title at embedder cosine >= 0.5",
    "intent_evidence_precision": "share of intents matching some gold intent by evidence: at "
    "least half of the intent's evidence events, and at least 2, lie in the gold intent's "
    "evidence (the events of its supporting concepts). Intent evidence: "
    "intent_view(...).evidence_event_ids (events grounding or reinforcing the intent or its "
    "supporting concepts, latest 32)",
    "intent_evidence_recall": "share of gold intents matched by evidence by at least one intent",
    "intent_duplicates": "intents matching by evidence only gold intents that an earlier intent "
    "already matches (0 = one intent per goal)",
    "chains": "share of gold chains whose every consecutive hop pair lies within 4 undirected "
    "hops in the graph",
    "sample themes": "an intent belongs to the theme holding more than half of its evidence "
    "events (else 'mixed'); the target is exactly one pending intent per goal theme, or one "
    "action_scheduled, or one resolved and none open for a goal reached within the stream",
    "locomo": "each LoCoMo-10 conversation folded as chat events, one tenant each; target: at "
    "most 15 pending intents per conversation",
}


@dataclass
class Scored:
    figures: dict[str, float] = field(default_factory=dict)
    names: dict[str, Any] = field(default_factory=dict)  # what a person reads


ISSUE_COLUMNS = (
    "events",
    "concepts",
    "gold_concepts",
    "concept_ratio",
    "label_f1@0.6",
    "label_f1@0.75",
    "grounded_f1",
    "grounded_precision",
    "grounded_recall",
    "intents",
    "announced",
    "pending",
    "intent_title_recall@0.5",
    "intent_evidence_precision",
    "intent_evidence_recall",
    "intent_duplicates",
    "chains",
    "naming_ms_per_event",
)
INTEGERS = frozenset(
    {"events", "concepts", "gold_concepts", "gold_intents", "intents", "announced", "pending"}
)
INTEGERS |= {
    "intent_duplicates",
    "turns",
    "goal_themes",
    "goal_themes_with_one_pending",
    "goal_themes_with_one_goal",
}
INTEGERS |= {"pending_off_goal", "intents_mixed", "nodes", "edges", "namings"}


@dataclass
class Run:
    """Everything one benchmark run measured."""

    command: str
    embedder: str
    scenarios: dict[str, Scored] = field(default_factory=dict)
    sample: Scored | None = None
    locomo: dict[str, Any] | None = None
    oracle: dict[str, Scored] = field(default_factory=dict)  # scenario (or "sample") -> names
    seconds: dict[str, dict[str, float]] = field(default_factory=dict)  # phase -> wall, cpu
    date: str = field(default_factory=stamp)
    machine: str = field(default_factory=machine)

    @contextmanager
    def timed(self, phase: str) -> Iterator[None]:
        wall, cpu = time.perf_counter(), time.process_time()
        yield
        self.seconds[phase] = {
            "wall": time.perf_counter() - wall,
            "cpu": time.process_time() - cpu,
        }

    def mean(self, split: str = "all") -> dict[str, float]:
        return mean_of(split_of(self.scenarios, split))

    def oracle_mean(self, split: str = "all") -> dict[str, float]:
        return mean_of(split_of({k: v for k, v in self.oracle.items() if k != "sample"}, split))

    def phase_seconds(self, phases: list[str]) -> tuple[float, float]:
        picked = [self.seconds[p] for p in phases if p in self.seconds]
        return sum(p["wall"] for p in picked), sum(p["cpu"] for p in picked)


def split_of(scenarios: dict[str, Scored], split: str) -> list[Scored]:
    """The scenarios of a split: "tune" (TUNE_SCENARIOS), "held-out" (the others) or "all"."""
    if split == "all":
        return list(scenarios.values())
    tune = split == "tune"
    return [s for name, s in scenarios.items() if (name in TUNE_SCENARIOS) == tune]


def mean_of(scored: list[Scored]) -> dict[str, float]:
    rows = [s.figures for s in scored]
    keys = [k for k in rows[0] if all(k in r for r in rows)] if rows else []
    return {k: float(np.mean([r[k] for r in rows])) for k in keys}


def write_all(run: Run, name: str, json_path: Path | None) -> tuple[Path, Path, Path]:
    """Write <name>.md, <name>_names.md, <name>.png (and the JSON when asked)."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    figures = RESULTS / f"{name}.md"
    figures.write_text(figures_markdown(run))
    names = RESULTS / f"{name}_names.md"
    names.write_text(names_markdown(run))
    plot = RESULTS / f"{name}.png"
    draw(run, plot, TARGETS)
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(as_json(run), indent=2, ensure_ascii=False) + "\n")
    return figures, names, plot


def as_json(run: Run) -> dict[str, Any]:
    return {
        "date": run.date,
        "machine": run.machine,
        "command": run.command,
        "embedder": run.embedder,
        "planner": "heuristic",
        "seconds": run.seconds,
        "targets": [{"figure": f, "op": op, "value": v} for f, op, v in TARGETS],
        "mean": run.mean(),
        "scenarios": {k: s.figures for k, s in run.scenarios.items()},
        "names": {k: s.names for k, s in run.scenarios.items()},
        "sample": None
        if run.sample is None
        else {"figures": run.sample.figures, "names": run.sample.names},
        "locomo": run.locomo,
        "split": {
            "tune": list(TUNE_SCENARIOS),
            "mean_tune": run.mean("tune"),
            "mean_held_out": run.mean("held-out"),
        },
        "oracle": {
            "mean": run.oracle_mean(),
            "mean_tune": run.oracle_mean("tune"),
            "mean_held_out": run.oracle_mean("held-out"),
            "figures": {k: s.figures for k, s in run.oracle.items()},
            "names": {k: s.names for k, s in run.oracle.items()},
        },
        "definitions": DEFINITIONS,
    }


# ------------------------------------------------------------------------ formatting
def fmt(key: str, value: float | None) -> str:
    if value is None:
        return "-"
    if key.endswith("_ms_per_event"):
        return f"{value:.1f}"
    if key in INTEGERS:
        return f"{value:.0f}" if float(value).is_integer() else f"{value:.1f}"
    return f"{value:.3f}" if key != "concept_ratio" else f"{value:.2f}"


def cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(row) + " |" for row in rows]
    return out


def met(value: float, op: str, target: float) -> bool:
    return value >= target if op == ">=" else value <= target


def header(run: Run, title: str) -> list[str]:
    dev = [p for p in run.seconds if p not in ("sample", "locomo")]
    wall, cpu = run.phase_seconds(dev)
    times = [f"{len(dev)} dev scenarios {wall:.0f} s wall ({cpu:.0f} s CPU)"]
    if "sample" in run.seconds:
        s = run.seconds["sample"]
        times.append(f"sample {s['wall']:.0f} s wall ({s['cpu']:.0f} s CPU)")
    if "locomo" in run.seconds:
        s = run.seconds["locomo"]
        times.append(f"LoCoMo {s['wall']:.0f} s wall ({s['cpu']:.0f} s CPU)")
    return [
        f"# {title}",
        "",
        f"- date: {run.date}",
        f"- machine: {run.machine}",
        f"- command: `{run.command}`",
        f"- heuristic planner, no LLM; embedder {run.embedder}",
        f"- time (fold and scoring, embeddings cached on disk between runs): {'; '.join(times)}",
        "",
    ]


def figures_markdown(run: Run) -> str:
    mean = run.mean()
    lines = header(run, "Structural quality: dev scenarios, sample stream, LoCoMo (issue 11)")
    if mean:
        lines += [f'## Issue 11 "Done when" (mean of {len(run.scenarios)} dev scenarios)', ""]
        lines += table(
            ["figure", "target", "mean", "met"],
            [
                [f, f"{op} {v}", fmt(f, mean[f]), "yes" if met(mean[f], op, v) else "no"]
                for f, op, v in TARGETS
            ],
        )
        lines += ["", "## Dev scenarios: issue 11 figures", ""]
        rows = [[name, *(fmt(c, s.figures[c]) for c in ISSUE_COLUMNS)] for name, s in
                run.scenarios.items()]  # fmt: skip
        rows += split_rows(run.mean, ISSUE_COLUMNS)
        lines += table(["scenario", *ISSUE_COLUMNS], rows)
    if run.oracle:
        lines += ["", *oracle_markdown(run)]
    if run.sample is not None:
        lines += ["", *sample_markdown(run.sample)]
    if run.locomo is not None:
        lines += ["", *locomo_markdown(run.locomo)]
    if mean:
        cols = ["events", "nodes", "edges", *METRICS]
        lines += ["", "## Earlier structural metrics", ""]
        rows = [[name, *(fmt(c, s.figures[c]) for c in cols)] for name, s in
                run.scenarios.items()]  # fmt: skip
        rows.append(["**mean**", *(fmt(c, mean[c]) for c in cols)])
        lines += table(["scenario", *cols], rows)
        lines += [
            "",
            "concept_f1 / concept_f1@0.5: concept title and text vs gold 'label: description' "
            "(cosine 0.75 / 0.5); intent_recall: intent title and text vs gold "
            "'label: trigger'; purity, compression, clustering, modularity, edge_entropy, "
            "pagerank_gini, proactivity as defined in benchmarks/metrics_structural.py.",
        ]
    lines += ["", "## Definitions", ""]
    lines += [f"- **{k}**: {v}" for k, v in DEFINITIONS.items()]
    return "\n".join(lines) + "\n"


def split_rows(mean: Any, columns: tuple[str, ...]) -> list[list[str]]:
    """Mean rows: tuned-on scenarios, held-out ones, all."""
    rows = []
    for split, title in (("tune", "mean (tune)"), ("held-out", "mean (held out)"), ("all", "mean")):
        figures = mean(split)
        if figures:
            rows.append([f"**{title}**", *(fmt(c, figures.get(c)) for c in columns)])
    return rows


def oracle_markdown(run: Run) -> list[str]:
    lines = [
        "## Naming on gold groups (--oracle-groups)",
        "",
        "Each gold concept named from its own events, each gold intent titled from its "
        "evidence (benchmarks.naming_oracle): the namer alone, without grouping or emergence. "
        f"Tuned on {', '.join(TUNE_SCENARIOS)}; the others are held out.",
        "",
    ]
    rows = [
        [name, *(fmt(c, s.figures.get(c)) for c in ORACLE_COLUMNS)]
        for name, s in run.oracle.items()
        if name != "sample"
    ]
    rows += split_rows(run.oracle_mean, ORACLE_COLUMNS)
    if "sample" in run.oracle:
        figures = run.oracle["sample"].figures
        rows.append(["sample", *(fmt(c, figures.get(c)) for c in ORACLE_COLUMNS)])
    return [*lines, *table(["scenario", *ORACLE_COLUMNS], rows)]


def sample_markdown(sample: Scored) -> list[str]:
    f = sample.figures
    lines = [
        "## Sample stream (examples/sample_stream.jsonl, themes in examples/sample_themes.json)",
        "",
        f"{fmt('concepts', f['concepts'])} concepts for {fmt('events', f['gold_concepts'])} "
        f"themes (ratio {f['concept_ratio']:.2f}); label_f1@0.6 {f['label_f1@0.6']:.3f}; "
        f"grounded_f1 {f['grounded_f1']:.3f}; {fmt('intents', f['intents'])} intents "
        f"({fmt('announced', f['announced'])} announced), {fmt('pending', f['pending'])} "
        f"pending; intent_title_recall@0.5 "
        f"{f['intent_title_recall@0.5']:.3f} (vs the goals); intent_evidence_precision "
        f"{f['intent_evidence_precision']:.3f}, recall {f['intent_evidence_recall']:.3f}.",
        "",
        f"**Goal themes with exactly one pending intent: "
        f"{f['goal_themes_with_one_pending']:.0f} of {f['goal_themes']:.0f}** "
        f"({f.get('goal_themes_with_one_goal', 0):.0f} counting a goal reached in the stream, "
        f"one resolved intent and none open, and one whose action is scheduled); pending intents "
        f"whose evidence is mostly off the goal themes: {f['pending_off_goal']:.0f}; intents "
        f"with no majority theme (mixed): {f['intents_mixed']:.0f}.",
        "",
    ]
    rows = [
        [
            cell(r["label"]),
            r["kind"],
            str(r["events"]),
            str(r["pending"]) + ("" if r["kind"] != "goal" else " (target 1)"),
            str(r["intents"]),
            str(r["concepts"]),
        ]
        for r in sample.names["themes"]
    ]
    mixed = sum(1 for i in sample.names["sample_intents"] if i["theme"] == "mixed")
    mixed_pending = sum(
        1
        for i in sample.names["sample_intents"]
        if i["theme"] == "mixed" and i["status"] == "pending"
    )
    rows.append(["no majority theme", "-", "-", str(mixed_pending), str(mixed), "-"])
    lines += table(
        ["theme", "kind", "events", "pending intents", "intents (any status)", "concepts"], rows
    )
    lines += ["", "Intent titles and concept names: see the names file."]
    return lines


def locomo_markdown(result: dict[str, Any]) -> list[str]:
    rows_in = result["conversations"]
    keys = ("turns", "concepts", "intents", "announced", "updates", "pending")
    keys += ("seconds", "cpu_seconds")
    rows = [
        [
            name,
            *(f"{r[k]:.0f}" for k in keys),
            "yes" if r["pending"] <= LOCOMO_MAX_PENDING else "no",
        ]
        for name, r in rows_in.items()
    ]
    total = {k: sum(r[k] for r in rows_in.values()) for k in keys}
    within = sum(1 for r in rows_in.values() if r["pending"] <= LOCOMO_MAX_PENDING)
    rows.append(["**total**", *(f"{total[k]:.0f}" for k in keys), f"{within}/{len(rows_in)}"])
    return [
        "## LoCoMo-10 conversations folded as chat streams",
        "",
        f"Target: at most {LOCOMO_MAX_PENDING} pending intents per conversation. Max pending "
        f"{max((r['pending'] for r in rows_in.values()), default=0):.0f}, mean "
        f"{total['pending'] / max(1, len(rows_in)):.1f}.",
        "",
        *table(
            [
                "conversation",
                "turns",
                "concepts",
                "intents",
                "announced",
                "updates",
                "pending",
                "fold s",
                "CPU s",
                f"pending <= {LOCOMO_MAX_PENDING}",
            ],
            rows,
        ),
    ]


# ---------------------------------------------------------------------- names file
def names_markdown(run: Run) -> str:
    lines = header(run, "Names a person reads: concepts and intents (issue 11)")
    lines += [
        "Gold label beside the predicted name it matched one-to-one (Hungarian on MiniLM "
        "cosine; concepts count at >= 0.6, intent titles at >= 0.5), the nearest assigned name "
        "when it fell short, and the concept that holds the gold concept's events "
        "(Hungarian on Jaccard, counts at >= 0.3).",
        "",
    ]
    for name, scored in run.scenarios.items():
        lines += [f"## {name}", "", *scenario_names(scored.names), ""]
    if run.sample is not None:
        lines += ["## Sample stream", "", *sample_names(run.sample.names), ""]
    if run.oracle:
        lines += ["## Names of the gold groups (--oracle-groups)", ""]
        for name, scored in run.oracle.items():
            lines += [f"### {name}", "", *oracle_names(scored.names), ""]
    if run.locomo is not None:
        lines += ["## LoCoMo-10: pending intent titles (first 10 per conversation)", ""]
        for conv, titles in run.locomo["pending_titles"].items():
            shown = "; ".join(cell(t) for t in titles[:10]) or "none"
            lines.append(f"- **{conv}** ({len(titles)} pending): {shown}")
        lines += ["", "## LoCoMo-10: concept names, largest first (members; first 15)", ""]
        for conv, names in run.locomo.get("concept_names", {}).items():
            shown = "; ".join(cell(n) for n in names[:15]) or "none"
            lines.append(f"- **{conv}** ({len(names)} concepts): {shown}")
        lines.append("")
    return "\n".join(lines)


def _cos(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def scenario_names(names: dict[str, Any]) -> list[str]:
    return ["Concepts:", "", *concept_lines(names), "", "Intents:", "", *intent_lines(names)]


def concept_lines(names: dict[str, Any]) -> list[str]:
    lines = table(
        ["gold concept (events)", "matched name", "nearest assigned (cosine)",
         "concept holding its events (members, Jaccard)"],
        [
            [
                f"{cell(r['gold'])} ({r['events']})",
                cell(r["matched"] or "none"),
                f"{cell(r['nearest'] or '-')} ({_cos(r['cosine'])})",
                "none"
                if r["holder"] is None
                else f"{cell(r['holder'])} ({r['holder_events']}, {_cos(r['jaccard'])})",
            ]
            for r in names["concepts"]
        ],
    )  # fmt: skip
    unmatched = names["unmatched_concepts"]
    shown = "; ".join(cell(t) for t in unmatched) or "none"
    return [*lines, "", f"Unmatched concept names ({len(unmatched)}): {shown}"]


def intent_lines(names: dict[str, Any]) -> list[str]:
    lines = table(
        ["gold intent", "matched title", "nearest assigned (cosine)",
         "intents matching by evidence"],
        [
            [
                cell(r["gold"]),
                cell(r["matched"] or "none"),
                f"{cell(r['nearest'] or '-')} ({_cos(r['cosine'])})",
                "; ".join(cell(t) for t in r["by_evidence"]) or "none",
            ]
            for r in names["intents"]
        ],
    )  # fmt: skip
    lines += ["", f"Emitted intents ({len(names['emitted'])}):", ""]
    lines += [
        f"- [{i['status']}] {cell(i['title'])} (evidence {i['evidence']}; matches: "
        f"{'; '.join(cell(g) for g in i['matches']) or 'no gold intent'})"
        for i in names["emitted"]
    ]
    return lines


def sample_names(names: dict[str, Any]) -> list[str]:
    lines = [f"Intents with their theme and description ({len(names['sample_intents'])}):", ""]
    for i in names["sample_intents"]:
        lines.append(f"- [{i['status']}] **{cell(i['title'])}** (theme: {i['theme']})")
        lines += [f"    > {cell(line)}" for line in i["description"].splitlines() if line.strip()]
    lines += ["", f"Concept names ({len(names['sample_concepts'])}):", ""]
    lines += [
        f"- {cell(c['title'])} ({c['members']} events, theme: {c['theme']})"
        for c in names["sample_concepts"]
    ]
    lines += ["", "Goals (the owner's wording) beside the intent titles:", ""]
    lines += intent_lines(names)[: len(names["intents"]) + 2]
    lines += ["", "Themes beside the concept names:", "", *concept_lines(names)]
    return lines


def oracle_names(names: dict[str, Any]) -> list[str]:
    rows = [
        [
            cell(r["gold"]),
            cell(r["name"]),
            _cos(r["cosine"]),
            f"{cell(r.get('best_candidate', ''))} ({_cos(r.get('best_cosine'))})",
            "missed" if _missed(r) else "",
        ]
        for r in names["concepts"]
    ]
    lines = table(
        ["gold concept", "name of its events", "cosine", "best candidate (cosine)", ""], rows
    )
    rows = [[cell(r["gold"]), cell(r["title"]), _cos(r["cosine"])] for r in names["intents"]]
    return [*lines, "", *table(["gold intent", "title of its evidence", "cosine"], rows)]


def _missed(row: dict[str, Any]) -> bool:
    """A candidate reached the gold label (cosine 0.6) but the namer picked another."""
    return bool(row.get("best_cosine", 0.0) >= 0.6 > row["cosine"])


# ----------------------------------------------------------------------------- plot
def draw(run: Run, path: Path, targets: tuple[tuple[str, str, float], ...]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    mean = run.mean()
    panels = 2 + (run.locomo is not None)
    fig, axes = plt.subplots(1, panels, figsize=(6 * panels, 4.5))
    if mean:
        shown = ["label_f1@0.6", "label_f1@0.75", "grounded_f1", "intent_title_recall@0.5",
                 "intent_evidence_precision", "intent_evidence_recall", "chains"]  # fmt: skip
        ax = axes[0]
        ax.bar(shown, [mean[c] for c in shown], color="#4C72B0")
        goal = {f: v for f, op, v in targets if op == ">="}
        for x, c in enumerate(shown):
            if c in goal:
                ax.plot([x - 0.4, x + 0.4], [goal[c], goal[c]], color="#C44E52", lw=2)
        ax.set_ylim(0, 1)
        ax.set_title(
            f"Issue 11, mean of {len(run.scenarios)} (red: target); concepts "
            f"{mean['concept_ratio']:.2f}x gold"
        )
        plt.setp(ax.get_xticklabels(), rotation=30, ha="right")
        others = [c for c in METRICS if c != "compression"]
        ax = axes[1]
        ax.bar(others, [mean[c] for c in others], color="#55A868")
        ax.set_ylim(0, 1)
        ax.set_title(f"Earlier structure metrics (compression {mean['compression']:.1f})")
        plt.setp(ax.get_xticklabels(), rotation=30, ha="right")
    if run.locomo is not None:
        ax = axes[2]
        convs = run.locomo["conversations"]
        ax.bar(list(convs), [r["pending"] for r in convs.values()], color="#8172B2")
        ax.axhline(LOCOMO_MAX_PENDING, color="#C44E52", lw=2)
        ax.set_title("LoCoMo-10: pending intents per conversation (red: target)")
        plt.setp(ax.get_xticklabels(), rotation=30, ha="right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
