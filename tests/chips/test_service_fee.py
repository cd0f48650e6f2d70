"""A room's service fee: a percent of each winner's winnings, paid to the house as an entry of
its own at the settlement, shown on the settlement and checked by ``verify_ledger``; and the
worked example of docs/chips.md, figure for figure."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import pytest

from chips import ledger, selectors, services
from chips.models import Entry
from games import lobby, store
from games.rules import table_stakes
from tests.chips.support import assert_sound, available, play_to_the_end, settle
from tongits_site.settings import rooms_setting

pytestmark = pytest.mark.django_db

# One round at stake 10: winnings of 20 chips or more, so a 5 % fee of at least a chip.
RULES = {"preset": "standard", "wins_to_match": 1, "stake": 10}
DOCS = Path(__file__).resolve().parents[2] / "docs" / "chips.md"


def test_the_worked_example_of_docs_chips_md_with_a_5_percent_fee(user_factory, settings):
    settings.TONGITS_SIGNUP_GRANT = 1000
    users = [user_factory() for _ in range(3)]
    seats = [u.pk for u in users]
    game_id = uuid.uuid4()
    services.escrow_buy_ins(game_id=game_id, seats=seats, buy_in=100)
    house = ledger.house_balance()
    paid = table_stakes([180, 30, -210], [100, 100, 100])
    services.settle_stakes(game_id=game_id, seats=seats, buy_in=100, paid=paid, fee_percent=5)

    fees = services.service_fees(seats, paid, 5)
    net = [p - f for p, f in zip(paid, fees, strict=True)]
    assert (paid, fees, net) == ([86, 14, -100], [4, 0, 0], [82, 14, -100])
    assert [available(u) for u in users] == [1082, 1014, 900]
    assert ledger.house_balance() - house == 4
    fee = Entry.objects.get(key=f"service_fee:{game_id}")
    wallets = [ledger.wallet_of(u.pk) for u in users]
    assert {p.account_id: p.amount for p in fee.postings.all()} == {wallets[0]: -4, 1: 4}
    shown = selectors.settlement(game_id=game_id)
    assert (shown["fee_percent"], shown["fees"], shown["net"]) == (5, [4, 0, 0], [82, 14, -100])

    # docs/chips.md says the same, figure for figure.
    text = " ".join(DOCS.read_text().split())
    example = re.search(r"\*\*With a service fee\.\*\*(.*?)\(`tests/chips/test_service_fee", text)
    assert example, "docs/chips.md has no worked example of the service fee"
    said = example.group(1)
    assert "5 %" in said and "86 x 5 / 100 = 4.3" in said and "14 x 5 / 100 = 0.7" in said
    assert "Fees: 4, 0, 0" in said and "Net: +82, +14, -100" in said
    assert "the house +4" in said
    assert "wallets 1,082, 1,014 and 900" in said


def test_a_matched_table_with_a_fee_pays_it_at_the_settlement(user_factory, settings):
    """Two people and a bot at a room with a 5 % fee, until one of the people wins."""
    settings.TONGITS_SIGNUP_GRANT = 100000
    people = [user_factory(), user_factory()]
    for attempt in range(12):
        game = lobby.table_matched(
            people=people, bots=["easy"], rules=RULES, rated=False, buy_in=100, fee_percent=5
        )
        assert store.load(game.pk).fee_percent == 5
        play_to_the_end(game.pk, {0: people[0], 1: people[1]}, seed=attempt)
        owed = list(store.load(game.pk).chips)
        assert settle(game.pk) == "settled"
        paid = table_stakes(owed, [100, 100, 100])
        fees = [p * 5 // 100 if seat < 2 and p > 0 else 0 for seat, p in enumerate(paid)]
        shown = selectors.settlement(game_id=game.pk)
        assert shown["fees"] == fees and shown["fee_percent"] == 5
        assert_sound()
        if any(fees):
            break
    else:
        raise AssertionError("no person won a match with a fee in 12 matches")
    fee = Entry.objects.get(key=f"service_fee:{game.pk}")
    assert fee.data == {"fee_percent": 5, "fees": fees, "seats": [p.pk for p in people] + [None]}
    assert settle(game.pk) == "settled"  # settled again: nothing more
    assert Entry.objects.filter(key=f"service_fee:{game.pk}").count() == 1


def test_a_bot_winning_pays_no_fee_and_a_table_without_one_pays_none(user_factory, settings):
    settings.TONGITS_SIGNUP_GRANT = 1000
    person = user_factory()
    game_id = uuid.uuid4()
    services.escrow_buy_ins(game_id=game_id, seats=[person.pk, None, None], buy_in=100)
    services.settle_stakes(
        game_id=game_id,
        seats=[person.pk, None, None],
        buy_in=100,
        paid=[-100, 60, 40],
        fee_percent=5,
    )
    assert not Entry.objects.filter(cause="service_fee").exists()


def test_rooms_take_an_optional_fee():
    rooms = rooms_setting("100:5:easy,1000:50::5,10000:500:hard:10")
    assert [(r["bot_level"], r["fee_percent"]) for r in rooms] == [
        ("easy", 0),
        ("normal", 5),
        ("hard", 10),
    ]
    with pytest.raises(ValueError):
        rooms_setting("100:5:easy:101")


def test_the_rooms_api_shows_the_fee(auth_client, settings):
    settings.TONGITS_ROOMS = rooms_setting("100:5:easy:5")
    room = auth_client.get("/api/v1/rooms").json()[0]
    assert room["fee_percent"] == 5 and room["key"] == "100:5"


def test_staff_see_the_house_day_by_day(auth_client_factory, user_factory, settings):
    settings.TONGITS_SIGNUP_GRANT = 1000
    users = [user_factory() for _ in range(3)]
    game_id = uuid.uuid4()
    seats = [u.pk for u in users]
    services.escrow_buy_ins(game_id=game_id, seats=seats, buy_in=100)
    services.settle_stakes(
        game_id=game_id, seats=seats, buy_in=100, paid=[86, 14, -100], fee_percent=5
    )
    staff = auth_client_factory(user_factory(is_staff=True))
    house = staff.get("/api/v1/house")
    assert house.status_code == 200, house.content
    body = house.json()
    assert body["balance"] == ledger.house_balance()
    today = body["days"][-1]
    assert today["causes"]["service_fee"] == 4 and today["causes"]["signup_grant"] <= -3000
    assert today["balance"] == body["balance"]
    player = auth_client_factory(users[0])
    assert player.get("/api/v1/house").status_code == 403
