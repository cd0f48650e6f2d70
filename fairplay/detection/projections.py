"""The detection's projections in PostgreSQL, their rebuild, and the flags they raise.

Two doors, one computation (``scoring.score_match`` on a match's events and its settlement):

- ``project(game_id)``: the scoring task, once a match is settled. It scores the match outside
  any transaction (CPU only), then in one transaction records it (``ScoredMatch``), adds its
  counts to each ordered pair (``PairSignal``), judges the pairs of its accounts against the
  population (``stats``) and sends ``signals.flag_raised`` for each flag due, inside that
  transaction as the project's other signals are. A match already scored is left as it is, so
  a redelivered task changes nothing and raises nothing.
- ``rebuild()`` / ``differences()`` (``manage.py fairplay_signals``): every settled match
  scored again from the event log (or its archive) and the ledger alone; the scoring is
  deterministic (the hard bot's playouts are seeded by the game and seq, with no time cap), so
  a rebuild equals the live projection.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, Sum

from chips import selectors as chips_selectors
from fairplay.detection import signals
from fairplay.detection.flags import Flag
from fairplay.detection.models import PairSignal, RaisedFlag, ScoredMatch
from fairplay.detection.scoring import FIELDS, Counts, MatchSignals, score_match
from fairplay.detection.stats import Thresholds, Totals, chip_dumping, collusion, judge_pairs
from games import store
from games.models import Game

#: pg_advisory_xact_lock key of these projections: pair sums and flags are judged in order.
LOCK_KEY = 0x746F6E6769747352
#: Decisions and game ids a flag's evidence carries at most (the newest).
EVIDENCE_DECISIONS = 50
EVIDENCE_GAMES = 200


def thresholds() -> Thresholds:
    """The thresholds in force (settings ``TONGITS_FAIRPLAY_*``)."""
    return Thresholds(
        collusion=settings.TONGITS_FAIRPLAY_COLLUSION_THRESHOLD,
        chip_dumping=settings.TONGITS_FAIRPLAY_CHIP_DUMPING_THRESHOLD,
        dumping_min_chips=settings.TONGITS_FAIRPLAY_DUMPING_MIN_CHIPS,
        min_games=settings.TONGITS_FAIRPLAY_MIN_GAMES,
    )


# ---------------------------------------------------------------- scoring one match


@dataclass(frozen=True)
class Scored:
    accounts: list[int | None]
    signals: MatchSignals
    cpu_ms: float


def compute(game_id: uuid.UUID | str) -> Scored | None:
    """A settled match's signals from its events and its settlement (None: not a finished,
    settled match). Reads only; measures this thread's CPU."""
    started = time.thread_time()
    events = store.event_data(game_id)
    if not events or events[0].get("type") != "game_started":
        return None
    if not any(e.get("type") == "match_ended" for e in reversed(events)):
        return None
    first = events[0]
    accounts: list[int | None] = [
        None if s.get("kind") == "bot" else s.get("user_id") for s in first.get("seats", [])
    ]
    paid, buy_in = None, int(first.get("buy_in") or 0)
    if buy_in:
        booked = chips_selectors.settlement(game_id=game_id)
        if booked and booked.get("kind") == "payout":
            paid = booked.get("paid")
    found = score_match(str(game_id), events, accounts, paid, buy_in)
    return Scored(accounts, found, (time.thread_time() - started) * 1000.0)


def _lock() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [LOCK_KEY])


_UPSERT = """
INSERT INTO detection_pairsignal (a, b, {cols}) VALUES (%s, %s, {marks})
ON CONFLICT (a, b) DO UPDATE SET {sums}
"""


def _add_pairs(pairs: dict[tuple[int, int], Counts]) -> None:
    cols = ", ".join(FIELDS)
    marks = ", ".join(["%s"] * len(FIELDS))
    sums = ", ".join(f"{f} = detection_pairsignal.{f} + EXCLUDED.{f}" for f in FIELDS)
    sql = _UPSERT.format(cols=cols, marks=marks, sums=sums)
    with connection.cursor() as cursor:
        for (a, b), c in sorted(pairs.items()):
            cursor.execute(sql, [a, b, *(getattr(c, f) for f in FIELDS)])


def project(game_id: uuid.UUID | str) -> str:
    """Score a settled match into the projections and raise the flags due: ``scored``,
    ``already_scored``, ``not_settled``."""
    gid = store.parse_id(game_id)
    if ScoredMatch.objects.filter(pk=gid).exists():
        return "already_scored"
    if not Game.objects.filter(pk=gid, settled_at__isnull=False).exists():
        return "not_settled"
    scored = compute(gid)
    if scored is None:
        return "not_settled"
    with transaction.atomic():
        _lock()
        made = ScoredMatch.objects.filter(pk=gid).exists()
        if made:
            return "already_scored"
        ScoredMatch.objects.create(
            game_id=gid,
            accounts=scored.accounts,
            signals=scored.signals.to_json(),
            cpu_ms=scored.cpu_ms,
        )
        _add_pairs(scored.signals.pairs)
        people = [a for a in scored.accounts if a is not None]
        for flag in judge(people):
            signals.flag_raised.send(sender=Flag, flag=flag)
    return "scored"


# ---------------------------------------------------------------- judging pairs


def pair_counts(a: int, b: int) -> Counts:
    row = PairSignal.objects.filter(a=a, b=b).values(*FIELDS).first()
    return Counts(**row) if row else Counts()


def _totals(**where: Any) -> Totals:
    sums = PairSignal.objects.filter(**where).aggregate(
        pairs=Count("id"), **{f: Sum(f) for f in FIELDS}
    )
    pairs = sums.pop("pairs") or 0
    return Totals(Counts(**{f: int(v or 0) for f, v in sums.items()}), pairs)


def judge(accounts: Iterable[int]) -> list[Flag]:
    """The flags due for the pairs of these accounts that were not raised before (or whose
    score has since doubled), recorded as raised. The population's and each account's sums
    are read once per call."""
    limits = thresholds()
    people = sorted(set(accounts))
    if len(people) < 2:
        return []
    pop = _totals()
    own = {a: _totals(a=a) for a in people}
    pairs = {(a, b): pair_counts(a, b) for a in people for b in people if a != b}

    def pair_of(a: int, b: int) -> Counts:
        return pairs[(a, b)]

    def collusion_of(a: int, b: int) -> tuple[float, dict[str, Any]]:
        return collusion(pairs[(a, b)], pairs[(b, a)], own[a], own[b], pop)

    def dumping_of(feeder: int, beneficiary: int) -> tuple[float, dict[str, Any]]:
        return chip_dumping(pairs[(feeder, beneficiary)], pop)

    out = []
    for kind, accs, score, parts in judge_pairs(people, limits, collusion_of, dumping_of, pair_of):
        key = ",".join(str(a) for a in accs)
        before = RaisedFlag.objects.filter(kind=kind, accounts=key).first()
        if before is not None and score < 2 * before.score:
            continue
        RaisedFlag.objects.update_or_create(
            kind=kind, accounts=key, defaults={"score": score, "games": pair_of(*accs).games}
        )
        threshold = limits.collusion if kind == "collusion" else limits.chip_dumping
        out.append(_flag(kind, accs, score, threshold, parts))
    return out


def _flag(
    kind: str, accounts: tuple[int, ...], score: float, threshold: float, parts: dict[str, Any]
) -> Flag:
    """The flag with its evidence: the scores, the decisions behind them, the chip flow."""
    a, b = accounts
    together = (
        ScoredMatch.objects.filter(accounts__contains=[a])
        .filter(accounts__contains=[b])
        .order_by("-scored_at")
        .values_list("game_id", "signals")[:EVIDENCE_GAMES]
    )
    # collusion: both ways; chip dumping: the feeder's (b) decisions for the beneficiary (a)
    wanted = {(a, b), (b, a)} if kind == "collusion" else {(b, a)}
    decisions: list[dict[str, Any]] = []
    game_ids = []
    for game_id, data in together:
        game_ids.append(str(game_id))
        for d in data.get("decisions", []):
            if (d.get("by"), d.get("for")) in wanted and len(decisions) < EVIDENCE_DECISIONS:
                decisions.append(d)
    ab, ba = pair_counts(a, b), pair_counts(b, a)
    evidence = {
        "signals": parts,
        "decisions": decisions,
        "games_together": ab.games,
        "chip_flow": {f"{a}_to_{b}": ab.chips, f"{b}_to_{a}": ba.chips},
    }
    return Flag(kind, accounts, round(score, 3), threshold, evidence, tuple(reversed(game_ids)))


# ---------------------------------------------------------------- rebuild


def settled_matches() -> list[uuid.UUID]:
    """Every settled finished match, in match-end order."""
    settled = set(
        Game.objects.filter(status=Game.Status.FINISHED, settled_at__isnull=False).values_list(
            "pk", flat=True
        )
    )
    return [g for g in store.finished_matches() if g in settled]


@dataclass(frozen=True)
class Rebuilt:
    matches: dict[str, dict[str, Any]]
    pairs: dict[tuple[int, int], dict[str, int]]


def fresh(progress: Any = None) -> Rebuilt:
    """Every settled match scored again from the logs, and the pair sums (nothing written)."""
    games = settled_matches()
    matches: dict[str, dict[str, Any]] = {}
    pairs: dict[tuple[int, int], Counts] = {}
    for game_id in progress(games, len(games)) if progress else games:
        scored = compute(game_id)
        if scored is None:
            continue
        matches[str(game_id)] = scored.signals.to_json()
        for key, c in scored.signals.pairs.items():
            pairs.setdefault(key, Counts()).add(c)
    return Rebuilt(matches, {k: c.as_dict() for k, c in pairs.items()})


def live() -> Rebuilt:
    matches = {str(g): s for g, s in ScoredMatch.objects.values_list("game_id", "signals")}
    pairs = {(r["a"], r["b"]): {f: r[f] for f in FIELDS} for r in PairSignal.objects.values()}
    return Rebuilt(matches, pairs)


@dataclass(frozen=True)
class Difference:
    what: str  # "match" | "pair"
    key: str
    live: Any
    rebuilt: Any


def differences(progress: Any = None, want: Rebuilt | None = None) -> list[Difference]:
    """Where the live projections differ from a rebuild (empty: they are equal)."""
    want = want or fresh(progress)
    have = live()
    out = []
    for key in sorted(set(want.matches) | set(have.matches)):
        if want.matches.get(key) != have.matches.get(key):
            out.append(Difference("match", key, have.matches.get(key), want.matches.get(key)))
    for pair in sorted(set(want.pairs) | set(have.pairs)):
        if want.pairs.get(pair) != have.pairs.get(pair):
            key = f"{pair[0]}:{pair[1]}"
            out.append(Difference("pair", key, have.pairs.get(pair), want.pairs.get(pair)))
    return out


def rebuild(progress: Any = None) -> list[Difference]:
    """Replace the projections with a rebuild, in one transaction; what differed. Flags are
    not raised again (``RaisedFlag`` is kept)."""
    want = fresh(progress)
    found = differences(want=want)
    with transaction.atomic():
        _lock()
        kept = {str(g): ms for g, ms in ScoredMatch.objects.values_list("game_id", "cpu_ms")}
        accounts = {str(g): a for g, a in ScoredMatch.objects.values_list("game_id", "accounts")}
        ScoredMatch.objects.all().delete()
        PairSignal.objects.all().delete()
        for game_id, data in want.matches.items():
            ScoredMatch.objects.create(
                game_id=game_id,
                accounts=accounts.get(game_id) or _accounts(game_id),
                signals=data,
                cpu_ms=kept.get(game_id, 0.0),
            )
        _add_pairs({k: Counts(**v) for k, v in want.pairs.items()})
    return found


def _accounts(game_id: str) -> list[int | None]:
    first = store.event_data(game_id, upto=1)
    seats = first[0].get("seats", []) if first else []
    return [None if s.get("kind") == "bot" else s.get("user_id") for s in seats]
