"""The mechanism catalog: parameters, defaults, schema bounds and traits (docs/protocol/mechanisms.md#repetition, #reputation, #mediation, #contracting, docs/protocol/tournament.md#tournament-driver)."""

from __future__ import annotations

import re

import pytest

from coopeval.core.errors import ConfigError
from coopeval.pipeline.config import validate_config
from coopeval.studies.coopeval.mechanisms import get_mechanism, mechanism_class
from coopeval.studies.coopeval.mechanisms.catalog import (
    CONDITIONAL_MECHANISMS,
    DELEGATING_MECHANISMS,
    DESIGN_MECHANISMS,
    MECHANISM_LABELS,
    MECHANISM_ORDER,
    MECHANISMS,
    POPULATION_MECHANISMS,
    REFERENCE_STEMS,
    mechanism_info,
    mechanism_name_pattern,
)


def test_catalog_names_the_mechanisms_in_paper_order_and_builds_their_classes():
    assert MECHANISM_ORDER == (
        "NoMechanism", "Repetition", "ReputationFirstOrder", "Reputation", "Mediation", "Contracting",
    )
    for info in MECHANISMS:
        instance = get_mechanism(info.name)
        assert isinstance(instance, mechanism_class(info.name))
        assert instance.name == info.name and instance.info is info
    assert type(get_mechanism("Reputation")).__name__ == "Reputation"
    with pytest.raises(KeyError, match="unknown mechanism 'Gossip'; known mechanisms: NoMechanism, Repetition"):
        get_mechanism("Gossip")


def test_reference_stems_and_wildcard_pattern_come_from_the_entries():
    assert REFERENCE_STEMS == {
        "no_mechanism": "NoMechanism", "repetition": "Repetition", "reputation_first_order": "ReputationFirstOrder",
        "reputation": "Reputation", "mediation": "Mediation", "contracting": "Contracting",
    }
    pattern = mechanism_name_pattern()
    assert re.fullmatch(pattern, "ReputationFirstOrder") and re.fullmatch(pattern, "Contracting")
    assert not re.fullmatch(pattern, "Gossip") and not re.fullmatch(pattern, "ReputationX")


def test_traits():
    assert DESIGN_MECHANISMS == ("Mediation", "Contracting")
    assert DELEGATING_MECHANISMS == ("Mediation",)
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


def test_every_declared_prompt_prefix_has_its_templates():
    from pathlib import Path

    prompts = Path(__file__).resolve().parents[4] / "resources" / "prompts"
    for info in MECHANISMS:
        if not info.prompt_prefix:
            continue
        names = {p.stem for p in prompts.glob(f"{info.prompt_prefix}*.txt")}
        assert names, info.name
        if info.has_designs:  # the design-vote protocol renders <prefix>_design / _rules / _vote
            assert {f"{info.prompt_prefix}_{part}" for part in ("design", "rules", "vote")} <= names
    assert [m.prompt_prefix for m in MECHANISMS] == [
        "", "repetition", "reputation", "reputation", "mediation", "contracting",
    ]
