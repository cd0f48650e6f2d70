"""The matchmaker's signals, sent inside the transaction of what they announce (the
notifications hear them and write the inbox).

``party_invited``: a friend asked ``user_id`` to queue together (``ticket_id``,
``by_user_id``). ``matched``: the matcher seated ``user_ids`` at ``game_id``.
"""

from __future__ import annotations

from django.dispatch import Signal

party_invited = Signal()
matched = Signal()
