from django.apps import AppConfig


class WebConfig(AppConfig):
    name = "web"
    label = "web"
    verbose_name = "Browser table"
