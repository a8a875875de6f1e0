"""The response cache (engineering rules §4)."""
