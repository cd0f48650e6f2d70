"""``verify_ledger``'s checks of the chips fair play moved (``chips.ledger.register_check``):
each release, confiscation and compensation names a case staff decided, and each held payout
an account a holding case names. The ledger's own checks already hold every entry to zero."""

from __future__ import annotations

from chips.models import Entry
from fairplay.models import CaseAccount, CaseEvent

#: The causes a case's decision posts, each keyed ``<cause>:<case>:...``.
DECIDED = (Entry.Cause.HOLD_RELEASED, Entry.Cause.CONFISCATION, Entry.Cause.COMPENSATION)


def problems() -> list[str]:
    out: list[str] = []
    decided = set(
        CaseEvent.objects.filter(type=CaseEvent.Type.DECISION).values_list("case_id", flat=True)
    )
    for entry_id, key in Entry.objects.filter(cause__in=DECIDED).values_list("id", "key"):
        case = key.split(":")[1]
        if not case.isdigit() or int(case) not in decided:
            out.append(f"entry {entry_id} ({key}) names no case staff decided")
    holders = set(CaseAccount.objects.filter(case__hold=True).values_list("user_id", flat=True))
    held = Entry.objects.filter(cause=Entry.Cause.HELD_WINNINGS).values_list("id", "user_id")
    for entry_id, user_id in held:
        if user_id not in holders:
            out.append(f"entry {entry_id} held the winnings of {user_id}, whom no case holds")
    return out
