"""The accounts' signals, sent inside the transaction of what they announce (see games.signals).

``session_started``: a log-in or a sign-up made a session (``session``). ``account_deleted``: an
account was deleted (``user_id``, ``at``).
"""

from __future__ import annotations

from django.dispatch import Signal

session_started = Signal()
account_deleted = Signal()
