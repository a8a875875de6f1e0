"""The study registry is the one source of the workflow's facts: store inputs, report entries,
wildcard constraints and rules files are derived from it, independent of include or study
order (issue 20, the workflow items)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from coopeval.core.errors import ConfigError
from coopeval.core.schemas import SCHEMAS
from coopeval.pipeline import studies as registry
from coopeval.pipeline.config import load_config, validate_config
from coopeval.pipeline.plugins import load_plugins, plugin_modules
from coopeval.pipeline.studies import (
    SHARED_TABLES,
    STUDIES,
    all_cells,
    register_study,
    report_entries,
    rules_files,
    store_inputs,
    wildcard_constraints,
)

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def smoke():
    """The smoke config (config.yaml + smoke.yaml overlay) and its cells per study."""
    config = load_config([REPO / "config" / "config.yaml", REPO / "config" / "smoke.yaml"])
    return config, all_cells(config)


@pytest.fixture
def restore_registry():
    """Put the registry back as it was after a test that registers a study."""
    saved = dict(STUDIES)
    yield
    STUDIES.clear()
    STUDIES.update(saved)


def test_registry_order_and_facts():
    assert list(STUDIES) == ["coopeval", "gossip", "evolution"]
    assert [s.order for s in STUDIES.values()] == sorted(s.order for s in STUDIES.values())
    for study in STUDIES.values():
        assert study.title and study.default_enabled
        assert (REPO / study.rules_file).is_file()
    assert rules_files(REPO) == [str(REPO / "workflow" / "rules" / f"{n}.smk") for n in ("coopeval", "gossip", "evolution")]


def test_store_inputs_do_not_depend_on_study_order(smoke, monkeypatch):
    config, cells = smoke
    forward = store_inputs(config, cells)
    reversed_config = {**config, "studies": list(reversed(config["studies"]))}
    monkeypatch.setattr(registry, "STUDIES", dict(reversed(list(STUDIES.items()))))
    backward = store_inputs(reversed_config, dict(reversed(list(cells.items()))))
    assert backward == forward
    assert list(forward) == sorted(forward)


def test_store_inputs_of_the_smoke_config(smoke):
    config, cells = smoke
    inputs = store_inputs(config, cells)
    n = {name: len(c) for name, c in cells.items()}
    # 6 mechanisms x 6 games x 1 replicate; every gossip and evolution cell; the judge's gather
    assert n["coopeval"] == 36
    assert len(inputs["matchups"]) == len(inputs["scores"]) == len(inputs["metrics"]) == 36
    assert len(inputs["llm_calls"]) == n["coopeval"] + n["gossip"] + n["evolution"] + 1
    assert len(inputs["decisions"]) == n["coopeval"] + n["gossip"] + n["evolution"]
    assert inputs["judgements"] == ["results/judge/judgements.parquet"]
    assert inputs["design_quality"] == ["results/design_quality/design_quality.parquet"]
    cell = cells["coopeval"][0]
    assert f"results/evaluate/{cell['path']}/trajectory.parquet" in inputs["trajectories"]
    assert len(inputs["gossip_rounds"]) == n["gossip"] and len(inputs["evo_events"]) == n["evolution"]
    every_path = [p for paths in inputs.values() for p in paths]
    assert len(every_path) == len(set(every_path)), "a file feeds two tables"


def test_every_registered_table_has_one_source(smoke):
    """Each table of the schema registry is filled by exactly one study (its store inputs or
    its manifest), or is an engine table every study fills (SHARED_TABLES). The prompt
    sensitivity tables have inputs only with several prompt variants, so those are listed too."""
    config, cells = smoke
    variants = {**config, "prompt_variants": ["base", "p1"]}
    sources: dict[str, list[str]] = {}
    for study in STUDIES.values():
        declared = (set(study.store_inputs(config, cells[study.name])) | set(study.store_inputs(variants, cells[study.name]))
                    | {study.manifest_table})
        for table in declared:
            sources.setdefault(table, []).append(study.name)
    assert set(SCHEMAS) <= set(sources), f"no source for {sorted(set(SCHEMAS) - set(sources))}"
    assert set(sources) <= set(SCHEMAS)
    for table, studies in sources.items():
        if table in SHARED_TABLES:
            assert len(studies) >= 1
        else:
            assert len(studies) == 1, f"{table} declared by {studies}"
    assert sorted(sources["decisions"]) == ["coopeval", "evolution", "gossip"]


def test_a_table_declared_by_two_studies_is_refused(smoke, monkeypatch):
    config, cells = smoke
    gossip = STUDIES["gossip"]
    monkeypatch.setattr(gossip, "store_inputs", lambda config, cells: {"matchups": ["results/x.parquet"]})
    with pytest.raises(ValueError, match="store table 'matchups' is declared by the studies coopeval and gossip"):
        store_inputs(config, cells)


def test_report_entries_of_the_smoke_config(smoke):
    """Counts by hand for 6 mechanisms x 6 games, the 4 gossip testbeds and 3 evolution models."""
    config, _ = smoke
    entries = report_entries(config)
    by_category: dict[str, int] = {}
    for entry in entries.values():
        by_category[entry.category] = by_category.get(entry.category, 0) + 1
    assert by_category["Gossip"] == 6 + 4  # six figures, one Tables 1-2 page per testbed
    assert by_category["Evolution"] == 5 + 1 + 1 + 1  # figures, features (3 models), lineage, OES
    # CoopEval: core 1 + 72 (payoffs, replicator); analyses 5 + 12 + 2 design + 18 conditional
    # + 12 voting; run summary; table pages 36 per_game + 6 aggregate + 2 design_quality
    coopeval = sum(1 for e in entries.values() if e.category not in ("Gossip", "Evolution"))
    assert coopeval == 73 + 49 + 1 + 44
    assert entries["results/report/run_summary.html"].category == "Overview"
    assert entries["results/figures/gossip_ablations.svg"].subcategory == "Ablations"
    assert entries["results/figures/evolution/evo_lineage.html"].caption == "evolution/evo_lineage.rst"
    for entry in entries.values():
        assert (REPO / "workflow" / "report" / entry.caption).is_file(), entry.caption


def test_wildcard_constraints_match_every_cell_folder(smoke):
    _config, cells = smoke
    constraints = wildcard_constraints()
    assert constraints["cell"] == "[0-9a-f]{12}"
    pattern = re.compile(
        "coopeval/(?P<mechanism>{mechanism})/(?P<game>{game})/(?P<cell>{cell})".format(**constraints)
    )
    for cell in cells["coopeval"]:
        match = pattern.fullmatch(cell["path"])
        assert match and match["mechanism"] == cell["mechanism"] and match["game"] == cell["game"]
    assert not re.fullmatch(constraints["mechanism"], "Unknown")


def test_register_study_checks_the_contract(restore_registry):
    class Half:
        name = "half"

    with pytest.raises(TypeError, match="study 'half' lacks title, order"):
        register_study(Half())  # type: ignore[arg-type]

    class Impostor(type(STUDIES["gossip"])):  # type: ignore[misc]
        pass

    with pytest.raises(ValueError, match="a study named 'gossip' is already registered"):
        register_study(Impostor())


def test_plugins_are_imported_before_the_config_is_validated(tmp_path, monkeypatch, restore_registry):
    with pytest.raises(ConfigError, match="config plugins: 'toy' must be a list of importable module names"):
        plugin_modules({"plugins": "toy"})
    with pytest.raises(ConfigError, match=r"cannot import 'no_such_plugin_module'.*PYTHONPATH"):
        load_plugins({"plugins": ["no_such_plugin_module"]})
    (tmp_path / "late_plugin.py").write_text(
        "from coopeval.pipeline.studies import STUDIES, register_study\n"
        "class Late(type(STUDIES['evolution'])):\n"
        "    name = 'late'\n    order = 5\n"
        "    def config_schema(self):\n        return {'properties': {}, 'required': []}\n"
        "register_study(Late())\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    raw = yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))
    with pytest.raises(ConfigError, match="'late' is not allowed"):
        validate_config({**raw, "studies": ["late"]})
    config = validate_config({**raw, "plugins": ["late_plugin"], "studies": ["late"]})
    assert config["studies"] == ["late"] and config["plugins"] == ["late_plugin"]
    assert next(iter(STUDIES)) == "late"  # order 5 sorts before coopeval's 10


def test_no_script_hard_codes_an_output_folder():
    """Scripts read their folders from snakemake.output / params, never a literal results/."""
    scripts = sorted((REPO / "workflow" / "scripts").glob("*.py"))
    assert scripts
    offenders = [s.name for s in scripts if "results/" in s.read_text(encoding="utf-8")]
    assert offenders == []


def test_a_missing_rules_file_is_named(tmp_path, monkeypatch, restore_registry):
    evolution = STUDIES["evolution"]
    monkeypatch.setattr(evolution, "rules_file", "workflow/rules/nowhere.smk", raising=False)
    with pytest.raises(FileNotFoundError, match=r"study evolution: rules file .*nowhere.smk does not exist"):
        rules_files(REPO)


def test_clashing_wildcard_constraints_are_refused(monkeypatch):
    monkeypatch.setattr(STUDIES["gossip"], "wildcard_constraints", {"game": "[0-9]+"}, raising=False)
    with pytest.raises(ValueError, match="study gossip constrains the wildcard 'game' differently"):
        wildcard_constraints()
