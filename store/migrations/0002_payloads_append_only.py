"""The stores' payloads are append-only in the database itself: UPDATE, DELETE and TRUNCATE of
``store_payload`` are rejected, as for the chips ledger (a dispute's record is never edited)."""

from django.db import migrations

FORWARD = """
CREATE FUNCTION store_payload_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: % is not allowed', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$;
CREATE TRIGGER store_payload_no_update_delete
    BEFORE UPDATE OR DELETE ON store_payload
    FOR EACH ROW EXECUTE FUNCTION store_payload_append_only();
CREATE TRIGGER store_payload_no_truncate
    BEFORE TRUNCATE ON store_payload
    FOR EACH STATEMENT EXECUTE FUNCTION store_payload_append_only();
"""

REVERSE = """
DROP TRIGGER IF EXISTS store_payload_no_truncate ON store_payload;
DROP TRIGGER IF EXISTS store_payload_no_update_delete ON store_payload;
DROP FUNCTION IF EXISTS store_payload_append_only();
"""


class Migration(migrations.Migration):
    dependencies = [("store", "0001_initial")]

    operations = [migrations.RunSQL(FORWARD, REVERSE)]
