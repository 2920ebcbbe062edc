"""A batch's texts parsed at once: before a batch folds, the texts its fold will parse without
the entity recogniser (its events' titles and bodies, its chat turns) are parsed in one spaCy
call. The fold finds them in the parser's cache: the same parses, the same graph, fewer
calls."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from typing import Any

from schemas.events import RawEvent
from tests.engine.test_fold_batch import sample_events
from topologies import reactions
from topologies.config import EngineConfig
from topologies.embedding import HashingEmbedder
from topologies.engine import FoldEngine, event_node_id, event_to_node
from topologies.heuristic_planner import HeuristicPlanner
from topologies.naming import Namer
from topologies.naming.phrases import PhraseParser, load_pipeline


class NotingPipeline:
    """The small English pipeline, noting each call: the thread, the texts, the components
    switched off; it fails for texts holding ``fail_on`` (a parse that cannot be done)."""

    def __init__(self, fail_on: str | None = None) -> None:
        self.nlp = load_pipeline()
        self.calls: list[tuple[int, list[str], tuple[str, ...]]] = []
        self.fail_on = fail_on

    @property
    def pipe_names(self) -> list[str]:
        return list(self.nlp.pipe_names)

    def __call__(self, text: str, disable: Iterable[str] = ()) -> Any:
        self._note([text], disable)
        return self.nlp(text, disable=list(disable))

    def pipe(self, texts: Iterable[str], disable: Iterable[str] = ()) -> Iterator[Any]:
        texts = list(texts)
        self._note(texts, disable)
        return self.nlp.pipe(texts, disable=list(disable))

    def _note(self, texts: list[str], disable: Iterable[str]) -> None:
        if self.fail_on is not None and any(self.fail_on in text for text in texts):
            raise RuntimeError("the pipeline cannot parse this text")
        self.calls.append((threading.get_ident(), texts, tuple(disable)))

    def texts_on(self, thread: int, *, other: bool = False) -> set[str]:
        return {t for ident, texts, _ in self.calls if (ident != thread) == other for t in texts}


def engine_of(nlp: NotingPipeline | None = None, ahead: bool = True) -> FoldEngine:
    embedder = HashingEmbedder(dim=256)
    config = EngineConfig(embed_ahead=ahead)
    namer = Namer(embedder, PhraseParser(nlp) if nlp is not None else PhraseParser())
    return FoldEngine(embedder, HeuristicPlanner(embedder, config, namer), config)


def nodes_of(events: list[RawEvent]) -> list[Any]:
    return [event_to_node(e, event_node_id(e.tenant, e.id)) for e in events]


def test_events_read_in_one_call_analyse_as_each_parsed_alone() -> None:
    nodes = nodes_of(sample_events(40))
    alone = PhraseParser()
    one_by_one = [alone.analyse_nodes([node])[0] for node in nodes]
    nlp = NotingPipeline()
    batch = PhraseParser(nlp)
    batch.read([*batch.event_texts(nodes), *reactions.turn_texts(nodes)])
    assert len(nlp.calls) == 1
    assert batch.analyse_nodes(nodes) == one_by_one
    turns = [n for n in nodes if n.source == "chat"]
    assert turns
    names: frozenset[str] = frozenset()
    read = [reactions.is_reaction(n.text, names, batch) for n in turns]
    assert read == [reactions.is_reaction(n.text, names, alone) for n in turns]
    assert len(nlp.calls) == 1  # the analyses and the chat turns' reading parsed nothing more


def test_the_entity_recogniser_is_left_on_for_the_parses_that_read_entities() -> None:
    nlp = NotingPipeline()
    parser = PhraseParser(nlp)
    parser.read(["Lukas Brenner"])
    assert not any(t.ent_type_ for t in parser.parse_without_entities("Lukas Brenner"))
    assert any(t.ent_type_ == "PERSON" for t in parser.parse("Lukas Brenner"))
    assert [disable for _, _, disable in nlp.calls] == [("ner",), ()]


async def test_a_batch_parses_its_texts_in_one_call_before_it_folds() -> None:
    events = sample_events(20)
    nlp = NotingPipeline()
    engine = engine_of(nlp, ahead=False)
    memory = engine.new_memory("alice")
    await engine.fold_batch(memory, events)
    _, first, disable = nlp.calls[0]
    assert disable == ("ner",)
    assert set(first) == set(engine.batch_readings(memory, events))
    later = {t for _, texts, off in nlp.calls[1:] if off == ("ner",) for t in texts}
    assert not later & set(first)  # none parsed again
