from django.db import migrations, models

CACHE_TABLE = "tongits_cache"


def create_cache_table(apps, schema_editor):
    """The database cache's table (the throttle cache without CACHE_URL), made here so that
    `migrate` (run by `make run` and compose's migrate service) is the only set-up step."""
    from django.core.management.commands.createcachetable import Command

    command = Command()
    command.verbosity = 0
    command.create_table(schema_editor.connection.alias, CACHE_TABLE, dry_run=False)


def drop_cache_table(apps, schema_editor):
    schema_editor.execute(f"DROP TABLE IF EXISTS {CACHE_TABLE}")


class Migration(migrations.Migration):
    initial = True
    dependencies = []

    operations = [
        migrations.CreateModel(
            name="Heartbeat",
            fields=[
                ("name", models.CharField(max_length=32, primary_key=True, serialize=False)),
                ("beat_at", models.DateTimeField()),
            ],
        ),
        migrations.RunPython(create_cache_table, drop_cache_table),
    ]
