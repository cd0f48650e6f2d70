"""Events stored compactly: hashes as 32 bytes, no stored ``prev_hash``, finished matches packed.

1. A check first: every stored ``prev_hash`` must be the previous event's ``hash`` (64 zeros for
   seq 1), so dropping it loses nothing; the migration refuses to run otherwise and names the
   games (``manage.py verify_events`` tells what is wrong with them).
2. ``games_event.hash`` and ``games_game.last_hash`` become ``bytea`` (``decode(..., 'hex')``,
   32 bytes; the head's empty text before a first event, empty bytes) and ``prev_hash`` goes:
   the hashes themselves, and so every chain, are unchanged (``manage.py verify_events``
   afterwards).
3. ``games_eventarchive``: a finished match's events in one compressed row (``games.archive``),
   append-only like the events; the events' trigger lets a row be deleted only once its game's
   archive holds it.

Backwards: the archives are unpacked into ``games_event`` again, ``prev_hash`` is derived once
more, and the hashes are hex text again.
"""

import django.db.models.deletion
from django.db import migrations, models

CHECK = """
DO $$
DECLARE bad text;
BEGIN
    SELECT string_agg(DISTINCT game_id::text, ', ') INTO bad FROM (
        SELECT game_id, prev_hash,
               coalesce(lag(hash) OVER (PARTITION BY game_id ORDER BY seq),
                        repeat('0', 64)) AS derived,
               seq, lag(seq) OVER (PARTITION BY game_id ORDER BY seq) AS prev_seq
        FROM games_event
    ) e
    WHERE e.prev_hash <> e.derived OR (e.prev_seq IS NOT NULL AND e.prev_seq <> e.seq - 1)
          OR (e.prev_seq IS NULL AND e.seq <> 1);
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'games_event: prev_hash is not the previous event''s hash in games %', bad
            USING HINT = 'Run manage.py verify_events on the old release and repair these '
                         'games before migrating: their prev_hash cannot be derived.';
    END IF;
END;
$$;
"""

TO_BYTES = """
ALTER TABLE games_event DROP COLUMN prev_hash,
    ALTER COLUMN hash TYPE bytea USING decode(hash, 'hex');
ALTER TABLE games_game ALTER COLUMN last_hash DROP DEFAULT,
    ALTER COLUMN last_hash TYPE bytea USING decode(last_hash, 'hex');
"""

TO_TEXT = """
ALTER TABLE games_event ADD COLUMN prev_hash varchar(64),
    ALTER COLUMN hash TYPE varchar(64) USING encode(hash, 'hex');
ALTER TABLE games_event DISABLE TRIGGER games_event_no_update_delete;
UPDATE games_event e SET prev_hash = coalesce(
    (SELECT p.hash FROM games_event p WHERE p.game_id = e.game_id AND p.seq = e.seq - 1),
    repeat('0', 64));
ALTER TABLE games_event ENABLE TRIGGER games_event_no_update_delete;
ALTER TABLE games_event ALTER COLUMN prev_hash SET NOT NULL;
ALTER TABLE games_game ALTER COLUMN last_hash TYPE varchar(64) USING encode(last_hash, 'hex');
"""

TRIGGERS = """
CREATE OR REPLACE FUNCTION games_event_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    -- A finished match's rows may leave only into its archive, written before them.
    IF TG_OP = 'DELETE' AND EXISTS (
        SELECT 1 FROM games_eventarchive a WHERE a.game_id = OLD.game_id AND a.version >= OLD.seq
    ) THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'games_event is append-only: % is not allowed', TG_OP
        USING ERRCODE = 'integrity_constraint_violation',
              HINT = 'Game events are never changed; append new events instead.';
END;
$$;

CREATE FUNCTION games_eventarchive_write_once() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'games_eventarchive is written once: % is not allowed', TG_OP
        USING ERRCODE = 'integrity_constraint_violation',
              HINT = 'An archive of a finished match is never changed.';
END;
$$;

CREATE TRIGGER games_eventarchive_no_update_delete
    BEFORE UPDATE OR DELETE ON games_eventarchive
    FOR EACH ROW EXECUTE FUNCTION games_eventarchive_write_once();

CREATE TRIGGER games_eventarchive_no_truncate
    BEFORE TRUNCATE ON games_eventarchive
    FOR EACH STATEMENT EXECUTE FUNCTION games_eventarchive_write_once();

-- The packed events are compressed already: no second try at compressing them. Past 2 kB
-- (most archives) they go to TOAST, whose 2 kB chunks fill its pages (a 5 kB archive kept on
-- its row would leave most of an 8 kB page empty).
ALTER TABLE games_eventarchive ALTER COLUMN events SET STORAGE EXTERNAL;
"""

UNTRIGGER = """
DROP TRIGGER IF EXISTS games_eventarchive_no_truncate ON games_eventarchive;
DROP TRIGGER IF EXISTS games_eventarchive_no_update_delete ON games_eventarchive;
DROP FUNCTION IF EXISTS games_eventarchive_write_once();
CREATE OR REPLACE FUNCTION games_event_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'games_event is append-only: % is not allowed', TG_OP
        USING ERRCODE = 'integrity_constraint_violation',
              HINT = 'Game events are never changed; append new events instead.';
END;
$$;
"""


def unpack_archives(apps, schema_editor):
    """Backwards: every archive's events back into ``games_event`` (as the store would read
    them), so the older release finds its rows; the archives are dropped with their table."""
    from games import archive

    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT game_id, version, last_hash, events FROM games_eventarchive")
        for game_id, version, last_hash, packed in cursor.fetchall():
            rows = archive.unpack(str(game_id), version, bytes(last_hash), bytes(packed))
            for row in rows:
                cursor.execute(
                    "INSERT INTO games_event (id, game_id, seq, type, data, actor, recorded_at, "
                    "hash) VALUES (%s, %s, %s, %s, %s::jsonb, %s, %s, decode(%s, 'hex'))",
                    [
                        row.id,
                        game_id,
                        row.seq,
                        row.type,
                        archive.data_text(row.data),
                        row.actor,
                        row.recorded_at,
                        row.hash,
                    ],
                )


class Migration(migrations.Migration):
    dependencies = [("games", "0010_merge_rematch_spectators")]

    operations = [
        migrations.RunSQL(CHECK, migrations.RunSQL.noop),
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunSQL(TO_BYTES, TO_TEXT)],
            state_operations=[
                migrations.RemoveField(model_name="event", name="prev_hash"),
                migrations.AlterField(
                    model_name="event",
                    name="hash",
                    field=models.BinaryField(max_length=32),
                ),
                migrations.AlterField(
                    model_name="game",
                    name="last_hash",
                    field=models.BinaryField(
                        blank=True, default=b"", editable=False, max_length=32
                    ),
                ),
            ],
        ),
        migrations.CreateModel(
            name="EventArchive",
            fields=[
                (
                    "game",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.PROTECT,
                        primary_key=True,
                        related_name="+",
                        serialize=False,
                        to="games.game",
                    ),
                ),
                (
                    "version",
                    models.PositiveIntegerField(help_text="Events packed: seq 1 to this."),
                ),
                (
                    "last_hash",
                    models.BinaryField(
                        help_text="The chain head (SHA-256, 32 bytes).", max_length=32
                    ),
                ),
                ("ended_id", models.BigIntegerField(blank=True, null=True)),
                (
                    "events",
                    models.BinaryField(help_text="zlib of the packed events (games.archive)."),
                ),
                ("archived_at", models.DateTimeField()),
            ],
        ),
        migrations.RunSQL(TRIGGERS, UNTRIGGER),
        migrations.RunPython(migrations.RunPython.noop, unpack_archives),
    ]
