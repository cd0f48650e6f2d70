from django.apps import AppConfig


class TournamentsConfig(AppConfig):
    """Sit-and-gos and scheduled tournaments, and the weekly leaderboards
    (docs/tournaments.md)."""

    name = "tournaments"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The tournaments' loop runs beside the scheduler; their frames join /me/stream.
        from games import scheduling
        from games.live import streams
        from tournaments import live, loop, receivers  # noqa: F401  (signal receivers)

        if loop.run_tournaments not in scheduling.COMPANIONS:
            scheduling.COMPANIONS.append(loop.run_tournaments)
        source = streams.MeSource(start=live.latest_id, more=live.stream_more)
        if source not in streams.ME_SOURCES:
            streams.ME_SOURCES.append(source)
