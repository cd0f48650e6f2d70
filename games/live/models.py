"""One-time tickets for ``?ticket=`` on the streams (a browser's EventSource sends no header)."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class StreamTicket(models.Model):
    """A ticket is given out once; only its sha256 is stored. Valid once, for 60 seconds."""

    digest = models.CharField(max_length=64, unique=True, help_text="sha256 hex of the ticket.")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    game_id = models.UUIDField(null=True, blank=True, help_text="Its game; null: /me/stream.")
    session_id = models.UUIDField(
        null=True,
        blank=True,
        help_text="The session that asked for it: the ticket and the stream it opens end with it.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(db_index=True)
    used_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"ticket of {self.user_id} for {self.game_id or 'me'}"
