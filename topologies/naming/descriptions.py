"""The concept labels an intent's description names, kept to labels that exist.

An intent's description (:func:`topologies.naming.titles.describe`) says which concepts its
evidence is about: "... point to the same goal (Passport, Booking)." A concept is renamed as it
grows, and a merged one is gone, so a description written when the intent emerged can name
labels that no concept carries any more. :func:`relabelled` rewrites that part with the labels
the intent's supporting concepts carry now, and leaves a description alone while every label
it names still exists.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

MAX_NAMED = 3  # labels a description names (as describe does)
_ABOUT = re.compile(r"(point to the same goal)(?: \(([^()]*)\))?\.")


def named_labels(description: str) -> list[str]:
    """The concept labels the description names (none when it names none)."""
    found = _ABOUT.search(description)
    if found is None or not found.group(2):
        return []
    return [label.strip() for label in found.group(2).split(", ") if label.strip()]


def relabelled(description: str, labels: Sequence[str]) -> str | None:
    """The description naming ``labels`` (the supporting concepts' current ones, strongest
    first) instead of labels that no longer exist; None when it needs no change: every label
    it names is among ``labels`` (or it names none). A label that exists keeps its place and a
    gone one gives its place to the strongest current label not named yet, so a description
    naming one concept ("Passport") names one after its rename ("Passport application"), not
    the goal's weaker supporters beside it."""
    found = _ABOUT.search(description)
    if found is None:
        return None
    current = [label for label in labels if label]
    named = named_labels(description)
    if all(label in current for label in named):
        return None  # names none, or only labels that exist
    spare = iter([label for label in current if label not in named])
    kept = [label if label in current else next(spare, "") for label in named]
    about = ", ".join([label for label in kept if label][:MAX_NAMED])
    sentence = f"{found.group(1)} ({about})." if about else f"{found.group(1)}."
    return description[: found.start()] + sentence + description[found.end() :]
