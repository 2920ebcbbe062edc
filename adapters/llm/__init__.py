"""The OpenAI-compatible model client and the factory that builds the LLM planner from the
runtime's settings (docs/llm.md)."""
