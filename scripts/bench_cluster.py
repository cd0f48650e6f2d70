"""`make bench-cluster`: what the cluster's proxies and its synchronous standby cost, each
measured against its baseline in the same run, on the same load.

    .venv/bin/python scripts/bench_cluster.py              (`make bench-cluster`)
    .venv/bin/python scripts/bench_cluster.py --tables 30 --paced-tables 10 --rate 4 --pairs 3

It starts a cluster of its own (``python -m cluster --direct-node``: the two web nodes behind
HAProxy and pgbouncer, plus ``web-direct``, one node with as many web processes as the two
together, straight on the primary with its statements prepared, as `make run` serves), makes
the tables of three people of ``scripts/bench_api.py`` once, and then plays them in turns:

1. **HAProxy + pgbouncer against one node direct**: the same ``--tables`` flat out (as fast
   as the answers come: moves/s), then ``--paced-tables`` of them paced at ``--rate``
   commands a second a table (below saturation: what a request costs, POST p50/p99),
   alternating the two targets ``--pairs`` times;
2. **synchronous replication**: ``manage.py bench_moves`` (the write path in one thread,
   straight on the primary) with the standby synchronous, then with the primary committing
   alone (``synchronous_standby_names`` emptied and reloaded), ``--pairs`` times: a move's
   p50 each way, and the difference, the price of a commit that is on two servers;
3. the paced tables through HAProxy, synchronous and not, ``--pairs`` times.

Every run's workers, scheduler and both databases share the machine's cores with the load
generator: compare the figures of one run only. A benchmark, not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import bench_api  # noqa: E402
import psycopg  # noqa: E402

from cluster import harness, topology  # noqa: E402


def load(base: str, tables: list[tuple[str, list[str]]], seconds: float, rate: float) -> dict:
    """The tables played against ``base`` from two processes; moves/s, POST p50/p99."""
    procs = 2
    shares = [tables[i::procs] for i in range(procs)]
    context = multiprocessing.get_context("fork")
    with context.Pool(procs) as pool:
        results = pool.starmap(
            bench_api.drive,
            [(base, share, None, seconds, rate, 1000 * i) for i, share in enumerate(shares)],
        )
    elapsed = max(r[0] for r in results)
    posts = [t for r in results for t in r[3]]
    return {
        "moves": sum(r[1] for r in results) / elapsed,
        "p50": bench_api.pct(posts, 0.5),
        "p99": bench_api.pct(posts, 0.99),
        "refused": sum(r[2] for r in results),
    }


def row(label: str, figures: dict) -> str:
    return (
        f"{label:<40} {figures['moves']:8.1f} moves/s  POST p50 {figures['p50']:7.2f} ms  "
        f"p99 {figures['p99']:7.2f} ms  ({figures['refused']} refused)"
    )


def set_synchronous(layout: topology.Layout, primary: str, on: bool) -> None:
    with psycopg.connect(
        host="127.0.0.1", port=layout.port_of(primary), user="postgres", autocommit=True
    ) as conn:
        if on:
            conn.execute("ALTER SYSTEM RESET synchronous_standby_names")
        else:
            conn.execute("ALTER SYSTEM SET synchronous_standby_names = ''")
        conn.execute("SELECT pg_reload_conf()")
        time.sleep(0.5)
        shown = conn.execute("SHOW synchronous_standby_names").fetchone()[0]
    if bool(shown) != on:
        raise SystemExit(f"synchronous_standby_names is {shown!r}")


def bench_moves(layout: topology.Layout, primary: str, moves: int) -> tuple[float, float]:
    """``manage.py bench_moves`` on the primary, warm moves: (per second, p50 ms)."""
    env = {
        **os.environ,
        "DATABASE_URL": layout.direct_url(primary),
        "TONGITS_VAR_DIR": str(layout.app_var),
        "LOG_LEVEL": "WARNING",
    }
    done = subprocess.run(
        [sys.executable, "manage.py", "bench_moves", "--moves", str(moves), "--rounds", "5"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    match = re.search(r"^move\s+([\d.,]+)\s+([\d.]+)\s+([\d.]+)", done.stdout, re.MULTILINE)
    if match is None:
        raise SystemExit(f"bench_moves said:\n{done.stdout}\n{done.stderr}")
    return float(match.group(1).replace(",", "")), float(match.group(2))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--paced-tables", type=int, default=10)
    parser.add_argument("--rate", type=float, default=4.0, help="commands/s a table, paced")
    parser.add_argument("--moves", type=int, default=600, help="bench_moves' moves per kind")
    args = parser.parse_args()

    env = {
        "TONGITS_BOT_DELAY_SECONDS": "0",
        "TONGITS_NEXT_ROUND_DELAY_SECONDS": "0",
        "LOG_LEVEL": "WARNING",
        # The load comes from one address far faster than people play: counted, not refused.
        "TONGITS_THROTTLE_EXEMPT": "127.0.0.1,::1",
    }
    with tempfile.TemporaryDirectory(prefix="tongits-bench-cluster-") as tmp:
        cluster = harness.start(Path(tmp), env=env, args=["run", "--direct-node"])
        try:
            layout = cluster.layout
            primary = cluster.state().primary
            via = cluster.url
            direct = f"http://127.0.0.1:{layout.port_of(topology.DIRECT_NODE)}"
            print(
                f"cluster at {via} (2 nodes of {layout.node_concurrency} web processes, "
                f"pgbouncer, prepared statements off); {topology.DIRECT_NODE} at {direct} "
                f"({2 * layout.node_concurrency} web processes, PostgreSQL direct, prepared)",
                flush=True,
            )
            tag = f"{int(time.time()) % 100000}"
            names = [f"k{tag}t{t}s{s}" for t in range(args.tables) for s in range(3)]
            tokens = [bench_api.register(via, name) for name in names]
            tables = [
                (
                    bench_api.make_table(via, tokens[3 * t : 3 * t + 3], names[3 * t : 3 * t + 3]),
                    tokens[3 * t : 3 * t + 3],
                )
                for t in range(args.tables)
            ]
            print(f"{args.tables} tables of three people; {args.seconds:.0f} s a turn", flush=True)
            found: dict[str, list[dict]] = {}
            paced = tables[: args.paced_tables]
            loads = (
                (tables, 0.0, f"{len(tables)} flat out"),
                (paced, args.rate, f"{len(paced)} paced {args.rate:g}/s"),
            )
            for chosen, rate, kind in loads:
                for _ in range(args.pairs):
                    for label, base in (("haproxy + pgbouncer", via), ("one node direct", direct)):
                        figures = load(base, chosen, args.seconds, rate)
                        found.setdefault(f"{label}, {kind}", []).append(figures)
                        print(row(f"{label}, {kind}", figures), flush=True)
            print("synchronous replication, bench_moves straight on the primary:", flush=True)
            costs = []
            for _ in range(args.pairs):
                pair = {}
                for on in (True, False):
                    set_synchronous(layout, primary, on)
                    pair[on] = bench_moves(layout, primary, args.moves)
                    label = "synchronous standby" if on else "primary alone"
                    print(
                        f"  {label:<20} {pair[on][0]:8.1f} moves/s  p50 {pair[on][1]:.3f} ms",
                        flush=True,
                    )
                costs.append(pair[True][1] - pair[False][1])
            print(
                f"  a move's p50 with the synchronous standby: +{statistics.median(costs):.3f} ms "
                f"(pairs: {', '.join(f'{c:+.3f}' for c in costs)})",
                flush=True,
            )
            for _ in range(args.pairs):
                for on in (True, False):
                    set_synchronous(layout, primary, on)
                    label = f"haproxy, {'synchronous' if on else 'primary alone'}"
                    figures = load(via, paced, args.seconds, args.rate)
                    found.setdefault(label, []).append(figures)
                    print(row(f"{label}, {len(paced)} paced", figures), flush=True)
            set_synchronous(layout, primary, True)
            print("medians:", flush=True)
            for label, runs in found.items():
                print(
                    f"  {label:<44} {statistics.median(r['moves'] for r in runs):8.1f} moves/s, "
                    f"POST p50 {statistics.median(r['p50'] for r in runs):7.2f} ms, "
                    f"p99 {statistics.median(r['p99'] for r in runs):7.2f} ms",
                    flush=True,
                )
        finally:
            print(f"cluster stopped in {harness.stop(cluster):.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
