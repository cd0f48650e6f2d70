"""Create the configured PostgreSQL database if it does not exist yet.

    python -m ops.ensure_db

Connects to the server's ``postgres`` maintenance database with the credentials of
DATABASE_URL. `make run` (ops.stack) and the migrate service of docker/compose.yaml call
it before `migrate`.
"""

import os
import sys

import django
import psycopg
from psycopg import sql


def server_params(db: dict, **extra) -> dict:
    """psycopg connection keywords for the server of a Django database, on its ``postgres`` db."""
    params = {
        "dbname": "postgres",
        "user": db.get("USER"),
        "password": db.get("PASSWORD"),
        "host": db.get("HOST"),
        "port": db.get("PORT"),
        **extra,
    }
    return {key: value for key, value in params.items() if value}


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tongits_site.settings")
    django.setup()
    from django.conf import settings

    db = settings.DATABASES["default"]
    if "postgresql" not in db["ENGINE"]:
        print(f"ensure_db: {db['ENGINE']} is not PostgreSQL; nothing to do")
        return 0
    with psycopg.connect(**server_params(db), autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [db["NAME"]])
        if exists.fetchone():
            return 0
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(db["NAME"])))
        print(f"ensure_db: created database {db['NAME']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
