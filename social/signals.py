"""The friends' signals, sent inside the transaction of what they announce (see games.signals),
so that an app above ``social`` (the notifications) records it exactly when it commits.

``friend_requested``: a friend request was sent (``request_id``: the pair's row, new with each
request; ``user_id``: who is asked; ``by_user_id``: who asks; ``at``).
"""

from __future__ import annotations

from django.dispatch import Signal

friend_requested = Signal()
