"""The browser tier reuses the app tier's folded sample."""

from tests.app.conftest import folded_sample_dir

__all__ = ["folded_sample_dir"]
