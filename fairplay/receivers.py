"""What fair play hears: detection's flags (a case opened or added to) and every log-in's
address (kept for the links between accounts)."""

from __future__ import annotations

from typing import Any

from accounts import signals as accounts_signals
from accounts.models import Session
from fairplay import services
from fairplay.detection.flags import Flag
from fairplay.detection.signals import flag_raised


def _flag_raised(sender: Any, flag: Flag, **kwargs: Any) -> None:
    services.flag_received(flag=flag)


def _session_started(sender: Any, session: Any, address: str = "", **kwargs: Any) -> None:
    services.address_seen(user_id=session.user_id, address=address)


def connect() -> None:
    flag_raised.connect(_flag_raised, dispatch_uid="fairplay.flag_raised")
    accounts_signals.session_started.connect(
        _session_started, sender=Session, dispatch_uid="fairplay.session_started"
    )
