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
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from coopeval.core.errors import CliError

__all__ = ["add_play_human_parser", "run_play_human"]

STOP_WAIT_S = 60.0
"""How long a stopped run may take to end after Ctrl-C before it gets SIGTERM, seconds."""

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


def _start_run(args: argparse.Namespace, seats: Path) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "snakemake", "--cores", str(args.cores), *args.targets, "--configfile", *args.configfile]
    log = (seats / "run.log").open("ab")
    env = {**os.environ, "COOPEVAL_HUMAN_SEATS": str(seats)}
    # A session of its own: the run's jobs (one may be waiting for the person) are stopped as a group.
    return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)


def _stop_run(run: subprocess.Popen[bytes]) -> None:
    """Stop the run this command started and every job of it: Ctrl-C to its process group (the
    play job waiting for an answer stops at once; answers given are cached), then, if it has not
    stopped within :data:`STOP_WAIT_S` seconds, SIGTERM."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            os.killpg(run.pid, sig)
        except ProcessLookupError:
            return
        try:
            run.wait(timeout=STOP_WAIT_S)
            return
        except subprocess.TimeoutExpired:
            continue
    run.wait()


def run_play_human(args: argparse.Namespace) -> int:
    """Start the run (unless ``--no-run``), serve the front end until it ends; its exit code
    (0 finished; 1 the run failed or the terminal closed; 130 interrupted)."""
    from coopeval.agents.human.seat import SeatFolder, seats_root
    from coopeval.humanplay.service import SeatDesk
    from coopeval.humanplay.tty import play_in_terminal
    from coopeval.humanplay.web import SeatServer

    if not args.no_run:
        _check_run(args)
    seats = Path(args.seats).resolve() if args.seats else seats_root().resolve()
    seats.mkdir(parents=True, exist_ok=True)
    folder = SeatFolder(seats)
    server = None
    if not args.tty:
        try:
            server = SeatServer(seats, args.port).start()
        except OSError as exc:
            raise CliError(f"--port {args.port}: cannot listen on 127.0.0.1 ({exc}); give another port or 0") from exc
    run: subprocess.Popen[bytes] | None = None
    earlier = folder.status()  # a status left by an earlier run does not end this session

    def finished() -> bool:
        if run is None:
            status = folder.status()
            return status != earlier and status.get("state") in ("finished", "failed")
        return run.poll() is not None

    def stop() -> None:
        if run is not None:
            _stop_run(run)
            folder.set_status({"state": "stopped", "message": "stopped; run play-human again to resume"})
        print("Stopped; answers given are kept (run the same command to resume).", file=sys.stderr)

    try:
        if not args.no_run:
            run = _start_run(args, seats)
            folder.set_status({"state": "running", "message": f"log: {seats / 'run.log'}"})
        if server is None:
            print(f"Seats: {seats}" + (f"; the run's log: {seats / 'run.log'}" if run else ""), flush=True)
            if play_in_terminal(SeatDesk(seats), sys.stdin, sys.stdout, finished) != 0:  # the input closed first
                stop()
                return 1
        else:
            print(f"Open {server.url} to play (the run waits for your answers; Ctrl-C stops and a rerun resumes).", flush=True)
            while not finished():
                time.sleep(0.5)
        if run is None:
            return 0
        status = run.wait()
        message = f"snakemake exited {status}; log: {seats / 'run.log'}"
        folder.set_status({"state": "finished" if status == 0 else "failed", "message": message})
        print(message, flush=True)
        return 0 if status == 0 else 1
    except KeyboardInterrupt:
        stop()
        return 130
    finally:
        if server is not None:
            time.sleep(1.0)  # let the page fetch the final status once
            server.stop()
