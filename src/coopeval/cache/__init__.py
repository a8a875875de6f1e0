"""The response cache (docs/protocol/engineering.md#response-cache)."""
