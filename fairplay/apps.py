from django.apps import AppConfig


class FairplayConfig(AppConfig):
    name = "fairplay"
    label = "fairplay"
    verbose_name = "Fair play (cases, reports, suspensions, appeals)"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from chips import ledger
        from fairplay import checks, receivers

        receivers.connect()
        # verify_ledger holds each chip a case moved against the case that moved it.
        ledger.register_check(checks.problems)
