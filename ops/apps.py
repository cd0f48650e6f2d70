from django.apps import AppConfig


class OpsConfig(AppConfig):
    name = "ops"
    label = "ops"
    verbose_name = "operations"
    default_auto_field = "django.db.models.BigAutoField"
