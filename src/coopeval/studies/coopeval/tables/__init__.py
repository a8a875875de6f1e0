"""Result tables shared by imported reference data and our own runs (docs/protocol/tables.md, docs/protocol/design-checks.md#ns-wd)."""
