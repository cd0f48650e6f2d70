"""Make games_event append-only in the database itself, whatever the application does.

A row trigger rejects UPDATE and DELETE; a statement trigger rejects TRUNCATE (row triggers do
not fire on TRUNCATE). Only a table owner can get around them (ALTER TABLE ... DISABLE TRIGGER),
and the hash chain still shows any edit made that way (manage.py verify_events).
"""

from django.db import migrations

FORWARD = """
CREATE FUNCTION games_event_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'games_event is append-only: % is not allowed', TG_OP
        USING ERRCODE = 'integrity_constraint_violation',
              HINT = 'Game events are never changed; append new events instead.';
END;
$$;

CREATE TRIGGER games_event_no_update_delete
    BEFORE UPDATE OR DELETE ON games_event
    FOR EACH ROW EXECUTE FUNCTION games_event_append_only();

CREATE TRIGGER games_event_no_truncate
    BEFORE TRUNCATE ON games_event
    FOR EACH STATEMENT EXECUTE FUNCTION games_event_append_only();
"""

REVERSE = """
DROP TRIGGER IF EXISTS games_event_no_truncate ON games_event;
DROP TRIGGER IF EXISTS games_event_no_update_delete ON games_event;
DROP FUNCTION IF EXISTS games_event_append_only();
"""


class Migration(migrations.Migration):
    dependencies = [("games", "0001_initial")]

    operations = [migrations.RunSQL(FORWARD, REVERSE)]
