"""The app tier's data_dir fixture, reused here."""

from tests.app.conftest import data_dir

__all__ = ["data_dir"]
