"""Import adapter for the authors' released CoopEval data and the ``reproduce`` command.

* :mod:`coopeval.studies.coopeval.reference.importer` — read run folders into our tables (docs/protocol/reference-data.md#layout);
* :mod:`coopeval.studies.coopeval.reference.payoffs` — read one ``matchup_payoffs.json`` into
  evaluation inputs (observations, reputation scores);
* :mod:`coopeval.studies.coopeval.reference.agent_types` — agent type strings of the released data;
* :mod:`coopeval.studies.coopeval.reference.store` — write frames atomically into a DuckDB file;
* :mod:`coopeval.studies.coopeval.reference.cli` — ``coopeval reproduce DATA_DIR --out OUT_DIR``.
"""
