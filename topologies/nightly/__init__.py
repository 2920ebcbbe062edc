"""The nightly engine (docs/DESIGN.md section 7; DCPM System 2): cluster, induce, sweep.

Entry points live in :mod:`topologies.nightly.run` (``run_nightly``, ``run_nightly_async``);
nothing is imported here so that importing the package stays free.
"""
