"""Fixtures for the connector tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from connector_helpers import Mailbox, run_imap_server


@pytest.fixture
def imap_server() -> Iterator[tuple[str, int, Mailbox]]:
    """A real IMAP server on 127.0.0.1 (plain TCP) serving one folder."""
    yield from run_imap_server()
