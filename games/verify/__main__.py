"""``python -m games.verify export.json [--public-key HEX]``: verify an exported game, or an
exported tournament (its draw, matches, standings and payouts), offline.

Exit status 0 when the game is sound, 1 (naming the first failure) when it is not, 2 for a
usage error. Needs no Django and no database.
"""

from __future__ import annotations

import argparse
import json
import sys

from games.verify.core import key_id, verify_export
from games.verify.tournaments import TOURNAMENT_FORMAT, verify_tournament_export


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m games.verify",
        description="Check an exported Tongits game: chain, receipts, deals, legality, seal.",
    )
    parser.add_argument(
        "export",
        help="the JSON of GET /api/v1/games/{id}/export or of GET /api/v1/tournaments/{id}/export "
        "('-': stdin)",
    )
    parser.add_argument(
        "--public-key",
        action="append",
        default=[],
        metavar="HEX",
        help="an Ed25519 public key (64 hex digits, from GET /api/v1/keys) to trust for the "
        "seal; repeatable. Without it, the keys listed in the export are used.",
    )
    args = parser.parse_args(argv)
    try:
        if args.export == "-":
            doc = json.load(sys.stdin)
        else:
            with open(args.export, encoding="utf-8") as handle:
                doc = json.load(handle)
    except (OSError, ValueError) as exc:
        print(f"FAIL: cannot read {args.export}: {exc}")
        return 1
    keys = {key_id(k.lower()): k.lower() for k in args.public_key}
    if isinstance(doc, dict) and doc.get("format") == TOURNAMENT_FORMAT:
        failure = verify_tournament_export(doc, keys or None)
        if failure is not None:
            print(f"FAIL: {failure}")
            return 1
        tables = len(doc.get("tables", []))
        print(f"OK: tournament {doc.get('tournament')} is sound ({tables} tables, sealed)")
        return 0
    failure = verify_export(doc, keys or None)
    if failure is not None:
        print(f"FAIL: {failure}")
        return 1
    print(f"OK: game {doc.get('game')} is sound ({doc.get('version')} events, sealed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
