"""The next batch read ahead: while a tenant's batch folds, a reader (the runtime's: a worker
process) parses the texts of its next batch and analyses its events, and the next batch adopts
what it read. The same parses and analyses as the fold's own, the same graph; a reading late or
failed is left to the batch it belongs to. Here the reader is another parser, its readings
passed through pickle as between processes (the process itself:
tests/app/test_reader_process.py)."""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from concurrent.futures import Future
from typing import Any

from structlog.testing import capture_logs

from schemas.events import RawEvent
from tests.engine.fold_helpers import dump
from tests.engine.test_batch_parse import NotingPipeline, nodes_of
from tests.engine.test_embed_ahead import fold_ahead
from tests.engine.test_fold_batch import sample_events
from topologies import reactions
from topologies.config import EngineConfig
from topologies.embedding import HashingEmbedder
from topologies.engine import READ_AHEAD_MIN, FoldEngine
from topologies.heuristic_planner import HeuristicPlanner
from topologies.naming import Namer
from topologies.naming.phrases import AnalysisKey, PhraseParser, Reading


class NotingParsePipeline(NotingPipeline):
    """The small English pipeline noting its calls, with the vocabulary a parser reads Docs
    handed over into."""

    @property
    def vocab(self) -> Any:
        return self.nlp.vocab


class ParserReader:
    """Another parser, each reading done when it is asked for (so it is done when its batch
    starts) and pickled as between processes."""

    def __init__(self) -> None:
        self.parser = PhraseParser()
        self.readings = 0

    def submit(self, keys: Sequence[AnalysisKey], texts: Sequence[str]) -> Future[Reading]:
        future: Future[Reading] = Future()
        future.set_result(pickle.loads(pickle.dumps(self.parser.reading(keys, texts))))
        self.readings += 1
        return future


class StuckReader:
    """A reader whose readings never finish (a worker process busy or starting)."""

    def __init__(self) -> None:
        self.futures: list[Future[Reading]] = []

    def submit(self, keys: Sequence[AnalysisKey], texts: Sequence[str]) -> Future[Reading]:
        self.futures.append(Future())
        return self.futures[-1]


class FailingReader:
    """A reader whose readings fail (a text the worker process could not read)."""

    def submit(self, keys: Sequence[AnalysisKey], texts: Sequence[str]) -> Future[Reading]:
        future: Future[Reading] = Future()
        future.set_exception(RuntimeError("the worker could not read the batch"))
        return future


def engine_of(nlp: NotingPipeline | None = None, reader: Any = None) -> FoldEngine:
    """An engine with a parser of its own (nothing read yet), the next batch read ahead by
    ``reader`` (None: not read ahead)."""
    embedder = HashingEmbedder(dim=256)
    config = EngineConfig(embed_ahead=False)
    namer = Namer(embedder, PhraseParser(nlp) if nlp is not None else PhraseParser())
    planner = HeuristicPlanner(embedder, config, namer)
    return FoldEngine(embedder, planner, config, reader=reader)


def token_readings(doc: Any) -> list[tuple[Any, ...]]:
    """Everything a reader of a Doc without entities reads of its words."""
    return [
        (
            t.text,
            t.whitespace_,
            t.tag_,
            t.pos_,
            t.lemma_,
            t.dep_,
            t.head.i,
            str(t.morph),
            t.is_sent_start,
            t.ent_type_,
            t.like_num,
            t.is_stop,
        )
        for t in doc
    ]


async def test_docs_and_analyses_read_by_another_parser_are_the_parsers_own() -> None:
    nodes = nodes_of(sample_events(40))
    reader = PhraseParser()
    keys = reader.event_keys(nodes)
    turns = reactions.turn_texts(nodes)
    reading = pickle.loads(pickle.dumps(reader.reading(keys, turns)))  # as between processes
    nlp = NotingParsePipeline()
    adopter = PhraseParser(nlp)
    adopter.adopt(reading)
    fresh = PhraseParser()
    assert adopter.analyse(keys) == fresh.analyse(keys)
    for text in [*adopter.event_texts(nodes), *turns]:
        adopted, parsed = adopter.parse_without_entities(text), fresh.parse_without_entities(text)
        assert token_readings(adopted) == token_readings(parsed)
        assert [c.text for c in adopted.noun_chunks] == [c.text for c in parsed.noun_chunks]
    assert nlp.calls == [] and adopter.parsed == 0  # the adopter parsed nothing itself


async def test_a_batch_read_ahead_folds_to_the_same_graph_and_is_not_parsed_again() -> None:
    events = sample_events(60)
    nlp = NotingParsePipeline()
    reader = ParserReader()
    ahead = engine_of(nlp)
    ahead.reader = reader  # the noting pipeline is the default one, noted
    folded = await fold_ahead(ahead, events, 10)
    alone = await fold_ahead(engine_of(), events, 10)
    assert dump(folded) == dump(alone)
    assert reader.readings == 5  # batches 2 to 6, each while the one before folded
    own = {text for _, texts, off in nlp.calls if off == ("ner",) for text in texts}
    first = set(ahead.batch_readings(folded, events[:10]))
    later = set(ahead.batch_readings(folded, events[10:])) - first
    assert later and not later & own  # the fold's own pipeline parsed none of the later texts
    assert first <= own  # the first batch: no one read it before


def test_the_engine_reads_ahead_only_with_the_default_pipeline() -> None:
    reader = ParserReader()
    assert engine_of(reader=reader).reader is reader
    assert engine_of(NotingParsePipeline(), reader=reader).reader is None  # a reader cannot
    # load another pipeline than the default one


async def test_a_reading_not_done_when_its_batch_starts_is_not_waited_for() -> None:
    events = sample_events(30)
    stuck = StuckReader()
    folded = await fold_ahead(engine_of(reader=stuck), events, 10)
    alone = await fold_ahead(engine_of(), events, 10)
    assert dump(folded) == dump(alone)
    assert len(stuck.futures) == 2 and all(f.cancelled() for f in stuck.futures)


async def test_a_failed_reading_is_parsed_by_its_own_batch() -> None:
    events = sample_events(30)
    with capture_logs() as logs:
        folded = await fold_ahead(engine_of(reader=FailingReader()), events, 10)
    alone = await fold_ahead(engine_of(), events, 10)
    assert dump(folded) == dump(alone)
    failed = [e for e in logs if e["event"] == "read_ahead_failed"]
    assert len(failed) == 2 and "could not read" in failed[0]["error"]


async def test_an_event_of_another_tenant_in_the_next_batch_is_not_read() -> None:
    events = sample_events(21)
    stranger = events[20].model_copy(update={"tenant": "bob"})
    engine = engine_of(reader=ParserReader())
    memory = engine.new_memory("alice")
    await engine.fold_batch(memory, events[:10], ahead=[*events[10:20], stranger])
    await engine.fold_batch(memory, events[10:20])
    parser = engine.namer.parser
    assert parser.unread(parser.event_keys(nodes_of(events[10:20])), []) == ([], [])
    assert parser.unread(parser.event_keys(nodes_of([stranger])), [])[0]  # bob's: not read


async def test_a_next_batch_read_already_is_not_sent_to_the_reader() -> None:
    events: list[RawEvent] = sample_events(10)
    reader = StuckReader()
    engine = engine_of(reader=reader)
    memory = engine.new_memory("alice")
    engine.namer.parser.analyse_nodes(nodes_of(events))  # as naming their concepts does
    await engine.fold_batch(memory, events, ahead=events)  # its events come again next
    assert reader.futures == []


async def test_a_next_batch_of_fewer_events_than_read_ahead_min_is_parsed_by_itself() -> None:
    events = sample_events(3 * (READ_AHEAD_MIN - 1))
    reader = StuckReader()
    await fold_ahead(engine_of(reader=reader), events, READ_AHEAD_MIN - 1)
    await fold_ahead(engine_of(reader=reader), events[:4], 1)  # one at a time: a stream
    assert reader.futures == []  # a reading would cost more than the parse it saves
