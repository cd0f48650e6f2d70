"""Round scoring and match placements: the one implementation of docs/rules.md "How a round ends"
(who wins, who is burned) and "Payments", on plain ints and lists.

The engine (``engine._end_round``) and the hard bot's playouts (``bots.playout.Sim``) both call
these functions, so a rule about winners or chips cannot be right in one and wrong in the other.
Nothing here knows about states, events or masks: callers pass deadwood, hand sizes, who opened,
the Draw answers and the winner's aces and secret sets.
"""

from __future__ import annotations

from collections.abc import Sequence

from .ruleset import RuleSet

SEATS = 3


def draw_winner(
    caller: int, answers: Sequence[tuple[int, str]], deadwood: Sequence[int]
) -> tuple[int, bool]:
    """The winner of a Draw call and whether anyone challenged it.

    All fold: the caller. Otherwise the lowest deadwood among the caller and the challengers;
    a challenger wins a tie with the caller, and among tied challengers the first to answer
    (answers come in turn order after the caller).
    """
    challengers = [s for s, answer in answers if answer == "challenge"]
    if not challengers:
        return caller, False
    low = deadwood[caller]
    for s in challengers:
        if deadwood[s] < low:
            low = deadwood[s]
    for s in challengers:
        if deadwood[s] == low:
            return s, True
    return caller, True


def points_winner(
    rules: RuleSet,
    deadwood: Sequence[int],
    burned: Sequence[int],
    hand_counts: Sequence[int],
    last_drawer: int,
    dealer: int,
) -> int | None:
    """The winner of a stock out (or turn cap): lowest deadwood among the seats not burned, ties
    broken by ``rules.stock_out_tie``; ``None`` when every seat is burned."""
    candidates = [s for s in range(SEATS) if s not in burned]
    if not candidates:
        return None
    low = min(deadwood[s] for s in candidates)
    tied = [s for s in candidates if deadwood[s] == low]
    if len(tied) == 1:
        return tied[0]
    tie = rules.stock_out_tie
    if tie == "fewer_cards":
        fewest = min(hand_counts[s] for s in tied)
        tied = [s for s in tied if hand_counts[s] == fewest]
        start = dealer
    else:
        start = last_drawer if last_drawer >= 0 else dealer
        if tie == "last_drawer_loses":
            # the most recent drawer ranks after the others: the first other tied seat after it
            start = (start + 1) % SEATS
    for i in range(SEATS):
        s = (start + i) % SEATS
        if s in tied:
            return s
    return tied[0]  # unreachable: tied is never empty


def round_winner(
    rules: RuleSet,
    reason: str,
    tongits_seat: int | None,
    deadwood: Sequence[int],
    opened: Sequence[bool],
    hand_counts: Sequence[int],
    caller: int,
    answers: Sequence[tuple[int, str]],
    last_drawer: int,
    dealer: int,
) -> tuple[int | None, bool, tuple[int, ...]]:
    """``(winner, challenged, burned)`` of a round ending for ``reason`` ("tongits", "draw",
    "stock_out", "turn_cap"). Burned: the seats that never opened, other than the winner."""
    challenged = False
    if reason == "tongits":
        winner = tongits_seat
    elif reason == "draw":
        winner, challenged = draw_winner(caller, answers, deadwood)
    else:
        winner = None
    if rules.burning:
        burned = tuple(s for s in range(SEATS) if not opened[s] and s != winner)
    else:
        burned = ()
    if reason in ("stock_out", "turn_cap"):
        winner = points_winner(rules, deadwood, burned, hand_counts, last_drawer, dealer)
    return winner, challenged, burned


def round_payouts(
    rules: RuleSet,
    reason: str,
    winner: int | None,
    challenged: bool,
    answers: Sequence[tuple[int, str]],
    burned: Sequence[int],
    aces: int,
    secret_sets: int,
) -> tuple[int, int, int]:
    """Chips per seat (zero-sum) for a round won by ``winner``.

    Each loser pays ``tongits`` for a Tongits, ``draw_won_challenged`` for a challenged Draw
    (``draw_folded`` instead from a seat that folded, where set), else ``base``; plus
    ``per_ace`` per ace of the winner (``aces``: in its hand and in melds it owns),
    ``per_secret_set`` per secret set it owns, and ``burned_penalty`` from a burned loser; all
    of it times ``stake``. No winner: nobody pays.
    """
    if winner is None:
        return (0, 0, 0)
    if reason == "tongits":
        each = rules.tongits
    elif reason == "draw" and challenged:
        each = rules.draw_won_challenged
    else:
        each = rules.base
    extra = rules.per_ace * aces + rules.per_secret_set * secret_sets
    folded_pays = rules.draw_folded
    folders: tuple[int, ...] = ()
    if reason == "draw" and challenged and folded_pays is not None:
        folders = tuple(s for s, answer in answers if answer == "fold")
    stake = rules.stake
    payouts = [0, 0, 0]
    for s in range(SEATS):
        if s == winner:
            continue
        pay = (folded_pays if s in folders else each) + extra  # type: ignore[operator]
        if s in burned:
            pay += rules.burned_penalty
        pay *= stake
        payouts[s] -= pay
        payouts[winner] += pay
    return (payouts[0], payouts[1], payouts[2])


def placements(winner: int | None, round_wins: Sequence[int], chips: Sequence[int]) -> list[int]:
    """1 to 3 per seat in a finished match: the match winner first, the others by rounds won,
    then chips; equal seats share the better place. Without a winner, every seat by rounds
    won, then chips."""
    keys = list(zip(round_wins, chips, strict=True))
    places = []
    for seat, key in enumerate(keys):
        if seat == winner:
            places.append(1)
            continue
        others = [k for s, k in enumerate(keys) if s != seat and s != winner]
        places.append((1 if winner is None else 2) + sum(other > key for other in others))
    return places


def table_stakes(owed: Sequence[int], buy_ins: Sequence[int]) -> list[int]:
    """What each seat is paid (+) or pays (-) for a match played for table stakes.

    ``owed`` is the match's chip result by the rules (the sum of its rounds' payouts, zero-sum);
    ``buy_ins`` what each seat put in escrow. Nobody loses more than their buy-in: a loser pays
    ``min(owed, buy-in)``. When every loser covers what they owe, the winners get what they were
    owed; otherwise the winners share what the losers paid in proportion to what they were owed,
    in whole chips, the chips left by rounding down going one each to the winners in seat order.
    The answer always sums to zero, and no winner gets more than they were owed.
    """
    if len(owed) != len(buy_ins):
        raise ValueError("one buy-in per seat")
    if sum(owed) != 0:
        raise ValueError("a match's chip result sums to zero")
    if any(b < 0 for b in buy_ins):
        raise ValueError("buy-ins are not negative")
    paid = [0] * len(owed)
    pot = 0
    for seat, amount in enumerate(owed):
        if amount < 0:
            paid[seat] = -min(-amount, buy_ins[seat])
            pot -= paid[seat]
    winners = [seat for seat, amount in enumerate(owed) if amount > 0]
    due = sum(owed[seat] for seat in winners)
    if pot == due:
        for seat in winners:
            paid[seat] = owed[seat]
        return paid
    for seat in winners:
        paid[seat] = pot * owed[seat] // due
    left = pot - sum(paid[seat] for seat in winners)
    for seat in winners[:left]:
        paid[seat] += 1
    return paid
