from django.apps import AppConfig


class DetectionConfig(AppConfig):
    name = "fairplay.detection"
    label = "detection"
    verbose_name = "Fair play: detection"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from fairplay.detection import tasks

        tasks.connect()
