"""The embedded mode: one SQLite store per data dir, the hub over it, the always-on runner."""
