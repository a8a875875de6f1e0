"""``coopeval estimate``: the calls, tokens, dollars and wall time of a config before any paid
call (issue 24; docs/estimate.md).

Every cell of the config is played through the studies' own play code with recording
stand-ins answering for every language model (:mod:`.standin`), so the prompts are the ones a
run would render; the recorded ``llm_calls`` rows give decisions, calls and prompt sizes
(:mod:`.simulate`), which :mod:`.tokens` counts and prices and :mod:`.report` sums up, prints
and checks against the config's ``max_usd`` (:func:`.report.budget_error`).
"""
