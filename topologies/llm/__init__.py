"""The LLM planner: UpdatePlans from any OpenAI-compatible model. See docs/llm.md.

The engine side only: prompts, reply parsing, checks, breaker, usage ledger and the protocols
a model client implements (``completer``). The client itself and the factory that builds the
planner from the runtime's settings are in ``adapters.llm``.
"""
