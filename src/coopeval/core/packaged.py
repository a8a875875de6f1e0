"""Data files shipped inside the package (the config schemas), read once per process."""

from __future__ import annotations

import copy
import functools
from importlib.resources import files
from typing import Any

__all__ = ["packaged_yaml"]


def packaged_yaml(package: str, name: str) -> Any:
    """The parsed YAML file ``name`` shipped in ``package``, a fresh copy the caller may change.
    Parsed once per process, with libyaml's loader where PyYAML has it (the schemas are read at
    every workflow start; about 10x faster than the pure-Python loader).

    Raises
    ------
    FileNotFoundError
        No such file in the package.
    yaml.YAMLError
        The file is not valid YAML.
    """
    return copy.deepcopy(_packaged_yaml(package, name))


@functools.cache
def _packaged_yaml(package: str, name: str) -> Any:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(files(package).joinpath(name).read_text(encoding="utf-8"), Loader=loader)
