"""Prompts as data: one module per LLM task, each with its response model."""
