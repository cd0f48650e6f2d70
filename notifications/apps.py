from django.apps import AppConfig


class NotificationsConfig(AppConfig):
    name = "notifications"
    verbose_name = "Notifications, push and webhooks"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from games.live import streams
        from notifications import checks, inbox, receivers  # noqa: F401  (signals, checks)

        source = streams.MeSource(start=inbox.latest_id, more=inbox.stream_more)
        if source not in streams.ME_SOURCES:
            streams.ME_SOURCES.append(source)
