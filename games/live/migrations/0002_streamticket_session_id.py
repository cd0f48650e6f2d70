from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("live", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="streamticket",
            name="session_id",
            field=models.UUIDField(
                blank=True,
                help_text="The session that asked for it: the ticket and the stream it opens end with it.",
                null=True,
            ),
        ),
    ]
