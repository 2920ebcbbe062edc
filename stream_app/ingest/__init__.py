"""Getting events in: admission at the edge, reading sources, checkpoints, dead letters."""
