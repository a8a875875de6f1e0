"""Errors shared by every layer."""

from __future__ import annotations


class ConfigError(ValueError):
    """A config value is unknown, ill-typed or inconsistent; the message names the field and the fix."""


class CliError(Exception):
    """Bad input on the ``coopeval`` command line: reported as one line on stderr (naming the
    field and the fix) with exit code 2."""


class ComputationError(Exception):
    """A valid ``coopeval`` command-line input whose evaluation failed: exit code 1."""
