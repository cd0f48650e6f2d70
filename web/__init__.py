"""The browser table: one template and static files (no build step), served at ``/``.

The page is a client of the public API and the game streams, like a phone app; nothing here
reads the database.
"""
