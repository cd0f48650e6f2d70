"""Fair play's writes: cases from detection's flags and players' reports, staff decisions,
suspensions, their liftings and appeals (services write, selectors read).

A case names some accounts and a kind; at most one case per kind and set of accounts is open at
a time, and everything found about them later joins it as an event. Detection's cases hold the
accounts' winnings while they are open (``chips.services.hold_start``: a payout's winnings go to
a held account); a decision releases them to the wallet or confiscates them to the house. Every
chip moved by a case is a ledger entry keyed by the case (and the decision, and the account), so
a decision posted twice moves nothing twice. Every decision is an append-only ``CaseEvent``
with who and why.

A suspension's record is a ``Suspension`` (lifted by a ``SuspensionLift``); the account's row
carries its projection (``accounts.sanctions.suspension_set``), which ends the sessions at once
and is what every request and log-in checks.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from accounts import sanctions
from chips import services as chips
from fairplay.detection.flags import Flag
from fairplay.errors import (
    AlreadyAppealed,
    AlreadyLifted,
    AlreadyReported,
    CaseDecided,
    CaseNotFound,
    InvalidDecision,
    InvalidUntil,
    NotAPerson,
    NotFinished,
    NotSeated,
    NotSuspended,
    OwnSeat,
    SuspensionNotFound,
    UnknownAccount,
)
from fairplay.models import (
    OPEN_STATUSES,
    Appeal,
    Case,
    CaseAccount,
    CaseEvent,
    Report,
    SignInAddress,
    Suspension,
    SuspensionLift,
)
from games import selectors as games

User = get_user_model()

#: The decisions staff may take on a case.
DECISIONS = ("dismiss", "warn", "suspend", "confiscate")
OPEN = OPEN_STATUSES


def _account(username: str) -> Any:
    user = User.objects.filter(username__iexact=username).first()
    if user is None:
        raise UnknownAccount()
    return user


def _open_case(kind: str, user_ids: Sequence[int]) -> Case | None:
    """The open case of ``kind`` naming exactly these accounts, locked, if there is one."""
    wanted = set(user_ids)
    candidates = Case.objects.select_for_update().filter(
        kind=kind, status__in=OPEN, members__user_id=user_ids[0]
    )
    for case in candidates.order_by("id"):
        if set(case.members.values_list("user_id", flat=True)) == wanted:
            return case
    return None


def _new_case(kind: str, user_ids: Sequence[int], *, hold: bool, now: datetime, **data: Any):
    case = Case.objects.create(kind=kind, hold=hold, opened_at=now, updated_at=now)
    CaseAccount.objects.bulk_create(
        CaseAccount(case=case, user_id=uid, position=i) for i, uid in enumerate(user_ids)
    )
    CaseEvent.objects.create(case=case, type=CaseEvent.Type.OPENED, at=now, data=data)
    return case


def held_accounts(case: Case) -> list[int]:
    """Whose winnings a case holds: the beneficiary of chip dumping, both seats of collusion."""
    members = list(case.members.order_by("position").values_list("user_id", flat=True))
    if not case.hold:
        return []
    return members[:1] if case.kind == Case.Kind.CHIP_DUMPING else members


def flag_digest(flag: Flag) -> str:
    """What makes a flag the same flag: its whole content, canonical JSON, SHA-256."""
    text = json.dumps(asdict(flag), sort_keys=True, separators=(",", ":"), default=str)
    return "flag:" + hashlib.sha256(text.encode()).hexdigest()


def flag_received(*, flag: Flag) -> Case:
    """Detection raised ``flag``: open a case for its accounts and kind (holding their
    winnings), or add its evidence to the open one. The same flag twice adds nothing."""
    if flag.kind not in (Case.Kind.COLLUSION, Case.Kind.CHIP_DUMPING) or not flag.accounts:
        raise ValueError(f"not a flag fair play takes: {flag.kind} {flag.accounts}")
    key = flag_digest(flag)
    now = timezone.now()
    accounts = [int(a) for a in dict.fromkeys(flag.accounts)]
    with transaction.atomic():
        known = CaseEvent.objects.filter(key=key).values_list("case_id", flat=True).first()
        if known is not None:
            return Case.objects.get(pk=known)
        case = _open_case(flag.kind, accounts) or _new_case(
            flag.kind, accounts, hold=True, now=now, source="detection"
        )
        try:
            with transaction.atomic():
                CaseEvent.objects.create(
                    case=case,
                    type=CaseEvent.Type.FLAG,
                    at=now,
                    key=key,
                    data={
                        "score": flag.score,
                        "threshold": flag.threshold,
                        "evidence": flag.evidence,
                        "game_ids": list(flag.game_ids),
                    },
                )
        except IntegrityError:  # the same flag, at the same moment, elsewhere
            return case
        Case.objects.filter(pk=case.pk).update(
            score=max(case.score, float(flag.score)), updated_at=now, hold=True
        )
        case.refresh_from_db()
        for user_id in held_accounts(case):
            chips.hold_start(user_id=user_id)
    return case


def report_create(*, game_id: Any, reporter: Any, seat: int, reason: str, text: str = "") -> Report:
    """A player of a finished game reports another seat of it, once per game: it joins the
    open case of that kind naming that account, or opens one (which holds nothing: a report
    alone is a claim, not evidence)."""
    game = games.table_get(game_id=game_id)
    seats = {s.index: s for s in game.seats.all()}
    mine = [s.index for s in seats.values() if s.user_id == reporter.pk]
    if not mine:
        raise NotSeated()
    if game.status != "finished":
        raise NotFinished()
    if seat in mine:
        raise OwnSeat()
    target = seats.get(seat)
    if target is None or target.user_id is None:
        raise NotAPerson()
    now = timezone.now()
    with transaction.atomic():
        if Report.objects.filter(game_id=game.pk, reporter=reporter).exists():
            raise AlreadyReported()
        case = _open_case(reason, [target.user_id]) or _new_case(
            reason, [target.user_id], hold=False, now=now, source="report"
        )
        try:
            with transaction.atomic():
                report = Report.objects.create(
                    game_id=game.pk,
                    reporter=reporter,
                    seat=seat,
                    reported_id=target.user_id,
                    reason=reason,
                    text=text,
                    case=case,
                    at=now,
                )
        except IntegrityError:  # the same reporter's twin request won
            raise AlreadyReported() from None
        CaseEvent.objects.create(
            case=case,
            type=CaseEvent.Type.REPORT,
            at=now,
            by=reporter,
            reason=text,
            data={"report": report.pk, "game": str(game.pk), "seat": seat, "reason": reason},
        )
        Case.objects.filter(pk=case.pk).update(updated_at=now)
    return report


# ---------------------------------------------------------------- suspensions


def _project(user_id: int, now: datetime) -> None:
    """Write the account's suspension from its records: suspended while any suspension not
    lifted has not ended; until the latest end (none if one has none)."""
    active = list(
        Suspension.objects.filter(user_id=user_id, lift__isnull=True)
        .filter(Q(ends_at__isnull=True) | Q(ends_at__gt=now))
        .values_list("ends_at", flat=True)
    )
    until = None if not active or None in active else max(active)
    sanctions.suspension_set(user_id=user_id, suspended=bool(active), until=until)


def suspend(
    *,
    user: Any,
    reason: str,
    until: datetime | None,
    staff: Any,
    case: Case | None = None,
) -> Suspension:
    """Suspend ``user`` until ``until`` (None: until lifted): its sessions end at once, its
    log-ins are refused with the end and the appeal route."""
    now = timezone.now()
    if until is not None and until <= now:
        raise InvalidUntil()
    reason = (reason or "").strip()
    if not reason:
        raise InvalidDecision()
    with transaction.atomic():
        suspension = Suspension.objects.create(
            user=user,
            reason=reason,
            starts_at=now,
            ends_at=until,
            created_by=staff,
            case=case,
        )
        _project(user.pk, now)
    return suspension


def suspend_username(*, username: str, reason: str, until: datetime | None, staff: Any):
    """``suspend`` by username (the staff API's)."""
    return suspend(user=_account(username), reason=reason, until=until, staff=staff)


def lift(*, suspension_id: int, staff: Any, reason: str) -> SuspensionLift:
    """End a suspension now, with who and why; the account may log in again at once."""
    now = timezone.now()
    reason = (reason or "").strip()
    if not reason:
        raise InvalidDecision()
    with transaction.atomic():
        suspension = Suspension.objects.select_for_update().filter(pk=suspension_id).first()
        if suspension is None:
            raise SuspensionNotFound()
        ended = suspension.ends_at is not None and suspension.ends_at <= now
        if ended or SuspensionLift.objects.filter(suspension=suspension).exists():
            raise AlreadyLifted()
        lifted = SuspensionLift.objects.create(
            suspension=suspension, at=now, by=staff, reason=reason
        )
        _project(suspension.user_id, now)
    return lifted


def current_suspension(user_id: int, now: datetime | None = None) -> Suspension | None:
    """The account's suspension in force now that ends last (None: not suspended)."""
    now = now or timezone.now()
    active = Suspension.objects.filter(user_id=user_id, lift__isnull=True).filter(
        Q(ends_at__isnull=True) | Q(ends_at__gt=now)
    )
    return active.order_by("-ends_at", "-id").first() if active.exists() else None


def appeal(*, user: Any, text: str) -> Appeal:
    """A suspended player appeals their suspension (once): its case is reopened (a suspension
    staff gave outside a case opens one), and staff decide it again."""
    now = timezone.now()
    with transaction.atomic():
        found = current_suspension(user.pk, now)
        if found is None:
            raise NotSuspended()
        suspension = Suspension.objects.select_for_update().get(pk=found.pk)
        if Appeal.objects.filter(suspension=suspension).exists():
            raise AlreadyAppealed()
        if suspension.case_id is not None:
            case = Case.objects.select_for_update().get(pk=suspension.case_id)
        else:
            case = _new_case(Case.Kind.CHEATING, [user.pk], hold=False, now=now, source="appeal")
        try:
            with transaction.atomic():
                made = Appeal.objects.create(
                    suspension=suspension, user=user, text=text, at=now, case=case
                )
        except IntegrityError:
            raise AlreadyAppealed() from None
        CaseEvent.objects.create(
            case=case,
            type=CaseEvent.Type.REOPENED,
            at=now,
            by=user,
            reason=text,
            data={"appeal": made.pk, "suspension": suspension.pk},
        )
        Case.objects.filter(pk=case.pk).update(status=Case.Status.REOPENED, updated_at=now)
    return made


# ---------------------------------------------------------------- decisions


def decide(
    *,
    case_id: int,
    staff: Any,
    decision: str,
    reason: str,
    until: datetime | None = None,
    accounts: Iterable[str] | None = None,
    confiscate: bool = False,
    compensate: Iterable[dict[str, Any]] = (),
) -> CaseEvent:
    """Staff decide an open case, with why:

    - ``dismiss``: nothing against the accounts; held winnings go back to their wallets, and a
      suspension this case gave (a reopened case) is lifted;
    - ``warn``: the same, with a warning the player sees among their sanctions;
    - ``suspend``: the accounts (``accounts``: usernames among the case's; all by default) are
      suspended until ``until`` (None: until lifted); held winnings go back unless
      ``confiscate``;
    - ``confiscate``: held winnings go to the house, nobody is suspended.

    ``compensate``: ``[{"username", "chips"}]``, chips from the house to each victim's wallet,
    once per case and victim however often the case is decided. The decision is an
    append-only event; the case is ``decided`` until an appeal reopens it.
    """
    if decision not in DECISIONS:
        raise InvalidDecision()
    reason = (reason or "").strip()
    if not reason:
        raise InvalidDecision()
    now = timezone.now()
    with transaction.atomic():
        case = Case.objects.select_for_update().filter(pk=case_id).first()
        if case is None:
            raise CaseNotFound()
        if not case.is_open:
            raise CaseDecided()
        members = list(case.members.order_by("position").values_list("user_id", flat=True))
        by_name = {u.username.lower(): u for u in User.objects.filter(pk__in=members)}
        if accounts:
            targets = []
            for name in accounts:
                if str(name).lower() not in by_name:
                    raise InvalidDecision()
                targets.append(by_name[str(name).lower()])
        else:
            targets = sorted(by_name.values(), key=lambda u: members.index(u.pk))
        victims = [(_account(str(c["username"])), c["chips"]) for c in compensate]
        if decision == "suspend" and until is not None and until <= now:
            raise InvalidUntil()
        # The n-th decision of the case keys the chips it moves: a decision repeated (a retry)
        # posts nothing twice, a later one (after an appeal) posts its own.
        number = case.events.filter(type=CaseEvent.Type.DECISION).count() + 1
        outcome: dict[str, Any] = {"decision": decision, "lifted": [], "suspensions": []}
        # A reopened case decided again: what it decided before is undone first.
        for earlier in Suspension.objects.filter(case=case, lift__isnull=True).filter(
            Q(ends_at__isnull=True) | Q(ends_at__gt=now)
        ):
            SuspensionLift.objects.create(suspension=earlier, at=now, by=staff, reason=reason)
            _project(earlier.user_id, now)
            outcome["lifted"].append(earlier.pk)
        take = decision == "confiscate" or (decision == "suspend" and confiscate)
        moved: dict[str, int] = {}
        for user_id in held_accounts(case):
            if _holds_elsewhere(user_id, case):
                continue  # another open case still holds this account's winnings
            key = f"{case.pk}:{number}:{user_id}"
            if take:
                posted = chips.hold_confiscate(
                    user_id=user_id, cause_key=key, reason=reason, staff_id=staff.pk
                )
            else:
                posted = chips.hold_release(user_id=user_id, cause_key=key)
            if posted is not None:
                moved[str(user_id)] = posted.entry_id
        outcome["confiscated" if take else "released"] = moved
        if decision == "suspend":
            for user in targets:
                made = suspend(user=user, reason=reason, until=until, staff=staff, case=case)
                outcome["suspensions"].append(made.pk)
            outcome["until"] = until.isoformat() if until else None
        paid = []
        for victim, amount in victims:
            posted = chips.compensate(
                user_id=victim.pk,
                chips=amount,
                cause_key=f"{case.pk}:{victim.pk}",
                reason=reason,
                staff_id=staff.pk,
            )
            paid.append({"user": victim.pk, "chips": amount, "entry": posted.entry_id})
        outcome["compensated"] = paid
        outcome["accounts"] = [u.pk for u in targets]
        event = CaseEvent.objects.create(
            case=case, type=CaseEvent.Type.DECISION, at=now, by=staff, reason=reason, data=outcome
        )
        Case.objects.filter(pk=case.pk).update(status=Case.Status.DECIDED, updated_at=now)
    return event


def _holds_elsewhere(user_id: int, case: Case) -> bool:
    return (
        Case.objects.filter(status__in=OPEN, hold=True, members__user_id=user_id)
        .exclude(pk=case.pk)
        .exists()
    )


# ---------------------------------------------------------------- sign-in addresses


def address_seen(*, user_id: int, address: str, at: datetime | None = None) -> None:
    """Record where an account signed in from (``accounts.signals.session_started``)."""
    if address and address != "unknown":
        SignInAddress.objects.create(user_id=user_id, address=address[:64], at=at or timezone.now())
