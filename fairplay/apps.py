from django.apps import AppConfig


class FairplayConfig(AppConfig):
    name = "fairplay"
    label = "fairplay"
    verbose_name = "Fair play (cases, reports, suspensions, appeals)"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from fairplay import receivers

        receivers.connect()
