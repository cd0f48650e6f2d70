from django.apps import AppConfig


class ChatConfig(AppConfig):
    name = "chat"
    verbose_name = "Table chat and its moderation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        """Chat's frames on the games' streams, its section of ``/me/export`` (and of the
        export's schema) and its receiver of account deletions: registered here, since no app
        below may import chat."""
        from accounts import selectors as account_selectors
        from accounts.api import serializers as account_serializers
        from chat import live, receivers, selectors  # noqa: F401  (receivers: signals)
        from chat.api.serializers import ChatExportSerializer
        from games.live import streams

        source = streams.GameSource(start=live.start, more=live.more)
        if source not in streams.GAME_SOURCES:
            streams.GAME_SOURCES.append(source)
        account_selectors.EXPORT_SECTIONS["chat"] = selectors.export
        account_serializers.EXPORT_SECTION_FIELDS["chat"] = lambda: ChatExportSerializer(
            help_text="Table chat: the messages I wrote (their text, unless deleted), the "
            "players I mute, the messages I reported."
        )
