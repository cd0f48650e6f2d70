from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0009_rematch"),
        ("games", "0009_spectators"),
    ]

    operations = []
