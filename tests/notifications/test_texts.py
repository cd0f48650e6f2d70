"""What a notification says, in its reader's language: the push's title and body in the
recipient's account language, the inbox's in the request's (notifications/push.py)."""

from __future__ import annotations

import itertools
import json
import uuid

from babel.messages.pofile import read_po
from django.utils import timezone, translation

from notifications import push
from notifications.models import Kind, Notification
from ops import messages
from tests.notifications.support import CARD_TOKEN

INBOX = "/api/v1/me/notifications"
_seq = itertools.count(1)


def notify(user, kind: str, game_id: uuid.UUID | None = None, **data) -> Notification:
    game_id = game_id or uuid.uuid4()
    return Notification.objects.create(
        user=user,
        kind=kind,
        cause=f"{kind}:{game_id}:{next(_seq)}",
        game_id=game_id,
        data={"game_id": str(game_id), **data},
        created_at=timezone.now(),
    )


def every_text() -> list[str]:
    """The English msgid of every title and body a notification may show."""
    lazy = [*push.TITLES.values(), push.OTHER_TITLE, push.OTHER_BODY]
    lazy += [body for bodies in push.BODIES.values() for body in bodies.values()]
    with translation.override(None):
        return [str(text) for text in lazy]


def test_every_kind_has_a_title_and_a_body(db, user_factory):
    assert set(push.TITLES) == set(push.BODIES) == set(Kind.values)
    user = user_factory()
    for kind in Kind.values:
        payload = push.payload_for(notify(user, kind))
        assert payload["title"] and payload["body"], kind
        assert "%(" not in payload["body"], payload


def test_a_body_names_the_player_and_the_table(db, user_factory):
    host, guest = user_factory(username="maria"), user_factory()
    game = uuid.uuid4()
    answered = notify(host, Kind.INVITATION_ANSWERED, game, user_id=guest.pk, accepted=True)
    assert push.payload_for(answered)["body"] == (
        f"{guest.username} accepted your invitation to table {game.hex[:8]}"
    )
    nobody = notify(host, Kind.INVITATION_ANSWERED, game, user_id=10**9, accepted=False)
    assert (
        push.payload_for(nobody)["body"]
        == f"A player declined your invitation to table {game.hex[:8]}"
    )


def test_no_card_reaches_a_text_in_any_language(db, user_factory):
    for language in ("en", "fil", "es", "vi", "tr", "ar"):
        user = user_factory(language=language)
        for kind in Kind.values:
            n = notify(user, kind, by="AS", hand=["KD", "10H"], card="7C", username="QS")
            text = json.dumps(push.payload_for(n), ensure_ascii=False)
            assert not CARD_TOKEN.search(text), (language, kind, text)


def test_the_inbox_gives_each_item_its_title_and_body_in_the_requests_language(
    user_factory, auth_client_factory
):
    client = auth_client_factory()
    host = user_factory(username="maria")
    game = uuid.uuid4()
    notify(client.user, Kind.INVITED, game, seat=1, by_user_id=host.pk)
    notify(client.user, Kind.MATCH_OVER, game, won=True, aborted=False)
    items = client.get(INBOX).json()["results"]
    assert [(i["kind"], i["title"], i["body"]) for i in items] == [
        ("match_over", "Match over", f"You won the match at table {game.hex[:8]}"),
        ("invited", "Invitation", f"maria invited you to table {game.hex[:8]}"),
    ]
    spanish = client.get(INBOX, HTTP_ACCEPT_LANGUAGE="es")
    assert spanish["Content-Language"] == "es"
    assert [i["kind"] for i in spanish.json()["results"]] == ["match_over", "invited"]


def test_every_notification_text_is_translated_in_every_language():
    """Fails until the translators have filled the .po files for the notifications' texts."""
    texts = set(every_text())
    found = [line for line in messages.problems() if any(repr(t) in line for t in texts)]
    assert found == [], f"{len(found)} problems, the first: " + "\n".join(found[:20])


def test_a_filipino_account_is_pushed_in_filipino(db, user_factory):
    """Fails until the Filipino catalog translates the notifications' texts."""
    with messages.po_path("django", "fil").open("rb") as handle:
        filipino = {m.id: m.string for m in read_po(handle, locale="fil") if m.id}
    untranslated = [text for text in every_text() if not filipino.get(text)]
    assert untranslated == []
    user = user_factory(language="fil")
    game = uuid.uuid4()
    payload = push.payload_for(notify(user, Kind.YOUR_TURN, game, draw_answer=False))
    assert payload["title"] == filipino["Your turn"]
    assert payload["body"] == filipino["Your turn at table %(table)s"] % {"table": game.hex[:8]}
