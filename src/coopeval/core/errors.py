"""Errors shared by every layer."""

from __future__ import annotations


class ConfigError(ValueError):
    """A config value is unknown, ill-typed or inconsistent; the message names the field and the fix."""
