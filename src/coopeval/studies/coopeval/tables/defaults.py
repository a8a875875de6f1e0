"""Dependency-free defaults of the table builder (imported by the CLI without numpy/polars)."""

DEFAULT_SEED = 20260415
"""Default bootstrap seed (any fixed integer; recorded in the store metadata and table notes)."""

DEFAULT_RESAMPLES = 1000
"""Default number of bootstrap resamples (issue 4 §4)."""
