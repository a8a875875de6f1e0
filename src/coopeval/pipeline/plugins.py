"""Plugins: modules named in the config key ``plugins`` are imported before the config is
validated, so code outside ``src/`` can extend the benchmark without editing it.

A plugin is any importable module (on ``sys.path``, e.g. through ``PYTHONPATH``) that registers
what it adds at import: a study with :func:`coopeval.pipeline.studies.register_study`, and in
the same way a game, a mechanism or a provider through their registries. The hook itself is
generic, "import these modules first": the workflow calls :func:`load_plugins` while it reads
the config (:func:`coopeval.pipeline.config.validate_config`), and every job script
(``workflow/scripts/*.py``) calls it again in its own process.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from coopeval.core.errors import ConfigError

PLUGINS_KEY = "plugins"
"""The config key: a list of importable module names."""


def plugin_modules(config: Mapping[str, Any]) -> list[str]:
    """The module names of ``config["plugins"]`` (an empty list when the key is absent).

    Raises
    ------
    ConfigError
        If the value is not a list of non-empty module names.
    """
    value = config.get(PLUGINS_KEY) or []
    if not isinstance(value, list) or not all(isinstance(name, str) and name.strip() for name in value):
        raise ConfigError(f"config {PLUGINS_KEY}: {value!r} must be a list of importable module names, e.g. [my_package.my_study]")
    return [name.strip() for name in value]


def load_plugins(config: Mapping[str, Any]) -> list[str]:
    """Import every module of ``config["plugins"]`` in order (a module already imported is not
    imported again) and return their names.

    Raises
    ------
    ConfigError
        Naming the module that cannot be imported and why (add its folder to ``PYTHONPATH``).
    """
    names = plugin_modules(config)
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError as exc:
            raise ConfigError(
                f"config {PLUGINS_KEY}: cannot import {name!r} ({exc}); put its folder on PYTHONPATH or fix the name"
            ) from exc
    return names
