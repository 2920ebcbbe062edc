"""Fixtures shared by the engine's naming tests: one spaCy parser per module, a Namer on it."""

from __future__ import annotations

import pytest

from topologies.embedding import HashingEmbedder
from topologies.naming import Namer
from topologies.naming.phrases import PhraseParser


@pytest.fixture(scope="module")
def parser() -> PhraseParser:
    return PhraseParser()


@pytest.fixture
def namer(embedder: HashingEmbedder, parser: PhraseParser) -> Namer:
    return Namer(embedder, parser)
