from django.apps import AppConfig


class SocialConfig(AppConfig):
    """Friends, blocks and presence (docs/matchmaking.md)."""

    name = "social"
    default_auto_field = "django.db.models.BigAutoField"
