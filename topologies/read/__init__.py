"""The read path (docs/DESIGN.md section 8): hybrid retrieval, graph expansion, chains, cued recall.

No LLM is ever called here. Entry points: :func:`query` and :func:`recall` (or a
:class:`Reader`, which keeps one incremental lexical index per tenant).
"""

from topologies.config import ReadConfig
from topologies.read.lexical import LexicalIndex
from topologies.read.reader import Reader, query, recall
from topologies.read.recall_model import consolidation_step, recall_probability

__all__ = [
    "LexicalIndex",
    "ReadConfig",
    "Reader",
    "consolidation_step",
    "query",
    "recall",
    "recall_probability",
]
