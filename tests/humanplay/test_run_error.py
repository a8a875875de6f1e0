"""``play-human`` prints the run's own error line and what to do, not only "snakemake exited 1"
(issue 46, "play-human errors")."""

from __future__ import annotations

from pathlib import Path

from coopeval.humanplay.cli import _failure_message

FAILED_JOB = """\
Traceback (most recent call last):
  File "workflow/scripts/check_failures.py", line 9, in <module>
    check_failed_decisions(snakemake.input[0], snakemake.output[0], snakemake.params.max_failed)
coopeval.pipeline.checks.FailedDecisionsError: 2 decisions failed after all re-asks, more than max_failed_decisions = 0:
  Repetition/prisoners_dilemma matchup human/you|bot/tit-for-tat round 1 seat 0 (human/you, action): the percentages sum to 90
Their attempts are in the store (tables decisions, llm_calls). Raise max_failed_decisions to accept them, or set retry_failed: 1 to ask exactly those decisions again.
"""


def test_a_failed_job_is_named_by_its_own_error(tmp_path: Path) -> None:
    job_log = tmp_path / "check_failures.log"
    job_log.write_text(FAILED_JOB)
    run_log = tmp_path / "run.log"
    earlier = "an earlier run's lines\n"
    run_log.write_text(earlier + f"Error in rule check_failures:\n    jobid: 5\n    log: {job_log} (check log file(s) for error details)\n\nExiting because a job execution failed.\n")
    assert _failure_message(1, run_log, len(earlier)) == (
        "the run failed: 2 decisions failed after all re-asks, more than max_failed_decisions = 0: Repetition/prisoners_dilemma "
        "matchup human/you|bot/tit-for-tat round 1 seat 0 (human/you, action): the percentages sum to 90 Their attempts are in "
        "the store (tables decisions, llm_calls). Raise max_failed_decisions to accept them, or set retry_failed: 1 to ask "
        f"exactly those decisions again. (snakemake exited 1; log: {run_log}); fix this and run the same command again, answers given are kept"
    )


def test_an_invalid_config_is_named_by_its_message(tmp_path: Path) -> None:
    run_log = tmp_path / "run.log"
    run_log.write_text("WorkflowError:\ninvalid configuration:\n  agents[0].model: 'human/zoë' is not a seat name\n\n")
    message = _failure_message(1, run_log, 0)
    assert message.startswith("the run failed: invalid configuration: agents[0].model: 'human/zoë' is not a seat name (snakemake exited 1;")
