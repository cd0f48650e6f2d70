"""Make fair play's records of decisions append-only in the database itself, as the ledger's
and the events' are: triggers reject UPDATE and DELETE of each row and TRUNCATE of each table.
A decision is never edited; a later one is added, with who and why."""

from django.db import migrations

TABLES = (
    "fairplay_caseevent",
    "fairplay_report",
    "fairplay_suspension",
    "fairplay_suspensionlift",
    "fairplay_appeal",
)

FORWARD = """
CREATE FUNCTION fairplay_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: % is not allowed', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'integrity_constraint_violation',
              HINT = 'Fair-play decisions are never changed; record a new one instead.';
END;
$$;
""" + "".join(
    f"""
CREATE TRIGGER {table}_no_update_delete BEFORE UPDATE OR DELETE ON {table}
    FOR EACH ROW EXECUTE FUNCTION fairplay_append_only();
CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table}
    FOR EACH STATEMENT EXECUTE FUNCTION fairplay_append_only();
"""
    for table in TABLES
)

REVERSE = "".join(
    f"""
DROP TRIGGER IF EXISTS {table}_no_truncate ON {table};
DROP TRIGGER IF EXISTS {table}_no_update_delete ON {table};
"""
    for table in TABLES
) + "DROP FUNCTION IF EXISTS fairplay_append_only();"


class Migration(migrations.Migration):
    dependencies = [("fairplay", "0001_initial")]

    operations = [migrations.RunSQL(FORWARD, REVERSE)]
