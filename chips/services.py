"""Writes of the chips economy (services write, selectors read): grants, the daily bonus, staff
adjustments, a table's buy-ins, payout and refund, and a deleted account's chips.

Every write is one ``ledger.post`` with a key derived from its cause and what it is about, so
each cause posts once however often it is asked for:

    signup_grant:<user>               daily_bonus:<user>:<YYYY-MM-DD>
    buy_in:<game>   payout:<game>     refund:<game>     service_fee:<game>
    adjustment:<staff>:<key>          account_deleted:<user>[:<game>]
    tournament_entry:<registration>   tournament_refund:<registration>
    tournament_prize:<tournament>:<place>    season_reward:<room>:<week>:<user>
    purchase:<store>:<reference>      store_refund:<store>:<reference>
    debt_repaid:<entry>
    held_winnings:<game>:<user>       hold_released:<case>:<user>
    held_winnings:tournament_prize:<tournament>:<place>
    held_winnings:season_reward:<room>:<week>:<user>
    confiscation:<case>:<user>        compensation:<case>:<user>

While fair play holds a player's winnings (an open case), every credit of chips won (a payout's
winnings, a tournament prize, a leaderboard reward) moves on at once to their held account,
where nothing can spend them; the case's end releases them to the wallet or confiscates them
to the house. Grants, bonuses, refunds of their own stakes, purchases, staff adjustments and
compensation are not winnings and are never held.

A store refund of chips already spent leaves a debt (the player's debt account, below zero);
every later credit to the wallet (a purchase, a payout, a prize, a reward, a staff grant)
repays it first, as a
``debt_repaid`` entry right after it, and while anything is owed the player can neither buy in,
queue nor claim a bonus (``ChipsOwed``).

Services raise domain errors (``chips.errors``); they know no HTTP and no game: the games'
lobby and settlement hand in seats as user ids (None for a bot: the house plays it).
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from chips import ledger
from chips.errors import (
    AdjustmentKeyReused,
    AlreadyClaimed,
    ChipsOwed,
    InsufficientChips,
    InvalidAdjustment,
    NoBonus,
    WalletClosed,
)
from chips.models import Account, Balance, Entry

Cause = Entry.Cause

#: A seat of a table, as the ledger sees it: the user id of a person, None for a bot.
SeatOwner = int | None


# ---------------------------------------------------------------- wallets and grants


def open_wallet(user_id: int) -> int:
    """The user's wallet, opened with the sign-up grant (``TONGITS_SIGNUP_GRANT`` from the
    house) the first time it is needed: at registration, or, for an account older than the
    ledger, at its first read or buy-in. Idempotent."""
    with transaction.atomic():
        wallet, opened = ledger.ensure_wallet(user_id)
        grant = settings.TONGITS_SIGNUP_GRANT
        if opened and grant > 0:
            ledger.post(
                cause=Cause.SIGNUP_GRANT,
                key=f"signup_grant:{user_id}",
                postings={ledger.house_id(): -grant, wallet: grant},
                user_id=user_id,
            )
    return wallet


def bonus_day(now: datetime) -> date:
    """The UTC day a daily bonus claimed at ``now`` belongs to."""
    return now.astimezone(UTC).date()


def next_bonus_at(now: datetime) -> datetime:
    """The next UTC midnight: when the next daily bonus may be claimed."""
    return datetime.combine(bonus_day(now) + timedelta(days=1), time(0), tzinfo=UTC)


def daily_bonus_claim(*, user_id: int, now: datetime | None = None) -> ledger.Posted:
    """Today's bonus (``TONGITS_DAILY_BONUS`` from the house), once per UTC day per account.

    A second claim the same day raises ``AlreadyClaimed`` with the time of the next one; two
    claims at once post once (the day is in the entry's key).
    """
    amount = settings.TONGITS_DAILY_BONUS
    if amount <= 0:
        raise NoBonus()
    now = now or timezone.now()
    day = bonus_day(now)
    with transaction.atomic():
        wallet = open_wallet(user_id)
        if Account.objects.filter(pk=wallet, closed_at__isnull=False).exists():
            raise WalletClosed()
        check_not_owing(user_id)
        posted = ledger.post(
            cause=Cause.DAILY_BONUS,
            key=f"daily_bonus:{user_id}:{day.isoformat()}",
            postings={ledger.house_id(): -amount, wallet: amount},
            user_id=user_id,
            data={"day": day.isoformat()},
            bonus_day={wallet: day},
            now=now,
        )
    if not posted.created:
        raise AlreadyClaimed(next_bonus_at(now))
    return posted


def adjust(
    *,
    user_id: int,
    amount: int,
    reason: str,
    staff_id: int | None,
    key: str | None = None,
) -> tuple[ledger.Posted, int]:
    """A staff correction or grant: ``amount`` chips into (+) or out of (-) the user's wallet,
    against the house, with a reason. Never an edit: a wrong adjustment is undone by another.

    ``key`` (a client's Idempotency-Key) makes a retry return the first one; the same key with
    another amount, user or reason is ``AdjustmentKeyReused``. A debit the wallet cannot cover
    is ``InsufficientChips``. Returns the entry and the wallet's balance after it.
    """
    reason = (reason or "").strip()
    if isinstance(amount, bool) or not isinstance(amount, int) or amount == 0 or not reason:
        raise InvalidAdjustment()
    entry_key = f"adjustment:{staff_id}:{key}" if key else f"adjustment:{uuid.uuid4().hex}"
    with transaction.atomic():
        wallet = open_wallet(user_id)
        if Account.objects.filter(pk=wallet, closed_at__isnull=False).exists():
            raise WalletClosed()
        try:
            posted = ledger.post(
                cause=Cause.ADJUSTMENT,
                key=entry_key,
                postings={ledger.house_id(): -amount, wallet: amount},
                user_id=user_id,
                created_by_id=staff_id,
                reason=reason,
                data={"amount": amount},
            )
        except ledger.Short:
            raise InsufficientChips(
                _(
                    "The wallet cannot give up %(chips)s chips: an adjustment never makes it "
                    "negative."
                )
                % {"chips": -amount}
            ) from None
        if not posted.created:
            first = Entry.objects.get(pk=posted.entry_id)
            if (first.user_id, first.reason, first.data.get("amount")) != (user_id, reason, amount):
                raise AdjustmentKeyReused()
        elif amount > 0:
            repay_debt(user_id=user_id, credit_entry_id=posted.entry_id)
    balance = Balance.objects.filter(account_id=wallet).values_list("balance", flat=True)[0]
    return posted, balance


def set_listed(*, user_id: int, listed: bool) -> None:
    """Show (or hide) the user's balance on the chips leaderboard; private by default."""
    wallet = open_wallet(user_id)
    Account.objects.filter(pk=wallet).update(listed=bool(listed))


def close_wallet(*, user_id: int) -> ledger.Posted | None:
    """The account is being deleted: its wallet's chips go to the house (``account_deleted``),
    and chips it wins later (a running match's payout) follow them there. Chips in play stay in
    their escrows until those matches settle."""
    wallet = ledger.wallet_of(user_id)
    if wallet is None:
        return None
    with transaction.atomic():
        Account.objects.filter(pk=wallet, closed_at__isnull=True).update(closed_at=timezone.now())
        return _sweep_closed(wallet, user_id, f"account_deleted:{user_id}")


def _sweep_closed(wallet: int, user_id: int, key: str) -> ledger.Posted | None:
    balance = Balance.objects.select_for_update().get(account_id=wallet).balance
    if balance <= 0:
        return None
    return ledger.post(
        cause=Cause.ACCOUNT_DELETED,
        key=key,
        postings={wallet: -balance, ledger.house_id(): balance},
        user_id=user_id,
        data={"amount": balance},
    )


# ---------------------------------------------------------------- table stakes


def _seat_accounts(game_id: uuid.UUID | str, seats: Sequence[SeatOwner]) -> tuple[list[int], Any]:
    """Each seat's account (a person's wallet, opened if need be; the house for a bot) and the
    table's accounts as one read found them."""
    found = ledger.table_accounts(game_id, [owner for owner in seats if owner is not None])
    accounts = [
        ledger.HOUSE
        if owner is None
        else found.wallets.get(owner) or open_wallet(owner)  # an account older than the ledger
        for owner in seats
    ]
    return accounts, found


def escrow_buy_ins(*, game_id: uuid.UUID | str, seats: Sequence[SeatOwner], buy_in: int) -> None:
    """Move each seat's buy-in into the table's escrow (a bot's from the house): one entry, in
    the caller's transaction (the start's). A seat that cannot cover it raises
    ``InsufficientChips`` naming the first such seat, and nothing is taken from anyone."""
    if buy_in <= 0:
        return
    with transaction.atomic(savepoint=False):
        accounts, found = _seat_accounts(game_id, seats)
        for seat, owner in enumerate(seats):
            if owner is not None and owner in found.debts:
                owing = ledger.owed(owner)
                if owing:
                    raise ChipsOwed(owing, seat=seat)
        escrow = found.escrow or ledger.ensure_escrow(game_id)
        postings: dict[int, int] = defaultdict(int)
        in_play: dict[int, int] = defaultdict(int)
        for owner, account in zip(seats, accounts, strict=True):
            postings[account] -= buy_in
            if owner is not None:
                in_play[account] += buy_in
        postings[escrow] += buy_in * len(seats)
        try:
            ledger.post(
                cause=Cause.BUY_IN,
                key=f"buy_in:{game_id}",
                postings=postings,
                game_id=game_id,
                data={"buy_in": buy_in, "seats": list(seats)},
                in_play=in_play,
            )
        except ledger.Short as short:
            seat = next(i for i, a in enumerate(accounts) if a in short.accounts)
            raise InsufficientChips(
                _("Seat %(seat)s cannot cover the buy-in of %(buy_in)s chips.")
                % {"seat": seat, "buy_in": buy_in},
                seat=seat,
            ) from None


def can_cover(*, user_id: int, buy_in: int) -> bool:
    """Whether the user's wallet holds ``buy_in`` now and they owe nothing (the start checks
    again, for real)."""
    if buy_in <= 0:
        return True
    wallet = open_wallet(user_id)
    if ledger.owed(user_id):
        return False
    return Balance.objects.filter(account_id=wallet, balance__gte=buy_in).exists()


def settle_stakes(
    *,
    game_id: uuid.UUID | str,
    seats: Sequence[SeatOwner],
    buy_in: int,
    paid: Sequence[int] | None,
    data: dict[str, Any] | None = None,
    fee_percent: int = 0,
) -> ledger.Posted | None:
    """Empty a table's escrow: each seat gets its buy-in plus ``paid`` (the match's settled
    result, ``payout``), or its buy-in back when ``paid`` is None (an aborted match, ``refund``).
    Posts once per table, whichever way. Then, for a payout at a table with a service fee, each
    person who won pays ``fee_percent`` of their winnings (rounded down) to the house
    (``service_fee``, an entry of its own); what a winner owes from a refunded purchase is
    repaid; a deleted account's share goes to the house."""
    if buy_in <= 0:
        return None
    refund = paid is None
    amounts = [0] * len(seats) if refund else list(paid)  # type: ignore[arg-type]
    if sum(amounts) != 0 or any(buy_in + a < 0 for a in amounts):
        raise ValueError(f"a settlement pays out what the escrow holds: {amounts}")
    with transaction.atomic(savepoint=False):
        accounts, found = _seat_accounts(game_id, seats)
        if found.escrow is None:
            raise ValueError(f"table {game_id} has no escrow: its buy-ins were never taken")
        postings: dict[int, int] = defaultdict(int)
        in_play: dict[int, int] = defaultdict(int)
        for owner, account, amount in zip(seats, accounts, amounts, strict=True):
            postings[account] += buy_in + amount
            if owner is not None:
                in_play[account] -= buy_in
        postings[found.escrow] -= buy_in * len(seats)
        cause = Cause.REFUND if refund else Cause.PAYOUT
        if fee_percent and not refund:
            data = {**(data or {}), "fee_percent": fee_percent}
        posted = ledger.post(
            cause=cause,
            key=f"{cause}:{game_id}",
            postings=postings,
            game_id=game_id,
            data={"buy_in": buy_in, "seats": list(seats), "paid": amounts, **(data or {})},
            in_play=in_play,
        )
        if not refund and fee_percent > 0:
            _take_fees(game_id, seats, accounts, amounts, fee_percent)
        if found.held and not refund:
            _hold_winnings(game_id, seats, accounts, amounts, fee_percent, found.held)
        for owner in seats:
            if owner is not None and owner in found.debts:
                repay_debt(user_id=owner, credit_entry_id=posted.entry_id)
        for owner, account in zip(seats, accounts, strict=True):
            if owner is not None and account in found.closed:
                _sweep_closed(account, owner, f"account_deleted:{owner}:{game_id}")
    return posted


def _hold_winnings(
    game_id: uuid.UUID | str,
    seats: Sequence[SeatOwner],
    accounts: Sequence[int],
    paid: Sequence[int],
    fee_percent: int,
    held: dict[int, int],
) -> None:
    """A seat whose winnings are held (fair play's review): what it won, after the fee, moves
    from the wallet the payout credited to its held account, in the payout's transaction, so
    it can never be spent or bought in with (``held_winnings:<game>:<user>``)."""
    fees = service_fees(seats, paid, fee_percent) if fee_percent > 0 else [0] * len(seats)
    for owner, account, amount, fee in zip(seats, accounts, paid, fees, strict=True):
        if owner is None or owner not in held or amount - fee <= 0:
            continue
        ledger.post(
            cause=Cause.HELD_WINNINGS,
            key=f"held_winnings:{game_id}:{owner}",
            postings={account: -(amount - fee), held[owner]: amount - fee},
            game_id=game_id,
            user_id=owner,
            data={"amount": amount - fee},
        )


# ---------------------------------------------------------------- holds (fair play)


def hold_start(*, user_id: int) -> int:
    """Hold the user's match winnings from now on (a fair-play review): each later payout's
    winnings go to their held account (``settle_stakes``). Idempotent; returns the account."""
    with transaction.atomic():
        held = ledger.ensure_held(user_id)
        Account.objects.filter(pk=held).update(holding=True)
    return held


def held_balance(user_id: int) -> int:
    """What the user's held account holds now (0: none)."""
    held = ledger.held_of(user_id)
    if held is None:
        return 0
    return ledger.balances([held]).get(held, 0)


def holding(user_id: int) -> bool:
    """Whether the user's winnings are held now."""
    return Account.objects.filter(kind=Account.Kind.HELD, user_id=user_id, holding=True).exists()


def hold_release(*, user_id: int, cause_key: str) -> ledger.Posted | None:
    """End the hold: the held chips go back to the wallet (``hold_released:<cause_key>``, once
    per cause: the case that ends it), and payouts go to the wallet again."""
    return _hold_end(user_id, cause_key, to_house=False)


def hold_confiscate(*, user_id: int, cause_key: str, reason: str = "", staff_id: int | None = None):
    """End the hold by taking what it holds to the house (``confiscation:<cause_key>``)."""
    return _hold_end(user_id, cause_key, to_house=True, reason=reason, staff_id=staff_id)


def _hold_end(
    user_id: int,
    cause_key: str,
    *,
    to_house: bool,
    reason: str = "",
    staff_id: int | None = None,
) -> ledger.Posted | None:
    held = ledger.held_of(user_id)
    if held is None:
        return None
    with transaction.atomic():
        Account.objects.filter(pk=held).update(holding=False)
        amount = Balance.objects.select_for_update().get(account_id=held).balance
        if amount <= 0:
            return None
        to = ledger.house_id() if to_house else open_wallet(user_id)
        cause = Cause.CONFISCATION if to_house else Cause.HOLD_RELEASED
        posted = ledger.post(
            cause=cause,
            key=f"{cause}:{cause_key}",
            postings={held: -amount, to: amount},
            user_id=user_id,
            created_by_id=staff_id,
            reason=reason,
            data={"amount": amount},
        )
        if posted.created and not to_house:
            repay_debt(user_id=user_id, credit_entry_id=posted.entry_id)
    return posted


def compensate(
    *, user_id: int, chips: int, cause_key: str, reason: str, staff_id: int | None
) -> ledger.Posted:
    """Chips from the house to a victim's wallet (``compensation:<cause_key>``: the case and
    the victim), posted once however often it is asked."""
    if isinstance(chips, bool) or not isinstance(chips, int) or chips <= 0:
        raise InvalidAdjustment()
    with transaction.atomic():
        wallet = open_wallet(user_id)
        posted = ledger.post(
            cause=Cause.COMPENSATION,
            key=f"compensation:{cause_key}",
            postings={ledger.house_id(): -chips, wallet: chips},
            user_id=user_id,
            created_by_id=staff_id,
            reason=reason,
            data={"amount": chips},
        )
        if posted.created:
            repay_debt(user_id=user_id, credit_entry_id=posted.entry_id)
    return posted


# ---------------------------------------------------------------- tournaments and seasons


def tournament_enter(
    *, tournament_id: uuid.UUID | str, registration_id: int, user_id: int, buy_in: int, fee: int
) -> ledger.Posted | None:
    """A registration's buy-in into the tournament's escrow and its fee to the house, one entry
    in the caller's transaction (the registration's); ``InsufficientChips`` when the wallet
    cannot cover both (``ChipsOwed`` while the player owes chips), and nothing is taken."""
    if buy_in + fee <= 0:
        return None
    with transaction.atomic(savepoint=False):
        wallet = open_wallet(user_id)
        check_not_owing(user_id)
        postings: dict[int, int] = defaultdict(int)
        postings[wallet] -= buy_in + fee
        if buy_in:
            postings[ledger.ensure_escrow(tournament_id)] += buy_in
        if fee:
            postings[ledger.house_id()] += fee
        try:
            return ledger.post(
                cause=Cause.TOURNAMENT_ENTRY,
                key=f"tournament_entry:{registration_id}",
                postings=postings,
                user_id=user_id,
                data={"tournament": str(tournament_id), "buy_in": buy_in, "fee": fee},
            )
        except ledger.Short:
            raise InsufficientChips(
                _(
                    "This tournament's buy-in and fee are %(total)s chips: your wallet does not "
                    "hold that many."
                )
                % {"total": buy_in + fee}
            ) from None


def tournament_refund(
    *, tournament_id: uuid.UUID | str, registration_id: int, user_id: int, buy_in: int, fee: int
) -> ledger.Posted | None:
    """A registration's buy-in (out of the escrow) and fee (from the house) back to its wallet
    (a deleted account's: to the house), once per registration however often it is asked."""
    if buy_in + fee <= 0:
        return None
    with transaction.atomic(savepoint=False):
        wallet = open_wallet(user_id)
        postings: dict[int, int] = defaultdict(int)
        postings[wallet] += buy_in + fee
        if buy_in:
            postings[ledger.ensure_escrow(tournament_id)] -= buy_in
        if fee:
            postings[ledger.house_id()] -= fee
        posted = ledger.post(
            cause=Cause.TOURNAMENT_REFUND,
            key=f"tournament_refund:{registration_id}",
            postings=postings,
            user_id=user_id,
            data={"tournament": str(tournament_id), "buy_in": buy_in, "fee": fee},
        )
        if posted.created:
            repay_debt(user_id=user_id, credit_entry_id=posted.entry_id)
        if Account.objects.filter(pk=wallet, closed_at__isnull=False).exists():
            _sweep_closed(wallet, user_id, f"account_deleted:{user_id}:{registration_id}")
    return posted


def tournament_prize(
    *, tournament_id: uuid.UUID | str, place: int, user_id: int | None, amount: int
) -> ledger.Posted | None:
    """One place's prize out of the tournament's escrow: to the winner's wallet, or back to
    the house when a bot holds the place. Keyed by the tournament and the place, so a payment
    run twice, late or after a worker died half-way pays each prize exactly once."""
    if amount <= 0:
        return None
    with transaction.atomic(savepoint=False):
        to = ledger.house_id() if user_id is None else open_wallet(user_id)
        posted = ledger.post(
            cause=Cause.TOURNAMENT_PRIZE,
            key=f"tournament_prize:{tournament_id}:{place}",
            postings={ledger.ensure_escrow(tournament_id): -amount, to: amount},
            user_id=user_id,
            data={"tournament": str(tournament_id), "place": place, "amount": amount},
        )
        if user_id is not None and posted.created:
            _hold_won(user_id, to, amount, f"tournament_prize:{tournament_id}:{place}")
            repay_debt(user_id=user_id, credit_entry_id=posted.entry_id)
        if user_id is not None and Account.objects.filter(pk=to, closed_at__isnull=False).exists():
            _sweep_closed(to, user_id, f"account_deleted:{user_id}:{tournament_id}:{place}")
    return posted


def escrow_balance(owner_id: uuid.UUID | str) -> int:
    """What an escrow (a table's or a tournament's) holds now; 0 if it has none."""
    escrow = ledger.escrow_of(owner_id)
    if escrow is None:
        return 0
    return ledger.balances([escrow]).get(escrow, 0)


def season_reward(*, season_key: str, user_id: int, amount: int, place: int) -> ledger.Posted:
    """A weekly leaderboard's reward from the house, once per week per player: the key names
    the room, the week and the player."""
    with transaction.atomic(savepoint=False):
        wallet = open_wallet(user_id)
        posted = ledger.post(
            cause=Cause.SEASON_REWARD,
            key=f"season_reward:{season_key}:{user_id}",
            postings={ledger.house_id(): -amount, wallet: amount},
            user_id=user_id,
            data={"season": season_key, "place": place, "amount": amount},
        )
        if posted.created:
            _hold_won(user_id, wallet, amount, f"season_reward:{season_key}:{user_id}")
            repay_debt(user_id=user_id, credit_entry_id=posted.entry_id)
    return posted


def _hold_won(user_id: int, wallet: int, amount: int, credit_key: str) -> None:
    """Chips just won outside a table (a prize, a reward) by a player whose winnings are held
    (fair play's review): they move on from the wallet to the held account, in the credit's
    transaction, as a payout's do (``held_winnings:<credit key>``, once per credit)."""
    held = ledger.holding_of(user_id)
    if held is None or amount <= 0:
        return
    ledger.post(
        cause=Cause.HELD_WINNINGS,
        key=f"held_winnings:{credit_key}",
        postings={wallet: -amount, held: amount},
        user_id=user_id,
        data={"amount": amount, "credit": credit_key},
    )


def service_fees(seats: Sequence[SeatOwner], paid: Sequence[int], fee_percent: int) -> list[int]:
    """Each seat's fee: ``fee_percent`` of what a person won (rounded down); 0 for a loser, a
    seat that broke even and a bot (the house would pay itself)."""
    return [
        amount * fee_percent // 100 if owner is not None and amount > 0 else 0
        for owner, amount in zip(seats, paid, strict=True)
    ]


def _take_fees(
    game_id: uuid.UUID | str,
    seats: Sequence[SeatOwner],
    accounts: Sequence[int],
    paid: Sequence[int],
    fee_percent: int,
) -> ledger.Posted | None:
    fees = service_fees(seats, paid, fee_percent)
    if not any(fees):
        return None
    postings: dict[int, int] = defaultdict(int)
    for account, fee in zip(accounts, fees, strict=True):
        postings[account] -= fee
    postings[ledger.house_id()] += sum(fees)
    return ledger.post(
        cause=Cause.SERVICE_FEE,
        key=f"service_fee:{game_id}",
        postings=postings,
        game_id=game_id,
        data={"fee_percent": fee_percent, "fees": fees, "seats": list(seats)},
    )


# ---------------------------------------------------------------- store purchases and debts


def check_not_owing(user_id: int) -> None:
    """``ChipsOwed`` while the user owes chips from a refunded purchase."""
    owing = ledger.owed(user_id)
    if owing:
        raise ChipsOwed(owing)


def owes(user_id: int) -> int:
    """What the user owes the house from refunded purchases (0: nothing)."""
    return ledger.owed(user_id)


def credit_purchase(
    *, user_id: int, store: str, reference: str, chips: int, data: dict[str, Any]
) -> ledger.Posted:
    """A verified store purchase's chips, from the house into the wallet: once per
    ``store:reference`` (a transaction id, an order id), whoever asks how often. What the player
    owes from an earlier refund is repaid from it at once (``debt_repaid``). A closed wallet
    takes no purchase (``WalletClosed``)."""
    if chips <= 0:
        raise ValueError("a purchase credits at least one chip")
    with transaction.atomic():
        wallet = open_wallet(user_id)
        if Account.objects.filter(pk=wallet, closed_at__isnull=False).exists():
            raise WalletClosed()
        posted = ledger.post(
            cause=Cause.PURCHASE,
            key=f"purchase:{store}:{reference}",
            postings={ledger.house_id(): -chips, wallet: chips},
            user_id=user_id,
            data={"store": store, "reference": reference, "chips": chips, **data},
        )
        if posted.created:
            repay_debt(user_id=user_id, credit_entry_id=posted.entry_id)
    return posted


def claw_back(
    *, user_id: int, store: str, reference: str, chips: int, data: dict[str, Any]
) -> ledger.Posted:
    """A store refunded (or revoked) a purchase: its ``chips`` go back to the house, from the
    wallet as far as it holds them; the rest becomes the player's debt. Once per
    ``store:reference``. Chips in play stay in their escrows; what the match pays out later
    repays the debt."""
    with transaction.atomic():
        wallet = open_wallet(user_id)
        debt = ledger.ensure_debt(user_id)
        held = Balance.objects.select_for_update().get(account_id=wallet).balance
        taken = min(held, chips)
        postings = {wallet: -taken, debt: taken - chips, ledger.house_id(): chips}
        return ledger.post(
            cause=Cause.STORE_REFUND,
            key=f"store_refund:{store}:{reference}",
            postings=postings,
            user_id=user_id,
            data={
                "store": store,
                "reference": reference,
                "chips": chips,
                "taken": taken,
                "owed": chips - taken,
                **data,
            },
        )


def repay_debt(*, user_id: int, credit_entry_id: int) -> ledger.Posted | None:
    """After a credit (``credit_entry_id``) to the wallet: move what it can of what the user
    owes from the wallet to their debt account (``debt_repaid:<entry>``, once per credit)."""
    debt = ledger.debt_of(user_id)
    wallet = ledger.wallet_of(user_id)
    if debt is None or wallet is None:
        return None
    with transaction.atomic(savepoint=False):
        rows = dict(
            Balance.objects.select_for_update()
            .filter(account_id__in=sorted((wallet, debt)))
            .order_by("account_id")
            .values_list("account_id", "balance")
        )
        amount = min(rows[wallet], -rows[debt])
        if amount <= 0:
            return None
        return ledger.post(
            cause=Cause.DEBT_REPAID,
            key=f"debt_repaid:{credit_entry_id}",
            postings={wallet: -amount, debt: amount},
            user_id=user_id,
            data={"credit": credit_entry_id, "amount": amount},
        )
