"""Embeddings of recent texts, computed in as few model calls as possible.

A batched fold knows most of the texts it will embed before it folds anything (each event's
text, the statements its fact step reads, their topic phrases): ``prefetch`` embeds them in one
call, and the fold's steps, which ask for one or two texts at a time, find them here. A model
such as MiniLM costs per call far more than per text, so one call for a batch is most of what a
batched fold saves. Each text's vector does not depend on the call it came from (batch and
single embeddings are identical), so a fold gives the same result with or without a prefetch.

Two kinds of text are remembered. The texts of the events being folded (``prefetch``,
``embed_transient``: an event's text, its body, its statements) belong to that fold and are
dropped by ``forget`` when it ends: event texts do not outlive the fold that read them. The
texts the fold's steps ask for on demand (``embed``: concept labels, candidate phrases,
intent titles and descriptions) recur from one fold to the next (a relabel checks the old
label against the new one, an intent's deadline returns to an earlier date): up to
``kept_size`` of them, each at most ``kept_chars`` long, outlive ``forget``; ``clear`` drops
them too (a deletion does, so no text quoting a deleted event stays).

A batch can also be embedded ahead (``embed_ahead``): while one batch of a tenant folds on the
fold's thread, the memo's own worker thread embeds the texts of the tenant's next batch (a
model such as MiniLM releases the GIL, so on two cores the two overlap). The vectors wait
beside the memo, not in it, until that batch starts and ``take_ahead`` hands them over; at
most one batch ahead per tenant, one embedding at a time, and ``clear`` drops them too.

A statement the fact step reads from an event is usually a sentence of the event's text. With
an embedder that can (:class:`~topologies.embedding.SpanEmbedder`: MiniLM) and ``in_context``
on, such a statement is embedded from its event's own model pass (late chunking: the mean of
its tokens' states in the text), so the fold makes one model pass per event, not one per
event and one per statement. Its vector then depends on the text it was read from, so it is
remembered under (text, statement), never under the statement alone; a statement that is not
a span of its text, or one the model's truncation cut, is embedded on its own, as every
statement is with ``in_context`` off. The batch's texts come as :class:`Passage` (a text and
the statements read from it); either way, one model call for a batch.

The vectors keep the embedder's model id: a statement read in context is the same model's
mean-pooled token states, L2-normalised, in the same space (on the sample stream its cosine
with the statement embedded alone is 0.75 on average, against 0.14 between two unrelated
statements), and the FACT index is already searched with plain vectors (the read path's
queries). A store folded before keeps its plain fact vectors beside the new ones: the fact
step compares them by the same rules (on 2026-12-05 the belief set's figures, the dev
scenarios' chains and every other structural figure were the same both ways, LoCoMo's R@10
0.749 both ways). A new model id would refuse every such store
(``bind_embedder``) for vectors of the same model.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from topologies.ahead import AheadSlots
from topologies.embedding import (
    Embedder,
    Matrix,
    Span,
    embed_with_spans,
    locate,
    reads_spans,
)

KEPT_SIZE = 2048  # on-demand texts kept across folds (a vector of 384 floats is 1.5 KB)
KEPT_CHARS = 1024  # longer on-demand texts live until the fold ends, as event texts do

StatementKey = tuple[str, str]  # (the text it was read from, the statement)


@dataclass(frozen=True)
class Passage:
    """A text of the events being folded and the statements the fact step reads from it."""

    text: str
    statements: tuple[str, ...] = ()


@dataclass
class Embedded:
    """Fresh vectors: of texts, and of statements read in their text's context."""

    texts: dict[str, np.ndarray] = field(default_factory=dict)
    statements: dict[StatementKey, np.ndarray] = field(default_factory=dict)


def _made(row: np.ndarray | None) -> np.ndarray:
    """A vector the memo had or has just made (a statement without one is a bug here)."""
    if row is None:
        raise RuntimeError("a statement's vector was neither remembered nor embedded")
    return row


def _passages(items: Sequence[str | Passage]) -> list[Passage]:
    return [item if isinstance(item, Passage) else Passage(item) for item in items]


class EmbeddingMemo:
    """An :class:`Embedder` that remembers the vectors of the fold's texts (the latest
    ``size``) and of up to ``kept_size`` short texts asked for on demand.

    Safe to share between the fold (maybe in a worker thread) and the read path: the maps are
    guarded by a lock that is never held during a model call."""

    def __init__(
        self,
        inner: Embedder,
        size: int = 4096,
        kept_size: int = KEPT_SIZE,
        kept_chars: int = KEPT_CHARS,
        in_context: bool = True,
    ) -> None:
        self.inner = inner
        self.in_context = in_context  # statements from their text's pass, where they can be
        self.size = size
        self.kept_size = kept_size
        self.kept_chars = kept_chars
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()  # this fold's texts
        self._kept: OrderedDict[str, np.ndarray] = OrderedDict()  # on-demand, across folds
        self._read: OrderedDict[StatementKey, np.ndarray] = OrderedDict()  # in context
        self._ahead: AheadSlots[Embedded] = AheadSlots()  # a tenant's next batch
        self._worker: ThreadPoolExecutor | None = None  # embeds ahead, started on first use
        self._lock = threading.Lock()
        self.calls = 0  # model calls made (for benchmarks)

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    def prefetch(self, items: Sequence[str | Passage]) -> None:
        """Embed the fold's texts (and the statements read from them) not remembered yet, in
        one call (dropped by ``forget``)."""
        passages = _passages(items)
        fresh = self._embed_missing(passages, self._plan(passages, ahead=False))
        self.adopt(fresh)

    def embed_statements(self, text: str, statements: Sequence[str]) -> Matrix:
        """The vectors of statements read from ``text`` (an event's, remembered until
        ``forget``): from the text's own pass where they are spans of it (``in_context``)."""
        if not statements:
            return np.zeros((0, self.dim), dtype=np.float32)
        passage = Passage(text, tuple(statements))
        fresh = self._embed_missing([passage], self._plan([passage], ahead=False))
        with self._lock:
            rows = [self._statement(text, statement) for statement in statements]
        self.adopt(fresh)
        for index, statement in enumerate(statements):
            if rows[index] is None:
                rows[index] = fresh.statements.get((text, statement), fresh.texts.get(statement))
        return np.vstack([_made(row) for row in rows]).astype(np.float32)

    def _in_context(self, text: str, statement: str) -> Span | None:
        """Where the statement is read from in its text, if its vector comes from there."""
        return locate(text, statement) if self.in_context and reads_spans(self.inner) else None

    def _statement(self, text: str, statement: str) -> np.ndarray | None:
        """A remembered statement's vector, in context or alone as it was embedded (lock
        held)."""
        if self._in_context(text, statement) is None:
            return self._recall(statement)
        row = self._read.get((text, statement))
        if row is not None:
            self._read.move_to_end((text, statement))
        return row

    def embed_transient(self, texts: Sequence[str]) -> Matrix:
        """``embed`` for texts of the events being folded: remembered until ``forget``."""
        return self._matrix(texts, transient=True)

    def embed(self, texts: Sequence[str]) -> Matrix:
        """The texts' vectors; those embedded here (not the fold's own) may outlive it."""
        return self._matrix(texts, transient=False)

    def __len__(self) -> int:
        return len(self._vectors) + len(self._kept) + len(self._read)

    def kept(self) -> list[str]:
        """The texts that outlive ``forget``, oldest first."""
        with self._lock:
            return list(self._kept)

    def forget(self) -> None:
        """Drop the fold's texts (the engine does when a fold or batch ends: event texts do
        not outlive the fold that read them); the short texts asked for on demand stay."""
        with self._lock:
            self._vectors.clear()
            self._read.clear()

    def clear(self) -> None:
        """Drop every remembered text, kept ones too, and the batches embedded ahead (after
        a deletion)."""
        with self._lock:
            self._vectors.clear()
            self._kept.clear()
            self._read.clear()
        self._ahead.clear()

    def embed_ahead(self, key: str, items: Sequence[str | Passage]) -> None:
        """Start embedding, in the memo's worker thread, the texts (and statements) of the
        batch that will fold after the one folding now (``key``: its tenant). ``take_ahead``
        hands the vectors over when that batch starts; a newer call for the same key replaces
        this one (one batch ahead). The texts kept across folds are not embedded again."""
        passages = _passages(items)
        with self._lock:
            if self._worker is None:
                self._worker = ThreadPoolExecutor(1, thread_name_prefix="embed-ahead")
            worker = self._worker
        self._ahead.put(key, worker.submit(self._embed_unkept, passages))

    def take_ahead(self, key: str) -> Future[Embedded] | None:
        """The embedding started ahead for ``key``'s batch, handed over once (None: none)."""
        return self._ahead.take(key)

    def adopt(self, fresh: Embedded) -> None:
        """Remember vectors embedded ahead as the texts of the fold starting now (``forget``
        drops them when it ends)."""
        with self._lock:
            for text, row in fresh.texts.items():
                if self._recall(text) is None:
                    self._remember(text, row, transient=True)
            for key, row in fresh.statements.items():
                self._read[key] = row
            while len(self._read) > self.size:
                self._read.popitem(last=False)

    def _embed_unkept(self, passages: list[Passage]) -> Embedded:
        """The passages' vectors, but for texts kept across folds (the worker's task)."""
        return self._embed_missing(passages, self._plan(passages, ahead=True))

    def _plan(self, passages: Sequence[Passage], ahead: bool) -> dict[str, list[Span]]:
        """What to send to the model: each text not remembered (ahead: not kept across
        folds), with the spans of its statements to read in context; the statements read
        alone as texts of their own."""
        wanted: dict[str, list[Span]] = {}
        with self._lock:
            for passage in passages:
                if not self._known(passage.text, ahead):
                    wanted.setdefault(passage.text, [])
                for statement in passage.statements:
                    span = self._in_context(passage.text, statement)
                    if span is None:
                        if not self._known(statement, ahead):
                            wanted.setdefault(statement, [])
                    elif ahead or (passage.text, statement) not in self._read:
                        spans = wanted.setdefault(passage.text, [])
                        if span not in spans:
                            spans.append(span)
        return wanted

    def _known(self, text: str, ahead: bool) -> bool:
        """Is the text's vector remembered (ahead: kept across folds)? Lock held."""
        return text in self._kept if ahead else self._recall(text) is not None

    def _embed_missing(
        self, passages: Sequence[Passage], wanted: dict[str, list[Span]]
    ) -> Embedded:
        """One model call for the planned texts and spans (shortest first: a model pads each
        of its batches less); a span the model could not read is embedded alone after."""
        fresh = Embedded()
        if not wanted:
            return fresh
        texts = sorted(wanted, key=len)
        matrix, spans = embed_with_spans(self.inner, texts, [wanted[t] for t in texts])
        fresh.texts = dict(zip(texts, matrix, strict=True))
        read: dict[tuple[str, Span], np.ndarray | None] = {
            (text, span): row
            for text, rows in zip(texts, spans, strict=True)
            for span, row in zip(wanted[text], rows, strict=True)
        }
        unread: list[StatementKey] = []
        for passage in passages:
            for statement in passage.statements:
                span = self._in_context(passage.text, statement)
                if span is None or (passage.text, span) not in read:
                    continue
                row = read[(passage.text, span)]
                if row is None:
                    unread.append((passage.text, statement))
                else:
                    fresh.statements[(passage.text, statement)] = row
        if unread:  # cut by the model's truncation: embedded on their own
            alone = self.inner.embed([statement for _, statement in unread])
            fresh.statements.update(zip(unread, alone, strict=True))
        with self._lock:
            self.calls += 1 + bool(unread)
        return fresh

    def _matrix(self, texts: Sequence[str], transient: bool) -> Matrix:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        found = self._vectors_of(texts, transient)
        return np.vstack([found[text] for text in texts]).astype(np.float32)

    def _vectors_of(self, texts: Sequence[str], transient: bool) -> dict[str, np.ndarray]:
        wanted = list(dict.fromkeys(texts))
        with self._lock:
            found = {text: row for text in wanted if (row := self._recall(text)) is not None}
        missing = sorted((t for t in wanted if t not in found), key=len)
        if not missing:  # shortest first: a model pads each of its batches less
            return found
        fresh = dict(zip(missing, self.inner.embed(missing), strict=True))
        found.update(fresh)
        with self._lock:
            self.calls += 1
            for text, row in fresh.items():
                self._remember(text, row, transient)
        return found

    def _recall(self, text: str) -> np.ndarray | None:
        """The remembered vector of ``text``, now the most recent of its map (lock held)."""
        for memory in (self._vectors, self._kept):
            row = memory.get(text)
            if row is not None:
                memory.move_to_end(text)
                return row
        return None

    def _remember(self, text: str, row: np.ndarray, transient: bool) -> None:
        """Keep a fresh vector: a short text asked for on demand across folds, any other
        until the fold ends (lock held)."""
        if transient or len(text) > self.kept_chars:
            memory, size = self._vectors, self.size
        else:
            memory, size = self._kept, self.kept_size
        memory[text] = row
        while len(memory) > size:
            memory.popitem(last=False)


def embed_statements(embedder: Embedder, text: str, statements: Sequence[str]) -> Matrix:
    """Vectors of statements read from an event's ``text``: a memo reads them in their text's
    context where it can and remembers them only until its fold ends; any other embedder
    embeds them on their own."""
    if isinstance(embedder, EmbeddingMemo):
        return embedder.embed_statements(text, statements)
    return embedder.embed(statements)
