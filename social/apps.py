from django.apps import AppConfig


class SocialConfig(AppConfig):
    """Friends, blocks and presence (docs/friends.md)."""

    name = "social"
    verbose_name = "Friends, blocks and presence"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        """Social's checks and frames, registered where the apps below look for them (none of
        them may import social): the lobby's seating guard, the chat's hidden authors, the
        stream places' watcher, ``/me/stream``'s presence frames and ``/me/export``'s section;
        and its receivers of the games' and accounts' news."""
        from django.contrib.auth import get_user_model
        from django.db.models.signals import post_save

        from accounts import selectors as account_selectors
        from accounts.api import serializers as account_serializers
        from chat import selectors as chat_selectors
        from games import lobby
        from games.live import streams
        from games.models import Game
        from ops import stream_slots
        from social import live, presence, receivers, selectors
        from social.api.serializers import SocialExportSerializer

        if selectors.may_seat not in lobby.SEATING_GUARDS:
            lobby.SEATING_GUARDS.append(selectors.may_seat)
        if selectors.blocked_ids not in chat_selectors.HIDDEN_AUTHORS:
            chat_selectors.HIDDEN_AUTHORS.append(selectors.blocked_ids)
        if presence.stream_watcher not in stream_slots.WATCHERS:
            stream_slots.WATCHERS.append(presence.stream_watcher)
        source = streams.MeSource(start=live.stream_start, more=live.stream_more)
        if source not in streams.ME_SOURCES:
            streams.ME_SOURCES.append(source)
        account_selectors.EXPORT_SECTIONS["social"] = selectors.export
        account_serializers.EXPORT_SECTION_FIELDS["social"] = lambda: SocialExportSerializer(
            help_text="Friends, friend requests either way, blocks, and whether friends see "
            "my presence."
        )
        post_save.connect(receivers.game_saved, sender=Game, dispatch_uid="social.game_saved")
        post_save.connect(
            receivers.user_saved, sender=get_user_model(), dispatch_uid="social.user_saved"
        )
