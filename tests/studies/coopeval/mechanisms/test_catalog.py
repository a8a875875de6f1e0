"""The mechanism catalog: parameters, defaults, schema bounds and traits (spec §4.2–4.6)."""

from __future__ import annotations

import pytest

from coopeval.core.errors import ConfigError
from coopeval.pipeline.config import validate_config
from coopeval.studies.coopeval.mechanisms import MECHANISMS as CLASSES
from coopeval.studies.coopeval.mechanisms.catalog import (
    CONDITIONAL_MECHANISMS,
    DESIGN_MECHANISMS,
    MECHANISM_LABELS,
    MECHANISM_ORDER,
    POPULATION_MECHANISMS,
    mechanism_info,
)


def test_catalog_and_classes_name_the_same_mechanisms_in_paper_order():
    assert MECHANISM_ORDER == tuple(CLASSES) == (
        "NoMechanism", "Repetition", "ReputationFirstOrder", "Reputation", "Mediation", "Contracting",
    )


def test_traits():
    assert DESIGN_MECHANISMS == ("Mediation", "Contracting")
    assert mechanism_info("Mediation").design_kind == "mediator"
    assert mechanism_info("Contracting").design_kind == "contract"
    assert {"ReputationFirstOrder", "Reputation"} == POPULATION_MECHANISMS
    assert CONDITIONAL_MECHANISMS == ("Repetition", "ReputationFirstOrder", "Reputation")
    assert MECHANISM_LABELS["ReputationFirstOrder"] == "Reputation−" and MECHANISM_LABELS["Reputation"] == "Reputation+"


def test_defaults_are_the_papers():
    assert mechanism_info("Repetition").defaults() == {"num_rounds": 15, "discount": 0.8, "lookup_depth": 3}
    assert mechanism_info("Reputation").defaults() == {
        "num_rounds": 15, "discount": 0.8, "lookup_depth": 3, "max_recursion_depth": 3,
    }
    assert mechanism_info("ReputationFirstOrder").defaults()["max_recursion_depth"] == 1
    assert mechanism_info("Contracting").defaults() == {} and mechanism_info("NoMechanism").defaults() == {}


def test_params_schema_bounds():
    props = mechanism_info("Repetition").params_schema()["properties"]
    assert props["num_rounds"]["type"] == "integer" and props["num_rounds"]["minimum"] == 1
    assert props["discount"] == {**props["discount"], "type": "number", "exclusiveMinimum": 0, "maximum": 1, "default": 0.8}
    bounds = mechanism_info("Contracting").params_schema()["properties"]["value_bounds"]
    assert (bounds["type"], bounds["minItems"], bounds["maxItems"]) == ("array", 2, 2) and "default" not in bounds


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"discount": 1.5}, "mechanism_params.Repetition.discount"),
        ({"num_rounds": 0}, "mechanism_params.Repetition.num_rounds"),
        ({"rounds": 3}, "Allowed keys here: discount, lookup_depth, num_rounds"),
    ],
)
def test_config_rejects_bad_mechanism_params(params, message):
    config = {"agents": [{"model": "bot/always-defect"}], "mechanism_params": {"Repetition": params}}
    with pytest.raises(ConfigError, match=message.replace(".", r"\.")):
        validate_config(config)


def test_unknown_mechanism_is_rejected_with_the_known_names():
    with pytest.raises(ConfigError, match="'Gossip' is not allowed; use one of \\['NoMechanism'"):
        validate_config({"agents": [{"model": "bot/always-defect"}], "mechanisms": ["Gossip"]})


def test_parse_params_rejects_unknown_keys():
    with pytest.raises(TypeError):
        mechanism_info("Repetition").parse_params({"rounds": 3})
    assert mechanism_info("Reputation").parse_params({"lookup_depth": 2}).max_recursion_depth == 3
