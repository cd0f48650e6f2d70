"""Colluding bots open a case, honest ones do not, at the simulation's seed: the flags the
simulation raises, named by real accounts, go through the real ``flag_raised`` receiver into
the database, as the worker's do."""

from __future__ import annotations

import pytest

from chips import services as chips
from fairplay.detection import simulate
from fairplay.detection.flags import Flag
from fairplay.detection.signals import flag_raised
from fairplay.detection.stats import Thresholds
from fairplay.models import Case

pytestmark = pytest.mark.django_db

HONEST, COLLUDING, FEEDERS, THIRDS = 8, 3, 2, 20


def test_the_simulations_flags_open_cases_for_the_colluders_and_none_for_honest_accounts(
    user_factory,
):
    users = [user_factory() for _ in range(THIRDS + 2 * (HONEST + COLLUDING + FEEDERS))]
    run, series, _ = simulate.simulate(
        seed=1,
        honest_pairs=HONEST,
        colluding_pairs=COLLUDING,
        feeders=FEEDERS,
        matches=12,
        checkpoints=(12,),
        thresholds=Thresholds(),
        thirds=THIRDS,
        account_ids=sorted(u.pk for u in users),
    )
    assert run.flags, "the simulation flagged nothing at its seed"
    for flag in run.flags:
        flag_raised.send(sender=Flag, flag=flag)

    cases = {
        (case.kind, frozenset(case.members.values_list("user_id", flat=True)))
        for case in Case.objects.filter(status="open")
    }
    colluders = [s for s in series if s.kind == "colluding"]
    assert len(colluders) == COLLUDING
    for pair in colluders:
        assert ("collusion", frozenset((pair.a, pair.b))) in cases, (pair, cases)
        assert chips.holding(pair.a) and chips.holding(pair.b)
    # The feeders (s.a) dumped to their mains; everyone else played honestly.
    cheats = {s.a for s in series if s.kind in ("resigner", "loser")}
    cheats |= {account for s in colluders for account in (s.a, s.b)}
    honest_cases = [(kind, members) for kind, members in cases if not members & cheats]
    assert honest_cases == []
    honest_pairs = [s for s in series if s.kind == "honest"]
    assert len(honest_pairs) == HONEST
    for pair in honest_pairs:
        assert not chips.holding(pair.a) and not chips.holding(pair.b)
    for flag in run.flags:  # each flag is in a case of its kind and accounts
        assert (flag.kind, frozenset(flag.accounts)) in cases
