"""Intent sinks (the :class:`Sink` contract): stdout, a JSONL file, a webhook, a Kafka topic."""

from connectors.sinks.base import Sink, SinkError
from connectors.sinks.jsonl import JsonlSink
from connectors.sinks.stdout import StdoutSink
from connectors.sinks.webhook import WebhookSink, sign, verify_signature

__all__ = [
    "JsonlSink",
    "Sink",
    "SinkError",
    "StdoutSink",
    "WebhookSink",
    "sign",
    "verify_signature",
]
