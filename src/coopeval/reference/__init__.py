"""Import adapter for the authors' released CoopEval data and the ``reproduce`` command.

* :mod:`coopeval.reference.importer` — read run folders into our tables (spec §10);
* :mod:`coopeval.reference.store` — write frames atomically into a DuckDB file;
* :mod:`coopeval.reference.cli` — ``coopeval reproduce DATA_DIR --out OUT_DIR``.
"""
