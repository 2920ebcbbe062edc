"""Intent messages on their way out: outputs, webhook delivery, ``foldmem notify``."""
