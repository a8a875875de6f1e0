"""Packaged YAML (the config schemas): the same data as PyYAML's safe loader gives, parsed once,
and a copy each caller may change without changing the next caller's."""

from __future__ import annotations

from importlib.resources import files

import yaml

from coopeval.core.packaged import _packaged_yaml, packaged_yaml


def test_a_packaged_schema_reads_as_the_safe_loader_reads_it_and_each_caller_gets_its_own_copy() -> None:
    for package in ("coopeval.pipeline", "coopeval.studies.coopeval", "coopeval.studies.evolution"):
        expected = yaml.safe_load(files(package).joinpath("config.schema.yaml").read_text(encoding="utf-8"))
        first = packaged_yaml(package, "config.schema.yaml")
        assert first == expected
        first["properties"].clear()
        assert packaged_yaml(package, "config.schema.yaml") == expected
    _packaged_yaml.cache_clear()
    packaged_yaml("coopeval.pipeline", "config.schema.yaml")
    packaged_yaml("coopeval.pipeline", "config.schema.yaml")
    assert _packaged_yaml.cache_info().misses == 1
