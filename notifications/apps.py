from django.apps import AppConfig


class NotificationsConfig(AppConfig):
    name = "notifications"
    verbose_name = "Notifications, push and webhooks"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from notifications import receivers  # noqa: F401  (hooks the lobby's and accounts' signals)
