"""The ``foldmem`` command line (typer): :mod:`stream_app.cli.app` builds it."""
