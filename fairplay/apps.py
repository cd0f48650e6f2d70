from django.apps import AppConfig


class FairplayConfig(AppConfig):
    name = "fairplay"
    label = "fairplay"
    verbose_name = "Fair play (cases, reports, suspensions, appeals)"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from accounts import selectors as account_selectors
        from accounts.api import serializers as account_serializers
        from chips import ledger
        from fairplay import checks, receivers, selectors
        from fairplay.api.serializers import FairPlayExportSerializer

        receivers.connect()
        account_selectors.EXPORT_SECTIONS["fair_play"] = selectors.export
        account_serializers.EXPORT_SECTION_FIELDS["fair_play"] = lambda: FairPlayExportSerializer(
            help_text="My sanctions and appeals, the reports I made, where I signed in from."
        )
        # verify_ledger holds each chip a case moved against the case that moved it.
        ledger.register_check(checks.problems)
