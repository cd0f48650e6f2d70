"""``python -m cluster [run | status | failover [--force] | rejoin | rolling-restart [--migrate]
[--web-only] | backup [--type T] | backups | restore --target T [--into DIR] [--port N]]``
(see ``cluster``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cluster import backup, control, postgres, runner
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
    rolling = commands.add_parser(
        "rolling-restart", help="every web node, worker, scheduler started again, one at a time"
    )
    rolling.add_argument("--migrate", action="store_true", help="apply the migrations first")
    rolling.add_argument("--web-only", action="store_true", help="the web nodes alone")
    base = commands.add_parser("backup", help="a base backup of the primary (pgBackRest)")
    base.add_argument("--type", default="full", choices=("full", "diff", "incr"))
    commands.add_parser("backups", help="the backups the repository holds")
    restore = commands.add_parser("restore", help="a backup and WAL into a fresh directory")
    restore.add_argument(
        "--target", default="latest", help='"latest", or a time ("2026-12-06 15:04:05+00")'
    )
    restore.add_argument("--into", type=Path, help="default: var/restore/<the target's digits>")
    restore.add_argument("--port", type=int, default=0, help="default: the base port + 20")
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
        elif args.command == "rolling-restart":
            control.rolling_restart(layout, migrate=args.migrate, web_only=args.web_only)
        elif args.command == "backup":
            made = backup.backup(layout, postgres.server_user(), args.type)
            print(f"cluster: backup {made.label}: {backup.describe(made)}")
        elif args.command == "backups":
            for made in backup.backups(layout, postgres.server_user()):
                print(f"{made.label}  {backup.describe(made)}")
        elif args.command == "restore":
            return backup.restore_command(layout, args.target, args.into, args.port)
    except ClusterError as exc:
        print(f"cluster: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
