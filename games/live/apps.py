from django.apps import AppConfig


class LiveConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "games.live"
    label = "live"
    verbose_name = "Live tables"

    def ready(self) -> None:
        from games.live import signals

        signals.connect()
