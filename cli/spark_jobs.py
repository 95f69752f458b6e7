"""``kassign replay | simulate | report``: the pipeline's subcommands for ``kassign.cli.main``.

``cli/main.py`` lists this module in ``COMMAND_MODULES`` and calls ``add_parser(subparsers)``.
Spark and matplotlib are imported only when a pipeline command runs, so ``kassign serve`` does
not pay for them. Each command reports its progress on stderr from its own start, Spark's start-up
included, and is never silent for more than three seconds (``kassign.pipeline.progress``).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from kassign.cli import configs

if TYPE_CHECKING:
    from kassign.pipeline.progress import Progress
    from pyspark.sql import SparkSession

__all__ = ["add_parser", "command_spark", "run_replay", "run_report", "run_simulate"]

log = logging.getLogger("kassign.pipeline")
_LOADING = "loading the pipeline"
"""What a command says before Spark starts: PySpark's imports take a second or more."""


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the three pipeline subcommands."""
    replay = subparsers.add_parser(
        "replay", help="replay recorded requests through a what-if grid (Spark)"
    )
    replay.add_argument(
        "input", metavar="INPUT", help="JSON Lines file or folder, or Parquet folder"
    )
    replay.add_argument("output", metavar="OUTPUT", help="Parquet folder to write")
    replay.add_argument(
        "--grid", metavar="GRID.json", help="configurations (default: each request's own)"
    )
    replay.add_argument("--master", metavar="URL", help="Spark master (default local[*])")
    configs.add_config_option(replay)
    replay.set_defaults(func=run_replay)

    simulate = subparsers.add_parser(
        "simulate", help="simulate random groups rebalancing to convergence (Spark)"
    )
    simulate.add_argument("output", metavar="OUTPUT", help="Parquet folder to write")
    simulate.add_argument("--groups", type=int, required=True, metavar="N")
    simulate.add_argument("--seed", type=int, required=True, metavar="S")
    simulate.add_argument(
        "--rounds", type=int, default=10, metavar="R", help="rebalances per phase at most"
    )
    simulate.add_argument(
        "--events", metavar="EVENTS.json", help="events applied in order, one phase each"
    )
    simulate.add_argument(
        "--grid", metavar="GRID.json", help="configurations (default: the generated one)"
    )
    simulate.add_argument(
        "--spec", metavar="SPEC.json", help="distributions of the generated groups"
    )
    simulate.add_argument(
        "--loads",
        metavar="zipf:S",
        help="groups whose partitions (tasks) carry Zipf loads (exponent S): count against "
        "load balancing per round (issue 25)",
    )
    simulate.add_argument(
        "--kind",
        choices=("consumer", "streams"),
        help="with --loads: consumer groups (default) or Kafka Streams groups",
    )
    simulate.add_argument(
        "--drift",
        type=float,
        metavar="F",
        help="with --loads: each round, each load times a factor in [1-F, 1+F] (default 0)",
    )
    simulate.add_argument("--master", metavar="URL", help="Spark master (default local[*])")
    configs.add_config_option(simulate)
    simulate.set_defaults(func=run_simulate)

    report = subparsers.add_parser(
        "report", help="HTML report with plots from replay or simulate output"
    )
    report.add_argument("input", metavar="INPUT", help="replay or simulate output (Parquet folder)")
    report.add_argument("report_dir", metavar="REPORT_DIR")
    report.set_defaults(func=run_report)


def _finish(name: str, started: float, summary: dict[str, Any]) -> int:
    log.info(
        "%s finished in %.1fs: %s",
        name,
        time.monotonic() - started,
        {k: v for k, v in summary.items() if not isinstance(v, dict | list)},
    )
    return 0


def _bad_file(exc: Exception) -> int:
    log.error("kassign: %s", exc)
    return 2


@contextlib.contextmanager
def command_spark(master: str | None, name: str, progress: Progress) -> Iterator[SparkSession]:
    """A session for one command, its Spark tasks told to the command's ``progress``; stopped
    afterwards unless it was already running (tests)."""
    from kassign.pipeline.progress import spark_tasks
    from kassign.pipeline.spark import session
    from pyspark.sql import SparkSession

    progress.doing = "starting Spark"
    running = SparkSession.getActiveSession()
    spark = session(master, app_name=f"kassign-{name}")
    try:
        progress.follow(spark_tasks(spark), doing="waiting for Spark tasks")
        yield spark
    finally:
        if running is None:
            progress.doing = "stopping Spark"
            spark.stop()


def run_replay(args: argparse.Namespace) -> int:
    started = time.monotonic()
    from kassign.pipeline.progress import command_progress

    # The first line before the pipeline's imports (PySpark's take seconds on a loaded machine).
    with command_progress("replay", started=started, doing=_LOADING) as progress:
        from kassign.pipeline.grid import load_grid, with_overrides
        from kassign.pipeline.replay import replay, request_files

        try:
            grid = with_overrides(load_grid(args.grid), configs.config_pairs(args.config))
            request_files(args.input)
        except (ValueError, KeyError, TypeError, FileNotFoundError) as exc:
            return _bad_file(exc)
        with command_spark(args.master, "replay", progress) as spark:
            summary = replay(spark, args.input, args.output, grid)
    return _finish("replay", started, summary)


def run_simulate(args: argparse.Namespace) -> int:
    started = time.monotonic()
    from kassign.pipeline.progress import command_progress

    if args.groups < 1 or args.rounds < 1:
        log.error("--groups and --rounds must be at least 1")
        return 2
    if args.loads is None and args.drift is not None:
        log.error("--drift is for --loads: the drift of partition loads")
        return 2
    if args.loads is None and args.kind is not None:
        log.error("--kind is for --loads: the kind of groups whose loads are simulated")
        return 2
    if args.loads is not None and (args.events or args.grid or args.config):
        log.error("--loads runs its own rounds: --events, --grid and --config are not read with it")
        return 2
    with command_progress("simulate", started=started, doing=_LOADING) as progress:
        from kassign.pipeline.events import load_events
        from kassign.pipeline.generate import load_spec
        from kassign.pipeline.grid import load_grid, with_overrides
        from kassign.pipeline.load_rows import check_sizes
        from kassign.pipeline.loads import load_model
        from kassign.pipeline.simulate import GENERATED, simulate

        try:
            grid = load_grid(args.grid) if args.grid else (GENERATED,)
            grid = with_overrides(grid, configs.config_pairs(args.config))
            events, spec = load_events(args.events), load_spec(args.spec)
            model = None if args.loads is None else load_model(args.loads, args.drift or 0.0)
            if model is not None:
                check_sizes(spec)
        except (ValueError, KeyError, TypeError) as exc:
            return _bad_file(exc)
        with command_spark(args.master, "simulate", progress) as spark:
            summary = simulate(
                spark,
                args.output,
                groups=args.groups,
                seed=args.seed,
                spec=spec,
                grid=grid,
                events=events,
                rounds=args.rounds,
                loads=model,
                kind=args.kind or "consumer",
            )
    return _finish("simulate", started, summary)


def run_report(args: argparse.Namespace) -> int:
    started = time.monotonic()
    from kassign.pipeline.progress import command_progress
    from kassign.pipeline.report import build_report

    with command_progress("report", started=started, doing="writing the report"):
        index = build_report(args.input, args.report_dir)
    log.info("report written: %s", index)
    return 0
