"""Sources (calendar, email, chat, JSONL) that yield RawEvents, and sinks for intents.

Import the heavy parts from their modules: `connectors.detect.open_source`,
`connectors.jsonl.JsonlSource`, `connectors.sinks`.
"""

from connectors.base import BadItem, Item, Source
from connectors.errors import ConnectorError

__all__ = ["BadItem", "ConnectorError", "Item", "Source"]
