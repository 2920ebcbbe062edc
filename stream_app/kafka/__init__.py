"""The Kafka deployment: a Faust worker folding the events topic into changelogged tenant
state, publishing intents, serving the read API (see docs/kafka.md)."""
