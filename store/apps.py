from django.apps import AppConfig
from django.db.models.signals import post_migrate


class StoreConfig(AppConfig):
    name = "store"
    verbose_name = "Store (chips bought in the App Store and Google Play)"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from chips import ledger
        from store import checks

        # verify_ledger holds every purchase and refund entry against its stored payload.
        ledger.register_check(checks.problems)
        post_migrate.connect(_seed, sender=self, dispatch_uid="store-seed-products")


def _seed(**kwargs: object) -> None:
    """The catalogue's missing products from TONGITS_STORE_PRODUCTS, after each migrate."""
    from store import services

    services.seed_products()
