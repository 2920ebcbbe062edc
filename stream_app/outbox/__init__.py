"""Intent messages on their way out: the outbox in the data dir's store (``table``), fed to
each sink in order, durably, once where a sink asks for it (``delivery``), the sinks of the
embedded mode from Settings (``sinks``), and ``foldmem notify`` (``notify``)."""
