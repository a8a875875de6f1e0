"""Paired comparisons of two agents (or populations) with cluster-robust uncertainty.

Generic statistics only, no study knowledge: :mod:`.paired` (point estimate, cluster bootstrap
interval, sign-flip permutation p-value), :mod:`.power` (minimum detectable difference),
:mod:`.multiplicity` (Holm / Benjamini–Hochberg), :mod:`.letters` (rank tie groups as a compact
letter display) and :mod:`.record` (the ``comparisons`` table and the JSON object of
``coopeval compare``). Each study turns its own records into paired cluster contributions
(e.g. :mod:`coopeval.studies.coopeval.comparisons`). Formulas and sources: docs/comparisons.md.
"""
