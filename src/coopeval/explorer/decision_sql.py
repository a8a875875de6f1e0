"""The one DuckDB query that writes every decision of a range of cells as page-ready JSON.

Each row of :func:`decision_query` is one decision in play order (cell, match-up, round, seat)
with the few fields the builder needs to split episodes, index decisions and list flags, plus
``payload``: the decision as the page reads it, serialised by DuckDB (``to_json``), so the builder
runs no Python per attempt or message. The JSON holds the ``decisions`` row's fields, its
``attempts`` from ``llm_calls`` in order (attempt 0 with the prompt messages as sent, a later
attempt with only the messages added to the first prompt: the rejected reply and the re-ask
text) and the judge's labels; the decision's own ``response`` is left out (null) when it is the
last attempt's reply, so a long reply is stored once. ``tokens`` are the distinct words of the
replies (for the run-wide search, :mod:`coopeval.explorer.search_index`).

Columns a store lacks (an older schema) are read as null; ``llm_calls`` or ``judgements``
missing gives decisions without attempts or labels.
"""

from __future__ import annotations

PRE_PLAY = "(pre-play)"
"""Episode label of a cell's decisions that belong to no match-up (CoopEval's design proposals)."""

LEFT_OUT = "[left out of this site: built with --no-raw-replies]"

DECISION_FIELDS = (
    "decision_id", "matchup_id", "match_id", "round", "seat", "agent", "kind", "status", "parsed", "draw",
    "action", "action_token", "points", "base_points", "mediated", "n_attempts", "response", "error",
    "finish_reason", "truncated",
)  # fmt: skip
ATTEMPT_FIELDS = (
    "attempt", "model", "response", "error", "finish_reason", "truncated", "prompt_tokens", "completion_tokens",
    "cost_usd", "latency_s", "cache_hit", "reasoning",
)  # fmt: skip
JUDGE_FIELDS = ("status", "labels", "confidence", "reasoning", "judge_model", "error")

WORD = r"[\pL\pN]{3,}"
"""A searchable word: three or more letters or digits (RE2 here, ``/[\\p{L}\\p{N}]{3,}/gu`` in the page)."""

RANGE = "cell_id BETWEEN $lo AND $hi"
"""The filter on a chunk of cells (consecutive in ``cell_id`` order, bound as ``lo`` and ``hi``)."""

MESSAGE = "STRUCT(role VARCHAR, content VARCHAR)"

MESSAGES = f"""CASE
    WHEN prompt IS NULL OR prompt = '' THEN []::{MESSAGE}[]
    WHEN json_valid(prompt) AND json_type(prompt) = 'ARRAY'
         AND coalesce(list_bool_and(list_transform(json_extract(prompt, '$[*]'), m -> json_type(m) = 'OBJECT')), true)
    THEN list_transform(json_extract(prompt, '$[*]'), m -> {{
        'role': coalesce(m ->> '$.role', ''),
        'content': CASE WHEN json_type(m, '$.content') = 'VARCHAR' THEN m ->> '$.content'
                        ELSE coalesce(json_extract(m, '$.content')::VARCHAR, 'null') END}}::{MESSAGE})
    ELSE [{{'role': 'user', 'content': prompt}}::{MESSAGE}]
END"""
"""The prompt column (a JSON list of chat messages) as a list of (role, content); a prompt that is
not such a list is one user message holding its text."""


def _left_out(expr: str, raw_replies: bool) -> str:
    """``expr``, or the left-out marker when it is a non-empty text and raw replies are left out."""
    return expr if raw_replies else f"CASE WHEN coalesce({expr}, '') <> '' THEN '{LEFT_OUT}' ELSE {expr} END"


def _col(name: str, have: set[str], alias: str = "") -> str:
    return f"{alias}{name}" if name in have else "NULL"


def _words(expr: str) -> str:
    return f"regexp_extract_all(lower(coalesce({expr}, '')), '{WORD}')"


def _attempts_cte(calls: set[str], raw_replies: bool) -> str:
    """``attempts``: decision_id → list of attempt structs, the last reply and the replies' words."""
    fields = {name: _col(name, calls) for name in ATTEMPT_FIELDS}
    fields["response"] = _left_out(fields["response"], raw_replies)
    if not raw_replies:
        fields["reasoning"] = "NULL::VARCHAR"
    shown = "CASE WHEN n = 1 OR NOT added THEN msgs ELSE list_slice(msgs, len(first_msgs) + 1, len(msgs)) END"
    if not raw_replies:
        shown = f"list_transform({shown}, m -> CASE WHEN m.role = 'assistant' THEN {{'role': 'assistant', 'content': '{LEFT_OUT}'}}::{MESSAGE} ELSE m END)"
    struct = ", ".join(f"'{k}': {k}" for k in ATTEMPT_FIELDS)
    words = f"list_distinct(flatten(list({_words('response')})))" if raw_replies else "[]::VARCHAR[]"
    kind = "coalesce(kind, '') <> 'judge'" if "kind" in calls else "true"
    return f"""
    calls AS (
        SELECT decision_id, {", ".join(f"{expr} AS {name}" for name, expr in fields.items())}, {MESSAGES} AS msgs
        FROM llm_calls WHERE {RANGE} AND {kind}),
    numbered AS (
        SELECT *, row_number() OVER w AS n, first_value(msgs) OVER w AS first_msgs FROM calls
        WINDOW w AS (PARTITION BY decision_id ORDER BY attempt ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)),
    flagged AS (SELECT *, n > 1 AND list_slice(msgs, 1, len(first_msgs)) = first_msgs AS added FROM numbered),
    attempts AS (
        SELECT decision_id, list({{{struct}, 'messages': {shown}, 'added': added}} ORDER BY n) AS attempts, {words} AS words
        FROM flagged GROUP BY decision_id),"""


def _judge_cte(judged: set[str], raw_replies: bool) -> str:
    fields = {name: _col(name, judged) for name in JUDGE_FIELDS}
    fields["reasoning"] = _left_out(fields["reasoning"], raw_replies)
    struct = ", ".join(f"'{k}': {v}" for k, v in fields.items())
    return f"""
    judged AS (SELECT decision_id, last({{{struct}}}) AS judge FROM judgements WHERE {RANGE} GROUP BY decision_id),"""


def decision_query(decisions: set[str], calls: set[str] | None, judged: set[str] | None, *, raw_replies: bool) -> str:
    """SQL giving the decisions of the cells ``$lo`` … ``$hi`` in play order.

    ``decisions``, ``calls`` and ``judged`` are the column names of ``decisions``, ``llm_calls``
    and ``judgements`` (None: the store lacks the table). Columns: ``cell_id``, ``matchup``
    (``matchup_id``, or :data:`PRE_PLAY`), ``decision_id``, ``round``, ``seat``, ``agent``,
    ``kind``, ``status``, ``n_attempts``, ``truncated``, ``payload`` (the decision as JSON,
    markup-free: ``<`` and ``>`` written ``\\u003c`` / ``\\u003e``) and ``words``.
    """
    ctes = _attempts_cte(calls, raw_replies) if calls is not None else ""
    ctes += _judge_cte(judged, raw_replies) if judged is not None else ""
    d = {name: _col(name, decisions, "d.") for name in DECISION_FIELDS}
    own = _left_out(d["response"], raw_replies)
    attempts = "coalesce(a.attempts, [])" if calls is not None else "[]"
    last = "a.attempts[-1].response" if calls is not None else "NULL"
    d["response"] = f"CASE WHEN len({attempts}) > 0 AND {last} IS NOT DISTINCT FROM {own} THEN NULL ELSE {own} END"
    struct = ", ".join(f"'{k}': {v}" for k, v in d.items())
    judge = "j.judge" if judged is not None else "NULL"
    words = _words(own) if raw_replies else "[]::VARCHAR[]"
    if calls is not None:
        words = f"list_distinct(list_concat({words}, coalesce(a.words, [])))"
    joins = ("LEFT JOIN attempts a USING (decision_id) " if calls is not None else "") + ("LEFT JOIN judged j USING (decision_id)" if judged is not None else "")
    payload = f"replace(replace(to_json({{{struct}, 'attempts': {attempts}, 'judge': {judge}}})::VARCHAR, '<', '\\u003c'), '>', '\\u003e')"
    with_ = f"WITH {ctes.rstrip(',')}" if ctes else ""
    return f"""{with_}
    SELECT d.cell_id, coalesce(nullif(d.matchup_id, ''), '{PRE_PLAY}') AS matchup, d.decision_id, {d["round"]} AS round, {d["seat"]} AS seat,
           d.agent, d.kind, d.status, {d["n_attempts"]} AS n_attempts, coalesce({d["truncated"]}, false) AS truncated, {payload} AS payload, {words} AS words
    FROM decisions d {joins}
    WHERE d.{RANGE}
    ORDER BY d.cell_id, d.matchup_id NULLS FIRST, round, seat, d.kind, d.decision_id"""
