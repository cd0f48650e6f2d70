"""``python -m cluster [run | status | failover [--force] | rejoin]`` (see ``cluster``)."""

from __future__ import annotations

import argparse
import sys

from cluster import control, runner
from cluster.postgres import ClusterError
from cluster.topology import Layout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cluster", description=__doc__)
    commands = parser.add_subparsers(dest="command")
    run = commands.add_parser("run", help="start the cluster in the foreground (the default)")
    run.add_argument(
        "--direct-node",
        action="store_true",
        help="also a web node straight on PostgreSQL (the benchmark's one-node baseline)",
    )
    commands.add_parser("status", help="each component: state, pid, port, role")
    failover = commands.add_parser("failover", help="promote the standby; fence the old primary")
    failover.add_argument("--force", action="store_true", help="stop a primary that still runs")
    commands.add_parser("rejoin", help="the fenced old primary back as the standby")
    args = parser.parse_args(argv)
    layout = Layout.from_env()
    try:
        if args.command in (None, "run"):
            return runner.run(layout, direct_node=getattr(args, "direct_node", False))
        if args.command == "status":
            return control.status(layout)
        if args.command == "failover":
            control.failover(layout, force=args.force)
        elif args.command == "rejoin":
            control.rejoin(layout)
    except ClusterError as exc:
        print(f"cluster: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
