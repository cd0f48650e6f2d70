"""The tournaments' signals, sent inside the transaction of what they announce (the
notifications hear them and write the inbox).

``starting``: a scheduled tournament starts soon (``tournament_id``, ``user_ids``,
``starts_at``). ``table_ready``: ``user_ids`` are seated at ``game_id`` (``stage``).
``finished`` / ``cancelled``: the tournament ended (``tournament_id``, ``user_ids``).
"""

from __future__ import annotations

from django.dispatch import Signal

starting = Signal()
table_ready = Signal()
finished = Signal()
cancelled = Signal()
