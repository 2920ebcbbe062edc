"""A seeded synthetic event stream for speed benchmarks.

Topics have their own vocabulary and named entities; events mix topic words with common
words, mention entities, and sometimes a date or deadline, so every part of the fold (kNN,
clustering, entity links, TIME nodes) does real work.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

from schemas.events import RawEvent
from topologies.lexicon import MONTH_ABBREVIATIONS

_COMMON = [
    "please",
    "can",
    "we",
    "check",
    "the",
    "update",
    "today",
    "about",
    "next",
    "plan",
    "team",
    "notes",
    "quick",
    "follow",
    "meeting",
    "call",
    "draft",
    "review",
    "shared",
    "thanks",
    "agenda",
    "question",
    "status",
    "week",
    "time",
]
SYLLABLES = [
    "ka",
    "lo",
    "mi",
    "ren",
    "sa",
    "to",
    "vel",
    "dor",
    "in",
    "ar",
    "be",
    "cu",
    "fen",
    "gra",
    "hal",
    "jo",
    "ki",
    "lum",
    "nor",
    "pe",
]
_SOURCES = ("calendar", "email", "chat", "note")


def _word(rng: random.Random, parts: int) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(parts))


class SyntheticStream:
    def __init__(self, seed: int = 7, topics: int = 400, tenant: str = "bench") -> None:
        self.rng = random.Random(seed)
        self.tenant = tenant
        self.topics = [
            (
                [_word(self.rng, 3) for _ in range(10)],
                [_word(self.rng, 2).capitalize() for _ in range(3)],
            )
            for _ in range(topics)
        ]
        self.start = datetime(2026, 1, 5, 8, 0, tzinfo=UTC)

    def events(self, count: int) -> Iterator[RawEvent]:
        rng = self.rng
        ts = self.start
        for n in range(count):
            ts += timedelta(minutes=rng.randint(3, 40))
            vocab, names = rng.choice(self.topics)
            words = rng.sample(vocab, 5) + rng.sample(_COMMON, 4)
            rng.shuffle(words)
            title = " ".join(words[:4]).capitalize()
            body = f"{' '.join(words[4:])} with {rng.choice(names)} and {rng.choice(names)}."
            if rng.random() < 0.15:
                due = ts + timedelta(days=rng.randint(1, 20))
                body += f" Deadline: {due.day} {MONTH_ABBREVIATIONS[due.month - 1]} {due.year}."
            yield RawEvent(
                id=f"syn-{n:07d}",
                tenant=self.tenant,
                source=rng.choice(_SOURCES),
                ts=ts,
                title=title,
                body=body,
                participants=[rng.choice(names)],
            )
