"""Result tables shared by imported reference data and our own runs (spec §7, §8)."""
