"""Make the ledger append-only and double-entry in the database itself, whatever the code does.

- Row triggers reject UPDATE and DELETE of entries and postings; statement triggers reject
  TRUNCATE (as for games_event). A correction is a new ``adjustment`` entry, never an edit.
- A deferred constraint trigger checks, when the transaction commits, that the postings of each
  entry it touched sum to zero and that the entry has at least two: a transfer that does not
  balance never commits.
- The house account (the source of grants and the bots' bankroll) is account 1, made here; the
  ledger makes it again with every entry if it is missing (a test flush empties every table),
  and the other accounts' ids start at 2, even after a sequence is reset.
"""

from django.db import migrations

FORWARD = """
CREATE FUNCTION chips_ledger_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: % is not allowed', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'integrity_constraint_violation',
              HINT = 'Ledger entries are never changed; post an adjustment instead.';
END;
$$;

CREATE TRIGGER chips_entry_no_update_delete
    BEFORE UPDATE OR DELETE ON chips_entry
    FOR EACH ROW EXECUTE FUNCTION chips_ledger_append_only();
CREATE TRIGGER chips_entry_no_truncate
    BEFORE TRUNCATE ON chips_entry
    FOR EACH STATEMENT EXECUTE FUNCTION chips_ledger_append_only();
CREATE TRIGGER chips_posting_no_update_delete
    BEFORE UPDATE OR DELETE ON chips_posting
    FOR EACH ROW EXECUTE FUNCTION chips_ledger_append_only();
CREATE TRIGGER chips_posting_no_truncate
    BEFORE TRUNCATE ON chips_posting
    FOR EACH STATEMENT EXECUTE FUNCTION chips_ledger_append_only();

CREATE FUNCTION chips_entry_balanced() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    total numeric;
    legs integer;
BEGIN
    SELECT coalesce(sum(amount), 0), count(*) INTO total, legs
        FROM chips_posting WHERE entry_id = NEW.entry_id;
    IF total <> 0 OR legs < 2 THEN
        RAISE EXCEPTION 'chips entry % does not balance: % posting(s) summing to %',
            NEW.entry_id, legs, total
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NULL;
END;
$$;

CREATE CONSTRAINT TRIGGER chips_posting_balanced
    AFTER INSERT ON chips_posting
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION chips_entry_balanced();

ALTER TABLE chips_account ALTER COLUMN id SET START WITH 2 RESTART WITH 2;
INSERT INTO chips_account (id, kind, created_at, listed) VALUES (1, 'house', now(), false)
    ON CONFLICT DO NOTHING;
"""

REVERSE = """
DROP TRIGGER IF EXISTS chips_posting_balanced ON chips_posting;
DROP FUNCTION IF EXISTS chips_entry_balanced();
DROP TRIGGER IF EXISTS chips_posting_no_truncate ON chips_posting;
DROP TRIGGER IF EXISTS chips_posting_no_update_delete ON chips_posting;
DROP TRIGGER IF EXISTS chips_entry_no_truncate ON chips_entry;
DROP TRIGGER IF EXISTS chips_entry_no_update_delete ON chips_entry;
DROP FUNCTION IF EXISTS chips_ledger_append_only();
"""


class Migration(migrations.Migration):
    dependencies = [("chips", "0001_initial")]

    operations = [migrations.RunSQL(FORWARD, REVERSE)]
