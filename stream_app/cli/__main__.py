"""``python -m stream_app.cli``: the ``foldmem`` command."""

from stream_app.cli.app import main

main()
