"""Scripts take their folders from the rule's declared outputs (coopeval.pipeline.outputs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from coopeval.pipeline.outputs import output_dir


def test_the_folder_shared_by_every_output():
    assert output_dir(["out/figures/a.png", "out/figures/a.svg", "out/figures/./b.html"]) == Path("out/figures")
    assert output_dir("out/report/page.html") == Path("out/report")


def test_outputs_in_several_folders_or_none_are_refused():
    with pytest.raises(ValueError, match=r"several folders \(out/report, out/tables\)"):
        output_dir(["out/tables/t.csv", "out/report/t.html"])
    with pytest.raises(ValueError, match="declares no output"):
        output_dir([])
