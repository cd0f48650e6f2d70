"""Live tables: Server-Sent Events and long-polls woken by PostgreSQL ``NOTIFY`` (docs/live.md).

    listener.py  the per-process LISTEN connection and the wake-ups it hands out (hubs)
    streams.py   the SSE generators: a game's feed and a player's own notices
    feed.py      the reads they make (through games.selectors and games.store) and the tickets
    db.py        the small thread pool every read of this package runs in
    signals.py   NOTIFY for the game-row changes that append no event (seats, settlement)

A Django app of its own (label ``live``) for its one table, the stream tickets.
"""
