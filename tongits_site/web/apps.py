from django.apps import AppConfig


class WebConfig(AppConfig):
    name = "tongits_site.web"
    label = "web"
    verbose_name = "Browser table"
