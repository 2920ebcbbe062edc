"""The memory engine: graph, indexes, context, planners, executor, consolidation, intents.

No Kafka and no network here; time and randomness are passed in.
"""
