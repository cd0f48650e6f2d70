from django.apps import AppConfig


class MatchmakingConfig(AppConfig):
    """Tickets, parties and the matcher that seats them (docs/matchmaking.md)."""

    name = "matchmaking"
    default_auto_field = "django.db.models.BigAutoField"
