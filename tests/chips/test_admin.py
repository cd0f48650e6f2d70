"""Staff in the admin: the ledger read-only, and an adjustment posted by the wallets' action
(an entry with its reason and who made it; never an edit)."""

from __future__ import annotations

import pytest
from django.test import Client

from accounts.models import User
from chips import ledger, services
from chips.models import Entry
from tests.chips.support import available, quick_table

pytestmark = pytest.mark.django_db


def test_the_admin_adjusts_wallets_with_an_entry_and_shows_the_ledger(user_factory, settings):
    settings.TONGITS_SIGNUP_GRANT = 1000
    ann, bob = user_factory(), user_factory()
    game = quick_table(ann, 100)
    services.open_wallet(bob.pk)
    staff = User.objects.create_superuser("staff", password="x" * 20)
    client = Client()
    client.force_login(staff)
    for url in (
        "/admin/chips/account/",
        "/admin/chips/entry/",
        f"/admin/chips/entry/{Entry.objects.get(cause='buy_in').pk}/change/",
    ):
        response = client.get(url)
        assert response.status_code == 200, url
    listing = client.get("/admin/chips/account/?kind__exact=escrow").content.decode()
    assert str(game.pk) in listing and "300" in listing  # the escrow and what it holds

    wallets = [str(ledger.wallet_of(u.pk)) for u in (ann, bob)]
    form = {"action": "adjust", "_selected_action": wallets}
    page = client.post("/admin/chips/account/", form)
    assert page.status_code == 200 and b"Post the adjustment" in page.content  # the form
    response = client.post(
        "/admin/chips/account/", {**form, "apply": "1", "amount": "-950", "reason": "ticket 4"}
    )
    assert response.status_code == 302
    messages = [m.message for m in response.wsgi_request._messages]
    assert any("cannot give up 950" in m for m in messages), messages  # Ann has 900 left
    assert available(ann) == 900 and available(bob) == 50
    entry = Entry.objects.get(cause="adjustment")
    assert (entry.user_id, entry.reason, entry.created_by_id) == (bob.pk, "ticket 4", staff.pk)
    # Entries cannot be changed or deleted here.
    change = client.post(f"/admin/chips/entry/{entry.pk}/change/", {"reason": "edited"})
    assert change.status_code == 403
    assert client.post(f"/admin/chips/entry/{entry.pk}/delete/").status_code == 403
    assert Entry.objects.get(pk=entry.pk).reason == "ticket 4"
