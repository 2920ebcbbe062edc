"""Intent sinks: stdout, JSONL, webhook, and a deduplicating wrapper."""

from connectors.sinks.base import IntentSink
from connectors.sinks.dedup import DedupingSink
from connectors.sinks.jsonl import JsonlSink
from connectors.sinks.stdout import StdoutSink
from connectors.sinks.webhook import WebhookSink, sign, verify_signature

__all__ = [
    "DedupingSink",
    "IntentSink",
    "JsonlSink",
    "StdoutSink",
    "WebhookSink",
    "sign",
    "verify_signature",
]
