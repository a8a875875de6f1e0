"""The error of a comparison asked for a name (agent, metric, game …) the data does not have."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["UnknownNameError", "metric_name"]


class UnknownNameError(ValueError):
    """``field`` names a value that is not among ``valid``; the message lists the valid names."""

    def __init__(self, field: str, value: str, valid: Iterable[str]) -> None:
        self.field = field
        self.value = value
        self.valid = sorted(valid)
        super().__init__(f"{field}: unknown {value!r}; valid names: {', '.join(self.valid) or '(none in the store)'}")


def metric_name(value: str, valid: Iterable[str], field: str = "--metric") -> str:
    """The name among ``valid`` that ``value`` spells, ignoring case (``mean`` → ``Mean``).

    Metric names are a fixed vocabulary, so case carries no meaning there (agent names, which
    users choose, are matched exactly elsewhere). An exact match wins over a case-folded one.

    Raises
    ------
    UnknownNameError
        If no valid name matches, or several differ only in case (listing the valid names).
    """
    names = list(valid)
    if value in names:
        return value
    folded = [n for n in names if n.casefold() == value.casefold()]
    if len(folded) != 1:
        raise UnknownNameError(field, value, names)
    return folded[0]
