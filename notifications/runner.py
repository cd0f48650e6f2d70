"""The notifier: one loop that projects the logs (``notifications.projector``) and queues the
deliveries that are due, one Celery task each.

It wakes on the games' NOTIFY (an append may start someone's turn; at most every
``MIN_GAP_SECONDS``) and at least every ``POLL_SECONDS`` (chips entries, retries falling due).
Pushes are queued in batches (``TONGITS_PUSH_BATCH`` to a task), webhooks one each.
The outboxes are read after a run that recorded deliveries, and otherwise once every
``POLL_SECONDS`` (the pushes of invitations and sign-ins, recorded by their causes). A
delivery it queued is not queued again for a lease (``outbox.lease_seconds``): its task claims it
in the database for as long, and one whose worker died is due again when that claim runs out.
Several notifiers may run (the cause keys and the claims make doubles harmless); one is enough.
"""

from __future__ import annotations

import logging
import threading
import time

from celery import current_app
from django.conf import settings
from django.db import connection

from core import listening
from metrics import instruments
from notifications import outbox, push, webhooks
from notifications.projector import Projector
from notifications.tasks import DELIVER_PUSHES, DELIVER_WEBHOOK

logger = logging.getLogger(__name__)

MIN_GAP_SECONDS = 0.2
POLL_SECONDS = 1.0


class Queue:
    """Queues due deliveries by task name, each at most once per lease."""

    def __init__(self) -> None:
        self.queued: dict[tuple[str, int], float] = {}
        self.looked: float | None = None  # when the outboxes were last read

    def send(self, name: str, ids: list[int], batch: int = 0) -> int:
        """Queue the ids not queued within a lease: one task each, or (``batch`` > 0) one task
        per ``batch`` of them, its argument their list."""
        now, lease = time.monotonic(), outbox.lease_seconds()
        for key, at in list(self.queued.items()):
            if now - at > lease:
                del self.queued[key]
        fresh = [delivery_id for delivery_id in ids if (name, delivery_id) not in self.queued]
        groups = (
            [(chunk,) for chunk in _chunks(fresh, batch)]
            if batch > 0
            else [(delivery_id,) for delivery_id in fresh]
        )
        sent = 0
        for args in groups:
            try:
                current_app.send_task(name, args=args)
            except Exception:  # the broker is away: the next run queues them again
                logger.exception("notifier: could not queue %s%s", name, args)
                return sent
            chunk = args[0] if isinstance(args[0], list) else [args[0]]
            for delivery_id in chunk:
                self.queued[(name, delivery_id)] = now
            sent += len(chunk)
        return sent

    def due(self, fresh: bool = True) -> int:
        """Queue what is due: at once when ``fresh`` (this run recorded deliveries), else at most
        every ``POLL_SECONDS`` (retries falling due, pushes their causes recorded elsewhere)."""
        now = time.monotonic()
        if not fresh and self.looked is not None and now - self.looked < POLL_SECONDS:
            return 0
        self.looked = now
        pushes = self.send(DELIVER_PUSHES, push.due(), batch=max(1, settings.TONGITS_PUSH_BATCH))
        return pushes + self.send(DELIVER_WEBHOOK, webhooks.due())


def _chunks(ids: list[int], size: int) -> list[list[int]]:
    return [ids[start : start + size] for start in range(0, len(ids), size)]


def step(projector: Projector, queue: Queue) -> bool:
    """Project, then queue what is due; whether rows are still waiting to be read."""
    found, more = projector.run()
    queue.due(fresh=bool(found.pushes or found.messages))
    return more


def run_notifier(stop: threading.Event, *, poll: float = POLL_SECONDS) -> None:
    """The loop, until ``stop`` is set; a database error is logged and retried, never fatal."""
    webhooks.sync_endpoints()
    projector, queue = Projector(pace=poll), Queue()
    listener = listening.listen("notifier")
    try:
        while not stop.is_set():
            started = time.monotonic()
            try:
                busy = step(projector, queue)
                instruments.loop_beat.labels("notifier").set(time.time())
                if busy:
                    continue
            except Exception:
                logger.exception("notifier: run failed; retrying")
                connection.close()
                projector = Projector(pace=poll)  # its memory may be ahead of the log
                stop.wait(poll)
                continue
            stop.wait(max(0.0, MIN_GAP_SECONDS - (time.monotonic() - started)))
            if listener is None:
                stop.wait(poll)
                listener = None if stop.is_set() else listening.listen("notifier")
            elif not listening.wait(listener, poll, "notifier"):
                listener = None
    finally:
        try:
            projector.flush()  # the cursors as far as the runs read
        except Exception:
            logger.exception("notifier: could not save its cursors; a restart reads on from before")
        if listener is not None:
            listener.close()
        connection.close()
