"""Development and test tools (a fake model server, ...): used by the tests and benchmarks,
not installed with the foldmem package."""
