"""The CoopEval study (arXiv 2604.15267); see :mod:`.study`."""

STUDY_NAME = "coopeval"
"""The study's name: its Snakemake target, ``results/play/coopeval/`` and the ``study`` value of
its rows in the shared ``decisions`` and ``llm_calls`` tables."""
