"""Make the chat's log append-only in the database itself, whatever the code does (as for
games_event and the chips ledger).

- ``chat_message`` and ``chat_hidden``: row triggers reject UPDATE and DELETE, statement
  triggers reject TRUNCATE. A message, and that staff hid it, are kept for good.
- ``chat_messagetext``: a row trigger rejects UPDATE (a text is never edited); DELETE is allowed,
  as deleting an account removes the texts its messages had.
"""

from django.db import migrations

FORWARD = """
CREATE FUNCTION chat_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: % is not allowed', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'integrity_constraint_violation',
              HINT = 'Chat messages and hides are never changed or removed.';
END;
$$;

CREATE TRIGGER chat_message_no_update_delete
    BEFORE UPDATE OR DELETE ON chat_message
    FOR EACH ROW EXECUTE FUNCTION chat_append_only();
CREATE TRIGGER chat_message_no_truncate
    BEFORE TRUNCATE ON chat_message
    FOR EACH STATEMENT EXECUTE FUNCTION chat_append_only();
CREATE TRIGGER chat_hidden_no_update_delete
    BEFORE UPDATE OR DELETE ON chat_hidden
    FOR EACH ROW EXECUTE FUNCTION chat_append_only();
CREATE TRIGGER chat_hidden_no_truncate
    BEFORE TRUNCATE ON chat_hidden
    FOR EACH STATEMENT EXECUTE FUNCTION chat_append_only();
CREATE TRIGGER chat_messagetext_no_update
    BEFORE UPDATE ON chat_messagetext
    FOR EACH ROW EXECUTE FUNCTION chat_append_only();
"""

REVERSE = """
DROP TRIGGER IF EXISTS chat_messagetext_no_update ON chat_messagetext;
DROP TRIGGER IF EXISTS chat_hidden_no_truncate ON chat_hidden;
DROP TRIGGER IF EXISTS chat_hidden_no_update_delete ON chat_hidden;
DROP TRIGGER IF EXISTS chat_message_no_truncate ON chat_message;
DROP TRIGGER IF EXISTS chat_message_no_update_delete ON chat_message;
DROP FUNCTION IF EXISTS chat_append_only();
"""


class Migration(migrations.Migration):
    dependencies = [("chat", "0001_initial")]

    operations = [migrations.RunSQL(FORWARD, REVERSE)]
