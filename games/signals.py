"""The lobby's signals, sent inside the transaction of what they announce, so that an app above
``games`` (the notifications) records it exactly when it commits, without ``games`` knowing it.

``invited``: a seat was given to a named user (``game_id``, ``seat``, ``user_id``,
``by_user_id``). ``invitation_answered``: an invitee accepted or declined (``game_id``, ``seat``,
``user_id``, ``accepted``, ``creator_id``). ``match_started``: a table's match started
(``game_id``, ``user_ids``: the people seated).
"""

from __future__ import annotations

from django.dispatch import Signal

invited = Signal()
invitation_answered = Signal()
match_started = Signal()
