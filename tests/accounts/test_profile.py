"""The profile others see: display names (a property test of what is accepted and refused),
avatars from the server's catalogue, country and language; shown beside the username."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from accounts import profile
from accounts.profile import DisplayNameRefused, check_display_name
from core.errors import Invalid

ROOT = Path(__file__).resolve().parent.parent.parent
REFUSED = ["admin", "moderator", "official"]

# ---------------------------------------------------------------- display names (pure)


def _all(accept) -> list[str]:
    return [chr(c) for c in range(0x30000) if accept(chr(c))]


def _bidi(ch: str) -> str:
    return unicodedata.bidirectional(ch)


#: Letters of one direction each, and digits of any script: those that take the direction of
#: the letters around them (0-9, Arabic-Indic), and for left-to-right names those that are
#: left-to-right themselves (Devanagari, Thai, ...).
LTR_LETTERS = st.sampled_from(
    _all(lambda ch: unicodedata.category(ch) in ("Lu", "Ll", "Lo") and _bidi(ch) == "L")
)
RTL_LETTERS = st.sampled_from(
    _all(lambda ch: unicodedata.category(ch) == "Lo" and _bidi(ch) in ("R", "AL"))
)
DIGITS = st.sampled_from(
    _all(lambda ch: unicodedata.category(ch) == "Nd" and _bidi(ch) in ("EN", "AN"))
)
LTR_DIGITS = st.sampled_from(
    _all(lambda ch: unicodedata.category(ch) == "Nd" and _bidi(ch) in ("EN", "AN", "L"))
)
SEPARATORS = st.sampled_from(list(" _-."))
#: What a name may never hold: controls, format characters (zero-width, bidi overrides),
#: private use, unassigned code points, symbols (emoji among them), other spaces.
FORBIDDEN = st.one_of(
    st.characters(categories=["Cc", "Cf", "Co", "Cn", "So", "Sm", "Zl", "Zp"]),
    st.sampled_from(["\u200b", "\u200d", "\u202e", "\u2066", "\u00a0", "\x00", "😀", "\u3000"]),
)


def _name(letters: st.SearchStrategy[str], digits=DIGITS) -> st.SearchStrategy[str]:
    piece = st.one_of(letters, letters, digits, SEPARATORS)
    return st.lists(piece, min_size=1, max_size=24).map("".join)


def _acceptable(text: str) -> bool:
    folded = profile._folded(text)
    return (
        any(ch.isalnum() for ch in text)
        and len(unicodedata.normalize("NFC", text).strip(" ")) <= 24
        and not any(profile._folded(word) in folded for word in REFUSED)
    )


@pytest.fixture(autouse=True)
def refused_words(settings):
    settings.TONGITS_REFUSED_NAME_WORDS = REFUSED


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.one_of(_name(LTR_LETTERS, LTR_DIGITS), _name(RTL_LETTERS)))
def test_names_of_letters_of_one_direction_digits_and_separators_are_accepted(text):
    assume(_acceptable(text))
    shown = check_display_name(text)
    assert shown == " ".join(unicodedata.normalize("NFC", text).split())
    assert 1 <= len(shown) <= 24


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=_name(LTR_LETTERS),
    bad=FORBIDDEN,
    where=st.integers(min_value=0, max_value=24),
)
def test_a_control_invisible_or_symbol_character_anywhere_is_refused(text, bad, where):
    assume(unicodedata.category(bad) not in ("Mn", "Mc"))
    with pytest.raises(DisplayNameRefused):
        check_display_name(text[:where] + bad + text[where:])


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(left=LTR_LETTERS, right=RTL_LETTERS, filler=_name(DIGITS))
def test_left_to_right_and_right_to_left_letters_together_are_refused(left, right, filler):
    with pytest.raises(DisplayNameRefused):
        check_display_name(f"{left}{filler[:10]}{right}")


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    word=st.sampled_from(REFUSED),
    upper=st.lists(st.booleans(), min_size=9, max_size=9),
    gap=st.sampled_from(["", ".", "_", "-", " "]),
    before=st.text(alphabet="xyz", max_size=4),
)
def test_refused_words_are_found_through_case_accents_and_separators(word, upper, gap, before):
    spelled = gap.join(c.upper() if u else c for c, u in zip(word, upper, strict=False))
    with pytest.raises(DisplayNameRefused):
        check_display_name((before + spelled)[:24])


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "...",
        "a" * 25,
        "Ana\u200bReyes",  # zero-width space
        "Ana\u202eReyes",  # right-to-left override
        "Ana\x00",
        "Ana 😀",
        "Ana\tReyes",
        "Ana\u0301\u0302\u0303\u0304\u0306",  # five marks on one letter
        "Ana محمد",
        "AdMiN",
        "the_0fficial",
        "o.f.f.i.c.i.a.l",
    ],
)
def test_examples_that_are_refused(text):
    if text == "the_0fficial":  # a digit for a letter is not the word: accepted
        assert check_display_name(text) == text
        return
    with pytest.raises(DisplayNameRefused):
        check_display_name(text)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("  Ana   Reyes ", "Ana Reyes"),
        ("Nguyễn Văn An", "Nguyễn Văn An"),
        ("Nguye\u0302\u0303n", "Nguyễn"),  # decomposed: stored composed (NFC)
        ("محمد_٢٠٢٤", "محمد_٢٠٢٤"),  # Arabic letters with Arabic-Indic digits
        ("Çağrı.K", "Çağrı.K"),
        ("a" * 24, "a" * 24),
        ("李小龙", "李小龙"),
    ],
)
def test_examples_that_are_accepted(text, shown):
    assert check_display_name(text) == shown


def test_a_refusal_is_an_invalid_kind_error_with_its_own_code():
    with pytest.raises(DisplayNameRefused) as caught:
        check_display_name("x" * 25)
    assert isinstance(caught.value, Invalid) and caught.value.code == "display_name_refused"


# ---------------------------------------------------------------- over the API


@pytest.mark.django_db
def test_a_profile_is_changed_and_reset_field_by_field(auth_client):
    changed = auth_client.patch(
        "/api/v1/me",
        {"display_name": " Ana  Reyes ", "avatar": "jeepney", "country": "ph", "language": "fil"},
        format="json",
    )
    assert changed.status_code == 200, changed.content
    body = changed.json()
    assert (body["display_name"], body["avatar"], body["country"], body["language"]) == (
        "Ana Reyes",
        "jeepney",
        "PH",
        "fil",
    )
    assert changed["Content-Language"] == "fil"  # the answer speaks the new language
    assert auth_client.get("/api/v1/me").json()["avatar"] == "jeepney"
    only_avatar = auth_client.patch("/api/v1/me", {"avatar": "parol"}, format="json").json()
    assert only_avatar["display_name"] == "Ana Reyes" and only_avatar["avatar"] == "parol"
    reset = auth_client.patch(
        "/api/v1/me",
        {"display_name": None, "avatar": "", "country": None, "language": ""},
        format="json",
    ).json()
    assert reset["display_name"] == auth_client.user.username
    assert reset["avatar"] == profile.AVATARS[auth_client.user.pk % len(profile.AVATARS)]
    assert reset["country"] == "" and reset["language"] == ""


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"display_name": "Ana\u202eReyes"}, 400, "display_name_refused"),
        ({"display_name": "x" * 25}, 400, "display_name_refused"),
        ({"display_name": "Admin Ana"}, 400, "display_name_refused"),
        ({"display_name": 7}, 400, "invalid"),
        ({"avatar": "dragon"}, 400, "invalid"),
        ({"country": "XX"}, 400, "invalid"),
        ({"country": "PHL"}, 400, "invalid"),
        ({"language": "de"}, 400, "invalid"),
    ],
)
def test_a_bad_profile_field_is_refused_and_nothing_changes(auth_client, body, status, code):
    answer = auth_client.patch("/api/v1/me", body, format="json")
    assert answer.status_code == status and answer.json()["code"] == code, answer.content
    me = auth_client.get("/api/v1/me").json()
    assert me["display_name"] == auth_client.user.username and me["country"] == ""


@pytest.mark.django_db
def test_the_avatar_catalogue_lists_every_key_with_a_picture_the_server_serves(api_client):
    listing = api_client.get("/api/v1/avatars")
    assert listing.status_code == 200
    assert [a["key"] for a in listing.json()] == list(profile.AVATARS)
    for avatar in listing.json():
        assert avatar["url"] == f"/static/web/avatars/{avatar['key']}.svg"
        picture = ROOT / "web" / "static" / "web" / "avatars" / f"{avatar['key']}.svg"
        assert picture.read_text(encoding="utf-8").lstrip().startswith("<svg"), picture


@pytest.mark.django_db
def test_the_leaderboard_history_and_table_show_the_display_name_and_avatar(auth_client_factory):
    from games import lobby
    from tests.chips.support import play_to_the_end

    client = auth_client_factory()
    client.patch("/api/v1/me", {"display_name": "Tita Baby", "avatar": "mango"}, format="json")
    user = client.user
    seats = [{"kind": "user"}, {"kind": "bot", "level": "easy"}, {"kind": "bot", "level": "easy"}]
    rules = {"preset": "standard", "wins_to_match": 1, "turn_seconds": 30}
    game = lobby.table_create(user=user, rules=rules, seats=seats, rated=True)
    view = client.get(f"/api/v1/games/{game.pk}").json()
    assert view["seats"][0]["display_name"] == "Tita Baby" and view["seats"][0]["avatar"] == "mango"
    play_to_the_end(game.pk, {0: user})
    from accounts.tasks import settle_match_now

    settle_match_now(str(game.pk))
    board = client.get("/api/v1/leaderboard").json()["results"]
    mine = next(e for e in board if e["username"] == user.username)
    assert (mine["display_name"], mine["avatar"]) == ("Tita Baby", "mango")
    detail = client.get(f"/api/v1/matches/{game.pk}").json()
    assert detail["seats"][0]["display_name"] == "Tita Baby"
    stats = client.get(f"/api/v1/players/{user.username}/stats").json()
    assert stats["display_name"] == "Tita Baby" and stats["avatar"] == "mango"
