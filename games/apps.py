from django.apps import AppConfig


class GamesConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "games"
    verbose_name = "Games"

    def ready(self) -> None:
        from games.live import rematch, streams

        # /me/stream's rematch frames (games.rematch wakes the match's people).
        source = streams.MeSource(start=rematch.stream_start, more=rematch.stream_more)
        if source not in streams.ME_SOURCES:
            streams.ME_SOURCES.append(source)
