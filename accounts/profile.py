"""The profile others see: a display name, an avatar, a country and a language.

Pure checks and defaults, no writes (``accounts.services.profile_update`` writes). A display
name is what a seat, a chat line or the leaderboard shows beside the username, so it must read
the same to everyone: letters of any script, digits, spaces and ``_-.`` only; no control,
format (zero-width, bidi override) or unassigned characters, which can hide or reorder text; not
both left-to-right and right-to-left letters, which the bidi algorithm would reorder around each
other; and none of the refused words (``TONGITS_REFUSED_NAME_WORDS``), compared without case,
width, accents or separators.
"""

from __future__ import annotations

import unicodedata
from typing import Any

import pycountry
from django.conf import settings
from django.templatetags.static import static
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from core.errors import Invalid

DISPLAY_NAME_MAX = 24
#: Combining marks one letter may carry (Vietnamese, Arabic harakat, Indic vowel signs need
#: two at most; more is "zalgo" text that spills over its neighbours).
MAX_MARKS = 3
PUNCTUATION = frozenset(" _-.")

#: The avatars' catalogue: each key's picture is web/static/web/avatars/<key>.svg.
AVATARS = (
    "carabao",
    "tarsier",
    "eagle",
    "jeepney",
    "mango",
    "sampaguita",
    "parol",
    "banca",
    "coconut",
    "sun",
    "pearl",
    "anahaw",
)


class DisplayNameRefused(Invalid):
    code = "display_name_refused"
    detail = gettext_lazy("This display name cannot be used.")


def avatar_url(key: str) -> str:
    """Where the server serves an avatar's picture (a path under the static files)."""
    return static(f"web/avatars/{key}.svg")


def avatar_of(user: Any) -> str:
    """The user's avatar key: the one chosen, else one picked by the account's id."""
    chosen = getattr(user, "avatar", "")
    if chosen in AVATARS:
        return chosen
    return AVATARS[(getattr(user, "pk", 0) or 0) % len(AVATARS)]


def _folded(text: str) -> str:
    """``text`` without case, width, accents or separators, for comparing words."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(ch for ch in decomposed if ch.isalnum())


def _bidi_sides(text: str) -> set[str]:
    sides = set()
    for ch in text:
        kind = unicodedata.bidirectional(ch)
        if kind == "L":
            sides.add("ltr")
        elif kind in ("R", "AL"):
            sides.add("rtl")
    return sides


def check_display_name(text: str) -> str:
    """The display name to store (NFC, trimmed, single spaces), or ``DisplayNameRefused``
    saying why."""
    name = unicodedata.normalize("NFC", text).strip(" ")
    while "  " in name:
        name = name.replace("  ", " ")
    if not name:
        raise DisplayNameRefused(_("A display name needs at least one letter or digit."))
    if len(name) > DISPLAY_NAME_MAX:
        raise DisplayNameRefused(
            _("A display name has at most %(max)s characters.") % {"max": DISPLAY_NAME_MAX}
        )
    marks = 0
    for index, ch in enumerate(name):
        category = unicodedata.category(ch)
        if category in ("Mn", "Mc") and index > 0:
            marks += 1
            if marks > MAX_MARKS:
                raise DisplayNameRefused(_("Too many accents on one letter."))
            continue
        marks = 0
        if category.startswith("L") or category == "Nd" or ch in PUNCTUATION:
            continue
        raise DisplayNameRefused(
            _("Only letters, digits, spaces and _ - . may be used in a display name.")
        )
    if not any(ch.isalnum() for ch in name):
        raise DisplayNameRefused(_("A display name needs at least one letter or digit."))
    if len(_bidi_sides(name)) > 1:
        raise DisplayNameRefused(
            _("A display name cannot mix left-to-right and right-to-left letters.")
        )
    folded = _folded(name)
    for word in settings.TONGITS_REFUSED_NAME_WORDS:
        if word and _folded(word) and _folded(word) in folded:
            raise DisplayNameRefused()
    return name


def country_code(code: str) -> str | None:
    """``code`` as an ISO 3166-1 alpha-2 code in upper case ("" for none), or None if it is
    not one."""
    if code == "":
        return ""
    if len(code) == 2 and code.isascii() and pycountry.countries.get(alpha_2=code.upper()):
        return code.upper()
    return None
