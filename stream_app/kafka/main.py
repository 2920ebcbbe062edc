"""Entry point for the Faust CLI: ``faust -A stream_app.kafka.main:app worker``.

This module builds the app from the environment's Settings when it is imported; that is its
only purpose (``foldmem worker`` does not import it).
"""

from __future__ import annotations

import asyncio

from stream_app.kafka.topics import ensure_topics
from stream_app.kafka.worker import build_worker
from stream_app.settings import load_settings

_settings = load_settings()
asyncio.run(ensure_topics(_settings))
worker = build_worker(_settings)
app = worker.app
