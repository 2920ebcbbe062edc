"""The namer's phrase vectors: a full cache never loses a phrase it is asked for."""

from __future__ import annotations

import pytest

from topologies.embedding import HashingEmbedder
from topologies.naming import Namer, namer


def test_a_full_cache_keeps_the_phrases_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(namer, "VECTOR_CACHE", 3)
    names = Namer(HashingEmbedder(dim=64))
    names.embed(["old phrase", "b", "c"])
    # "old phrase" is the oldest cached entry; with a new phrase it must not be evicted first
    vectors = names.embed(["old phrase", "new phrase"])
    assert vectors.shape == (2, 64)
    again = names.embed(["old phrase"])
    assert (again[0] == vectors[0]).all()
