"""``coopeval play-human``: start a run with human seats and serve their front end (docs/human-play.md).

The run is the ordinary workflow (``snakemake --cores N TARGET --configfile …``) started as a
child process with ``COOPEVAL_HUMAN_SEATS`` pointing at the seats folder, its output going to
``<seats>/run.log``. Meanwhile the command serves the page on 127.0.0.1 (printing its address)
or, with ``--tty``, asks the questions in the terminal. A stopped run (Ctrl-C, a closed
terminal) is resumed by the same command: answers given are in the response cache and the seat
folder, so nobody is asked twice.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from coopeval.core.errors import CliError
from coopeval.humanplay.tether import STOP_WAIT_S, tethered

__all__ = ["add_play_human_parser", "run_error", "run_play_human"]


ENDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
"""Signals that end ``play-human`` (besides Ctrl-C): each stops the run it started first. A
SIGHUP ignored when ``play-human`` starts (``nohup``, ``trap '' HUP``) stays ignored: the
hang-up the user asked to survive does not end the run."""


def _ending_signals() -> tuple[signal.Signals, ...]:
    """:data:`ENDING_SIGNALS` this process acts on: SIGTERM always, SIGHUP unless ignored at start."""
    return tuple(sig for sig in ENDING_SIGNALS if sig != signal.SIGHUP or signal.getsignal(sig) != signal.SIG_IGN)


class _Ended(Exception):
    """``play-human`` got one of :data:`ENDING_SIGNALS`."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


_ENDING: list[int] = []
"""The signal that started this command's stop, once one has: a second signal arriving while the
stop runs (a SIGTERM right after a SIGHUP, a second Ctrl-C) does not interrupt it."""


def _raise_ended(signum: int, frame: object) -> None:
    if _ENDING:
        return
    _ENDING.append(signum)
    raise _Ended(signum)


def _raise_interrupt(signum: int, frame: object) -> None:
    if _ENDING:
        return
    _ENDING.append(signum)
    raise KeyboardInterrupt


def _ignore_signal(signum: int, frame: object) -> None:
    """A Python handler that does nothing: unlike ``SIG_IGN`` it also absorbs a signal that
    arrived just before it was set (CPython runs the handler in place when it gets there, where
    ``SIG_IGN`` would print "Signal N ignored due to race condition")."""


HELP = "play in a human seat: start the run and serve the seat page (or --tty) for the person"


def add_play_human_parser(subparsers: Any) -> None:
    """Register ``coopeval play-human``."""
    parser = subparsers.add_parser("play-human", help=HELP, description=HELP + " (docs/human-play.md).")
    parser.add_argument("--configfile", action="append", default=[], metavar="CONFIG",
                        help="config file(s) of the run, as for snakemake (one or more agents 'human/<name>')")
    parser.add_argument("targets", nargs="*", default=["all"], metavar="TARGET", help="snakemake targets (default: all)")
    parser.add_argument("--tty", action="store_true", help="ask in this terminal instead of serving the web page")
    parser.add_argument("--port", type=int, default=8765, help="port of the page on 127.0.0.1 (0: any free port; default 8765)")
    parser.add_argument("--cores", type=int, default=1, help="snakemake --cores (default 1)")
    parser.add_argument("--seats", metavar="DIR", help="seats folder (default COOPEVAL_HUMAN_SEATS, else results/.human)")
    parser.add_argument("--no-run", action="store_true",
                        help="start no run: only answer the seats of a run started otherwise with the same seats folder")
    parser.set_defaults(handler=run_play_human)


def _check_run(args: argparse.Namespace) -> None:
    """Refuse a run that cannot start (before anything is served or started)."""
    if not args.configfile:
        raise CliError("--configfile is missing: give the run's config (with an agent 'human/<name>'), or --no-run")
    for config in args.configfile:
        if not Path(config).is_file():
            raise CliError(f"--configfile {config}: no such file; give the path of a config YAML")
    if not Path("Snakefile").is_file():
        raise CliError("no Snakefile in the working directory: run play-human from the repository's root")


def _group_alive(pgid: int) -> bool:
    """Whether any process of process group ``pgid`` is alive."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _check_no_live_run(folder: Any, seats: Path) -> None:
    """Refuse to start a second run on a seats folder whose run is still alive (it holds the
    workflow's lock and asks the questions)."""
    status = folder.status()
    pid = status.get("pid")
    if status.get("state") == "running" and isinstance(pid, int) and _group_alive(pid):
        raise CliError(
            f"a run of the seats folder {seats} is still running (snakemake, process group {pid}, "
            f"holding the workflow's lock): stop it with 'kill -INT -{pid}' and run this again, "
            "or answer its questions with 'coopeval play-human --no-run'"
        )


def _snakemake(args: argparse.Namespace, *extra: str) -> list[str]:
    return [sys.executable, "-m", "snakemake", "--cores", str(args.cores), *args.targets, "--configfile", *args.configfile, *extra]


def _start_run(args: argparse.Namespace, seats: Path) -> subprocess.Popen[bytes]:
    log = (seats / "run.log").open("ab")
    env = {**os.environ, "COOPEVAL_HUMAN_SEATS": str(seats)}
    # A session of its own: the run's jobs (one may be waiting for the person) are stopped as a group;
    # tethered: a play-human killed with SIGKILL interrupts its run all the same.
    return subprocess.Popen(tethered(_snakemake(args)), stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)


def _stop_run(run: subprocess.Popen[bytes], args: argparse.Namespace, seats: Path) -> None:
    """Stop the run this command started and every job of it: Ctrl-C to its process group (the
    play job waiting for an answer stops at once; answers given are cached, snakemake releases its
    lock), then, if it has not stopped within :data:`STOP_WAIT_S` seconds, SIGTERM, then SIGKILL,
    after which the lock snakemake could not release is released (``snakemake --unlock``)."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(run.pid, sig)
        except ProcessLookupError:
            break
        try:
            run.wait(timeout=STOP_WAIT_S)
            if not _group_alive(run.pid):
                break
        except subprocess.TimeoutExpired:
            continue
    run.wait()
    if run.returncode == -signal.SIGKILL:
        with (seats / "run.log").open("ab") as log:
            subprocess.run(_snakemake(args, "--unlock"), stdout=log, stderr=subprocess.STDOUT, check=False)


LOCKED = "LockException"
"""What snakemake's log says when the working directory is locked by another snakemake."""


def _failure_message(status: int, log: Path, start: int) -> str:
    """The one line naming why the run failed (its lock taken by another snakemake, or see the log)."""
    try:
        with log.open("rb") as handle:
            handle.seek(start)
            written = handle.read().decode("utf-8", "replace")
    except OSError:
        written = ""
    if LOCKED in written or "Directory cannot be locked" in written:
        return (f"snakemake exited {status}: the working directory is locked by another snakemake run; stop that run "
                f"(or, if none is running, run 'snakemake --unlock') and run this again; log: {log}")
    reason = run_error(written)
    if reason:
        return f"the run failed: {reason} (snakemake exited {status}; log: {log}); fix this and run the same command again, answers given are kept"
    return f"snakemake exited {status}; log: {log}"


_EXCEPTION_LINE = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception): ")


def run_error(written: str) -> str:
    """The run's own error in one line, from what snakemake wrote (``written``): the message of a
    ``WorkflowError`` (an invalid config), or the exception that ended a failed job, read from the
    job's log (``log: <path>`` in snakemake's "Error in rule" block); ``""`` if neither is found."""
    lines = written.splitlines()
    for at, line in enumerate(lines):
        if line.strip() == "WorkflowError:":
            block = []
            for follow in lines[at + 1 :]:
                if not follow.strip():
                    break
                block.append(follow.strip())
            return " ".join(block)
    for at, line in enumerate(lines):
        if line.startswith("Error in rule"):
            for follow in lines[at + 1 : at + 30]:
                found = re.search(r"\blog: (\S+)", follow)
                if found is None:
                    continue
                try:
                    job = Path(found.group(1)).read_text(encoding="utf-8", errors="replace").splitlines()
                except OSError:
                    break
                starts = [i for i, text in enumerate(job) if _EXCEPTION_LINE.match(text)]
                if starts:
                    first = job[starts[-1]].split(": ", 1)[1]
                    return " ".join([first.strip(), *(text.strip() for text in job[starts[-1] + 1 :] if text.strip())])
                break
    return ""


MAX_PORT = 65535
"""The largest TCP port number."""


def _check_usage(args: argparse.Namespace) -> None:
    """Refuse option values no run or server can take (one line each, exit 2)."""
    if not 0 <= args.port <= MAX_PORT:
        raise CliError(f"--port {args.port}: give a TCP port from 0 to {MAX_PORT} (0: any free port)")
    if args.cores < 1:
        raise CliError(f"--cores {args.cores}: give 1 or more cores")


def run_play_human(args: argparse.Namespace) -> int:
    """Start the run (unless ``--no-run``), serve the front end until it ends; its exit code
    (0 finished; 1 the run failed or the terminal closed; 130 interrupted, 128 + the signal's
    number after SIGTERM or SIGHUP). Every way this command ends stops the run it started.

    With ``--no-run`` the command ends when the run's status (written by the ``play-human`` that
    started it) says it ended, or when every process group that asked a question it showed has
    ended and no question is open.
    """
    from coopeval.agents.human.seat import SeatFolder, seats_root
    from coopeval.humanplay.service import SeatDesk
    from coopeval.humanplay.tty import play_in_terminal
    from coopeval.humanplay.web import SeatServer

    _check_usage(args)
    if not args.no_run:
        _check_run(args)
    seats = Path(args.seats).resolve() if args.seats else seats_root().resolve()
    seats.mkdir(parents=True, exist_ok=True)
    folder = SeatFolder(seats)
    if not args.no_run:
        _check_no_live_run(folder, seats)
    server = None
    if not args.tty:
        try:
            server = SeatServer(seats, args.port).start()
        except OSError as exc:
            raise CliError(f"--port {args.port}: cannot listen on 127.0.0.1 ({exc}); give another port or 0") from exc
    run: subprocess.Popen[bytes] | None = None
    log = seats / "run.log"
    log_start = log.stat().st_size if log.exists() else 0
    desk = server.desk if server is not None else SeatDesk(seats)
    if args.no_run:
        shown = folder.status()
        if not (shown.get("state") == "running" and isinstance(shown.get("pid"), int) and _group_alive(shown["pid"])):
            folder.set_status({"state": "running", "message": "serving the seats of a run started otherwise"})
    earlier = folder.status()  # a status left by an earlier run does not end this session

    def finished() -> bool:
        if run is not None:
            return run.poll() is not None
        now = folder.status()
        if now != earlier and now.get("state") in ("finished", "failed", "ended"):
            return True
        # the processes that asked the questions shown have all ended, and nothing is open
        return bool(desk.asked_by) and not folder.pending() and not any(_group_alive(group) for group in desk.asked_by)

    def stop() -> None:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, *ENDING_SIGNALS):  # the stop itself is not interrupted
                signal.signal(sig, _ignore_signal)
        if run is not None:
            _stop_run(run, args, seats)
            folder.set_status({"state": "stopped", "message": "stopped; run play-human again to resume"})
        with contextlib.suppress(OSError):  # the terminal may be gone
            print("Stopped; answers given are kept (run the same command to resume).", file=sys.stderr)

    previous: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        _ENDING.clear()
        previous = {sig: signal.signal(sig, _raise_ended) for sig in _ending_signals()}
        # Ctrl-C stops this command even when it was started with SIGINT ignored (a background
        # job of a non-interactive shell); the run's processes get the default dispositions.
        previous[signal.SIGINT] = signal.signal(signal.SIGINT, _raise_interrupt)
    try:
        if not args.no_run:
            withdrawn = folder.withdraw_stale()
            run = _start_run(args, seats)
            folder.set_status({"state": "running", "message": f"log: {log}", "pid": run.pid})
            if withdrawn:
                print(f"Withdrew {withdrawn} question(s) of an earlier run; this run asks again what is still open.", flush=True)
        if server is None:
            for stream in (sys.stdout, sys.stderr):  # a path the terminal cannot show is not a crash
                reconfigure = getattr(stream, "reconfigure", None)
                if reconfigure is not None:
                    reconfigure(errors="replace")
            try:
                print(f"Seats: {seats}" + (f"; the run's log: {log}" if run else ""), flush=True)
                if sys.stdin is None or sys.stdout is None:  # a descriptor closed before the start: nothing can be typed or shown
                    print("--tty: the terminal's input or output is closed, so no answer can be typed; run play-human "
                          "again from a terminal (answers given are kept)", file=sys.stderr)
                    played = 1
                else:
                    played = play_in_terminal(desk, sys.stdin, sys.stdout, finished)
            except OSError:  # the terminal closed under us
                played = 1
            if played != 0:  # the input closed first
                stop()
                return 1
        else:
            print(f"Open {server.url} to play (the run waits for your answers; Ctrl-C stops and a rerun resumes).", flush=True)
            while not finished():
                time.sleep(0.5)
        if run is None:
            if folder.status() == earlier:
                folder.set_status({"state": "ended", "message": "the run's processes have ended; its log says how"})
            return 0
        status = run.wait()
        message = _failure_message(status, log, log_start) if status else f"snakemake exited 0; log: {log}"
        folder.set_status({"state": "finished" if status == 0 else "failed", "message": message})
        print(message, flush=True)
        return 0 if status == 0 else 1
    except KeyboardInterrupt:
        stop()
        return 130
    except _Ended as ended:
        stop()
        return 128 + ended.signum
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if server is not None:
            time.sleep(1.0)  # let the page fetch the final status once
            server.stop()
