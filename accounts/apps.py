from django.apps import AppConfig


class AccountsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "accounts"
    verbose_name = "Accounts"

    def ready(self) -> None:
        from accounts import sanctions, token_cache
        from games.live import feed

        token_cache.connect()
        # The live streams end a suspended or signed-out holder's streams (games knows no account).
        if sanctions.stream_refusals not in feed.HOLDER_CHECKS:
            feed.HOLDER_CHECKS.append(sanctions.stream_refusals)
