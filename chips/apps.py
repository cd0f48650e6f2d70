from django.apps import AppConfig


class ChipsConfig(AppConfig):
    name = "chips"
    verbose_name = "Chips (wallets, escrow, the house)"
    default_auto_field = "django.db.models.BigAutoField"
