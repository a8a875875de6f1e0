"""Altair chart builders; each takes a small aggregated frame (never more than Altair's 5,000-row limit)."""
