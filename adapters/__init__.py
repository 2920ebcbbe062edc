"""Adapters: the engine's collaborators that reach the outside world (network, clock,
environment). ``topologies/`` defines what it needs as protocols and never imports these."""
