"""The accounts' signals, sent inside the transaction of what they announce (see games.signals).

``session_started``: a log-in or a sign-up made a session (``session``, and the client's
``address`` when a request made it). ``account_deleted``: an account was deleted (``user_id``,
``at``). ``account_suspended``: fair play suspended an account (``user_id``, ``until``: None
until lifted); its sessions are ended already.
"""

from __future__ import annotations

from django.dispatch import Signal

session_started = Signal()
account_deleted = Signal()
account_suspended = Signal()
