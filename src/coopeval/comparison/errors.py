"""The error of a comparison asked for a name (agent, metric, game …) the data does not have."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["UnknownNameError"]


class UnknownNameError(ValueError):
    """``field`` names a value that is not among ``valid``; the message lists the valid names."""

    def __init__(self, field: str, value: str, valid: Iterable[str]) -> None:
        self.field = field
        self.value = value
        self.valid = sorted(valid)
        super().__init__(f"{field}: unknown {value!r}; valid names: {', '.join(self.valid) or '(none in the store)'}")
