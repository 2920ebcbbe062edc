"""Errors raised by connectors."""

from schemas.errors import FoldmemError


class ConnectorError(FoldmemError):
    """A source or sink cannot be opened or used (unknown type, bad option, bad path)."""
