from django.apps import AppConfig


class MatchmakingConfig(AppConfig):
    """Tickets, parties and the matcher that seats them (docs/matchmaking.md)."""

    name = "matchmaking"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The matcher runs beside the scheduler; its frames join /me/stream.
        from games import scheduling
        from games.live import streams
        from matchmaking import live, matcher, receivers  # noqa: F401  (signal receivers)

        if matcher.run_matcher not in scheduling.COMPANIONS:
            scheduling.COMPANIONS.append(matcher.run_matcher)
        source = streams.MeSource(start=live.latest_id, more=live.stream_more)
        if source not in streams.ME_SOURCES:
            streams.ME_SOURCES.append(source)
