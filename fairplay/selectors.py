"""Fair play's reads: the staff queue, a case with its evidence, the links between accounts,
the chips that flowed between them, and a player's own sanctions.

Links are read from the records they rest on each time a case is shown, never copied, so they
are always what the records say: the sign-in identities every account ever held
(``accounts.LoginClaim``: a device key or an Apple or Google identity two accounts took turns
with), the addresses accounts signed in from (``SignInAddress``, within
``TONGITS_FAIRPLAY_ADDRESS_WINDOW_SECONDS`` of each other) and the payment identities of the
stores' verified payloads (``store.selectors.shared_payment_sources``).
"""

from __future__ import annotations

from collections import defaultdict
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection
from django.utils import timezone

from accounts.models import LoginClaim
from chips import services as chips
from chips.models import Entry
from core.errors import DomainError
from fairplay.errors import CaseNotFound
from fairplay.models import OPEN_STATUSES as OPEN
from fairplay.models import Appeal, Case, CaseEvent, Report, SignInAddress, Suspension
from games import selectors as games
from store import selectors as store

User = get_user_model()

#: The most games whose sealed exports a case's page carries (the newest first).
EXPORTS_PER_CASE = 10


def open_cases() -> list[dict[str, Any]]:
    """The staff queue: every open or reopened case, highest score first, naming its accounts
    by username."""
    cases = list(Case.objects.filter(status__in=OPEN).order_by("-score", "opened_at", "id"))
    names = _names_of(cases)
    reports = defaultdict(int)
    for case_id in Report.objects.filter(case__in=cases).values_list("case_id", flat=True):
        reports[case_id] += 1
    return [
        {
            "id": case.pk,
            "kind": case.kind,
            "status": case.status,
            "score": case.score,
            "hold": case.hold,
            "accounts": names[case.pk],
            "reports": reports[case.pk],
            "opened_at": case.opened_at,
            "updated_at": case.updated_at,
        }
        for case in cases
    ]


def _names_of(cases: list[Case]) -> dict[int, list[str]]:
    out: dict[int, list[str]] = defaultdict(list)
    rows = (
        Case.accounts.through.objects.filter(case__in=cases)
        .order_by("case_id", "position")
        .values_list("case_id", "user__username")
    )
    for case_id, username in rows:
        out[case_id].append(username)
    return out


def case_detail(*, case_id: int, staff: Any) -> dict[str, Any]:
    """A case with its evidence: each account (suspended? winnings held?), its history,
    detection's scores and decisions, the reports, the chips that flowed between its accounts,
    the links of its accounts to others, and the sealed exports of its newest games."""
    case = Case.objects.filter(pk=case_id).first()
    if case is None:
        raise CaseNotFound()
    members = list(case.members.order_by("position").select_related("user"))
    user_ids = [m.user_id for m in members]
    events = list(case.events.order_by("id").select_related("by"))
    reports = list(case.reports.order_by("id").select_related("reporter", "reported"))
    game_ids: list[str] = []
    for event in events:
        if event.type == CaseEvent.Type.FLAG:
            game_ids += [str(g) for g in event.data.get("game_ids", [])]
    game_ids += [str(r.game_id) for r in reports]
    game_ids = list(dict.fromkeys(game_ids))
    now = timezone.now()
    return {
        "id": case.pk,
        "kind": case.kind,
        "status": case.status,
        "score": case.score,
        "hold": case.hold,
        "opened_at": case.opened_at,
        "accounts": [
            {
                "id": m.user_id,
                "username": m.user.username,
                "suspended": bool(m.user.suspended)
                and (m.user.suspended_until is None or m.user.suspended_until > now),
                "suspended_until": m.user.suspended_until if m.user.suspended else None,
                "held_chips": chips.held_balance(m.user_id),
            }
            for m in members
        ],
        "events": [_event(e) for e in events],
        "reports": [
            {
                "id": r.pk,
                "game": str(r.game_id),
                "seat": r.seat,
                "reporter": r.reporter.username,
                "reported": r.reported.username,
                "reason": r.reason,
                "text": r.text,
                "at": r.at,
            }
            for r in reports
        ],
        "chip_flow": chip_flow(user_ids),
        "links": links(user_ids),
        "games": game_ids,
        "exports": _exports(game_ids[-EXPORTS_PER_CASE:][::-1], staff),
    }


def _exports(game_ids: list[str], staff: Any) -> list[dict[str, Any]]:
    """The sealed exports of these games; a game that cannot be read (an id evidence named
    that no longer exists, a match not started) is left out rather than hiding the rest."""
    out = []
    for game_id in game_ids:
        try:
            out.append(games.export(game_id=game_id, user=staff))
        except DomainError:
            continue
    return out


def _event(event: CaseEvent) -> dict[str, Any]:
    return {
        "id": event.pk,
        "type": event.type,
        "at": event.at,
        "by": event.by.username if event.by else None,
        "reason": event.reason,
        "data": event.data,
    }


def chip_flow(user_ids: list[int]) -> dict[str, Any]:
    """The chips each of these accounts won (+) or lost (-) in the settled matches where two
    or more of them sat together, per game and in total: chip dumping shows as one side's
    steady losses being the other's gains."""
    if len(user_ids) < 2:
        return {"games": [], "totals": {}}
    names = dict(User.objects.filter(pk__in=user_ids).values_list("pk", "username"))
    payouts = Entry.objects.filter(cause=Entry.Cause.PAYOUT).filter(
        data__seats__contains=[user_ids[0]]
    )
    per_game = []
    totals: dict[str, int] = defaultdict(int)
    for entry in payouts.order_by("id"):
        seats = entry.data.get("seats") or []
        paid = entry.data.get("paid") or []
        together = [u for u in user_ids if u in seats]
        if len(together) < 2:
            continue
        row = {names[u]: int(paid[seats.index(u)]) for u in together}
        for name, amount in row.items():
            totals[name] += amount
        per_game.append({"game": str(entry.game_id), "at": entry.created_at, "paid": row})
    return {"games": per_game, "totals": dict(totals)}


def links(user_ids: list[int]) -> list[dict[str, Any]]:
    """Every link of these accounts to another account: a shared sign-in identity (method
    named, never the identity), a sign-in from the same address within the window, a shared
    payment identity of a store."""
    found: dict[tuple[int, int, str, str], dict[str, Any]] = {}
    mine = LoginClaim.objects.filter(user_id__in=user_ids).values_list(
        "user_id", "method", "subject"
    )
    for user_id, method, subject in mine:
        others = (
            LoginClaim.objects.filter(method=method, subject=subject)
            .exclude(user_id=user_id)
            .values_list("user_id", flat=True)
        )
        for other in others:
            found[(user_id, other, "sign_in_identity", method)] = {}
    for user_id, other, address, first, last in _shared_addresses(user_ids):
        found[(user_id, other, "address", address)] = {"first": first, "last": last}
    for user_id, other, source in store.shared_payment_sources(user_ids):
        found[(user_id, other, "payment_source", source.split(":", 1)[0])] = {}
    wanted = {u for key in found for u in key[:2]}
    names = dict(User.objects.filter(pk__in=wanted).values_list("pk", "username"))
    return [
        {
            "kind": kind,
            "detail": detail,
            "account": names.get(user_id, ""),
            "other": names.get(other, ""),
            **extra,
        }
        for (user_id, other, kind, detail), extra in sorted(found.items())
    ]


_SHARED_ADDRESSES = """
SELECT a.user_id, b.user_id, a.address, min(least(a.at, b.at)), max(greatest(a.at, b.at))
FROM fairplay_signinaddress a
JOIN fairplay_signinaddress b
  ON b.address = a.address AND b.user_id <> a.user_id
 AND b.at BETWEEN a.at - %(window)s AND a.at + %(window)s
WHERE a.user_id = ANY(%(users)s)
GROUP BY a.user_id, b.user_id, a.address
ORDER BY a.user_id, b.user_id, a.address
"""


def _shared_addresses(user_ids: list[int]) -> list[tuple[int, int, str, Any, Any]]:
    window = timedelta(seconds=settings.TONGITS_FAIRPLAY_ADDRESS_WINDOW_SECONDS)
    with connection.cursor() as cursor:
        cursor.execute(_SHARED_ADDRESSES, {"window": window, "users": list(user_ids)})
        return list(cursor.fetchall())


def my_sanctions(*, user: Any) -> dict[str, Any]:
    """What a player sees of their own sanctions: each suspension (reason, start, end, lifted,
    appealed), the warnings staff gave them, and the winnings held while a case is open."""
    now = timezone.now()
    suspensions = Suspension.objects.filter(user=user).select_related("lift").order_by("-id")
    appeals = {a.suspension_id: a for a in Appeal.objects.filter(user=user)}
    warnings = CaseEvent.objects.filter(
        type=CaseEvent.Type.DECISION, data__decision="warn", case__members__user=user
    ).order_by("-id")
    out_suspensions = []
    for s in suspensions:
        lift = getattr(s, "lift", None)
        appeal = appeals.get(s.pk)
        active = lift is None and (s.ends_at is None or s.ends_at > now)
        out_suspensions.append(
            {
                "id": s.pk,
                "reason": s.reason,
                "starts_at": s.starts_at,
                "ends_at": s.ends_at,
                "active": active,
                "lifted_at": lift.at if lift else None,
                "appeal": {"text": appeal.text, "at": appeal.at} if appeal else None,
            }
        )
    return {
        "suspended": any(s["active"] for s in out_suspensions),
        "suspensions": out_suspensions,
        "warnings": [{"reason": w.reason, "at": w.at} for w in warnings],
        "held_chips": chips.held_balance(user.pk),
    }


def export(user: Any) -> dict[str, Any]:
    """``/me/export``'s ``fair_play``: the player's sanctions and appeals, the reports they
    made, and the addresses they signed in from."""
    reports = Report.objects.filter(reporter=user).order_by("id")
    return {
        **my_sanctions(user=user),
        "reports": [
            {"game": str(r.game_id), "seat": r.seat, "reason": r.reason, "text": r.text, "at": r.at}
            for r in reports
        ],
        "sign_ins": [
            {"address": address, "at": at}
            for address, at in SignInAddress.objects.filter(user=user)
            .order_by("id")
            .values_list("address", "at")
        ],
    }
