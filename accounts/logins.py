"""Ways into an account besides a password: a device's key (guests), Apple, Google; and the
profile others see. Services (they write); the API edge calls them.

A guest starts on a phone with a key the app made and keeps in the keychain: the first
``device_sign_in`` with it makes an account (a generated ``guest-`` name, the sign-up grant, no
password), every later one opens a new session of that account. A key is a password the app
chose at random, 32 to 128 characters, so the server keeps only its SHA-256 (a fast hash is
enough for a random secret of that length; a slow one would let anyone tie up the web workers).
Apple and Google sign-ins find the account by (provider, ``sub``) (``accounts.identity``).
Linking adds a way in to the signed-in account; an identity already bound to another account is
refused, never moved, and the last way in cannot be removed.
"""

from __future__ import annotations

import hashlib
import secrets
import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.signals import user_logged_in
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy

from accounts import identity, profile, sanctions, selectors
from accounts.models import PASSWORD_METHOD, Login, LoginClaim, Session, User
from accounts.services import (
    InvalidCredentials,
    UsernameTaken,
    checked_password,
    checked_username,
    fresh,
    session_create,
)
from chips import services as chips
from core.errors import Conflict, NotFound

GUEST_PREFIX = "guest-"
PLAYER_PREFIX = "player-"
_NAME_ALPHABET = string.ascii_lowercase + string.digits


class LoginInUse(Conflict):
    code = "login_in_use"
    detail = gettext_lazy("This sign-in already belongs to another account.")


class LoginExists(Conflict):
    code = "login_exists"
    detail = gettext_lazy(
        "This account already has a sign-in of this kind: remove it first to use another."
    )


class LastLogin(Conflict):
    code = "last_login"
    detail = gettext_lazy("This is the account's last way in: add another before removing it.")


class LoginNotFound(NotFound):
    detail = gettext_lazy("This account has no sign-in of this kind.")


@dataclass(frozen=True)
class SignIn:
    """A sign-in's outcome: the account, its new session and key, and whether it was made."""

    user: User
    session: Session
    key: str
    created: bool


def device_digest(device_key: str) -> str:
    """What the server keeps of a device key: its SHA-256, in hex."""
    return hashlib.sha256(device_key.encode("ascii")).hexdigest()


def _generated_username(prefix: str) -> str:
    """A free username: ``prefix`` and eight random letters or digits."""
    for _attempt in range(20):
        name = prefix + "".join(secrets.choice(_NAME_ALPHABET) for _ in range(8))
        if not User.objects.filter(username__iexact=name).exists():
            return name
    raise RuntimeError("no free generated username in 20 draws")  # 36**8 names: never


@transaction.atomic  # one commit for the three writes: a sign-in waits on one WAL flush
def _opened(login: Login, device: str, address: str) -> SignIn:
    user = login.user
    if not user.is_active:
        raise InvalidCredentials()
    Login.objects.filter(pk=login.pk).update(last_used_at=timezone.now())
    user_logged_in.send(sender=type(user), request=None, user=user)  # last_login, as Django does
    session, key = session_create(user=user, device=device, address=address)
    return SignIn(user, session, key, created=False)


def _sign_in(
    method: str,
    subject: str,
    *,
    device: str,
    prefix: str,
    email: str = "",
    label: str = "",
    address: str = "",
    before_create: Callable[[], None],
) -> SignIn:
    """The session of the account this identity opens, made with the account if it is new;
    ``AccountSuspended`` (with a key for the appeal only) while that account is suspended."""
    login = Login.objects.select_related("user").filter(method=method, subject=subject).first()
    if login is not None:
        done = _opened(login, device, address)
        sanctions.refuse_sign_in(done.user, done.key)
        return done
    before_create()  # a new account: the caller's limit on sign-ups (RegisterThrottle)
    try:
        with transaction.atomic():
            user = User(username=_generated_username(prefix))
            if email:
                user.email = User.objects.normalize_email(email)
            user.set_unusable_password()
            user.save()
            Login.objects.create(
                user=user, method=method, subject=subject, email=email, label=label[:100]
            )
            LoginClaim.objects.create(user=user, method=method, subject=subject)
            chips.open_wallet(user.pk)  # with the sign-up grant, as a registration
            session, key = session_create(user=user, device=device, address=address)
    except IntegrityError:
        # The same key or identity signed up at the same moment elsewhere: use that account.
        login = Login.objects.select_related("user").get(method=method, subject=subject)
        done = _opened(login, device, address)
        sanctions.refuse_sign_in(done.user, done.key)
        return done
    return SignIn(user, session, key, created=True)


def device_sign_in(
    *, device_key: str, device: str = "", address: str = "", before_create: Callable[[], None]
) -> SignIn:
    """Sign in with a device's key: the guest account it belongs to, made on first use."""
    return _sign_in(
        Login.Method.DEVICE,
        device_digest(device_key),
        device=device,
        prefix=GUEST_PREFIX,
        label=device,
        address=address,
        before_create=before_create,
    )


def provider_sign_in(
    *,
    provider: str,
    id_token: str,
    nonce: str | None = None,
    device: str = "",
    address: str = "",
    before_create: Callable[[], None],
) -> SignIn:
    """Sign in with Apple or Google: the account of the token's (provider, ``sub``), made on
    first use. Nothing is written unless the token passes every check."""
    found = identity.verify(provider, id_token, nonce)
    return _sign_in(
        provider,
        found.subject,
        device=device,
        prefix=PLAYER_PREFIX,
        email=found.email,
        address=address,
        before_create=before_create,
    )


# ---------------------------------------------------------------- linking


def _add(user: User, method: str, subject: str, *, email: str = "", label: str = "") -> bool:
    """Bind an identity to ``user``: True if added, False if it was theirs already."""
    holder = Login.objects.filter(method=method, subject=subject).first()
    if holder is not None:
        if holder.user_id != user.pk:
            raise LoginInUse()
        return False
    if Login.objects.filter(user=user, method=method).exists():
        raise LoginExists()
    try:
        with transaction.atomic():
            Login.objects.create(
                user=user, method=method, subject=subject, email=email, label=label[:100]
            )
            LoginClaim.objects.create(user=user, method=method, subject=subject)
    except IntegrityError as exc:  # bound elsewhere at the same moment
        raise LoginInUse() from exc
    if email and not user.email:
        user.email = User.objects.normalize_email(email)
        user.save(update_fields=["email"])
    return True


@transaction.atomic
def login_add(*, user: User, method: str, **given: Any) -> tuple[list[dict[str, Any]], bool]:
    """Add a way into ``user``'s account; every way in afterwards (as ``login_list`` shows
    them) and whether this one is new. ``given``: ``device_key`` (and ``device``), ``id_token``
    (and ``nonce``), or ``username`` and ``password``."""
    user = fresh(user)
    if method == Login.Method.DEVICE:
        added = _add(
            user,
            method,
            device_digest(given["device_key"]),
            label=given.get("device", ""),
        )
    elif method in (Login.Method.APPLE, Login.Method.GOOGLE):
        found = identity.verify(method, given["id_token"], given.get("nonce"))
        added = _add(user, method, found.subject, email=found.email)
    else:
        added = _password_add(user, username=given["username"], password=given["password"])
    return selectors.login_list(user=user), added


def _password_add(user: User, *, username: str, password: str) -> bool:
    """A username and password for an account that has none (a guest's, an Apple one's)."""
    if user.has_usable_password():
        raise LoginExists()
    username = checked_username(username, user=user)
    user.username = username
    checked_password(password, user)
    user.set_password(password)
    try:
        with transaction.atomic():
            user.save(update_fields=["username", "password"])
    except IntegrityError as exc:  # a registration took the name at the same moment
        raise UsernameTaken() from exc
    return True


@transaction.atomic
def login_remove(*, user: User, method: str) -> None:
    """Remove a way in; never the last one (``LastLogin``)."""
    user = fresh(user)
    entries = selectors.login_list(user=user)
    if not any(e["method"] == method for e in entries):
        raise LoginNotFound()
    if len(entries) == 1:
        raise LastLogin()
    if method == PASSWORD_METHOD:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    else:
        Login.objects.filter(user=user, method=method).delete()


# ---------------------------------------------------------------- profile


UNSET = object()


def profile_update(
    *,
    user: User,
    display_name: Any = UNSET,
    avatar: Any = UNSET,
    country: Any = UNSET,
    language: Any = UNSET,
    show_presence: Any = UNSET,
) -> User:
    """Change what others see of the account and the language it is spoken to in. ``None`` or
    "" resets a field (the username shown, the avatar by id, no country, Accept-Language);
    ``show_presence`` says whether friends see the account's presence."""
    with transaction.atomic():
        user = fresh(user)
        changed = []
        if display_name is not UNSET:
            user.display_name = profile.check_display_name(display_name) if display_name else ""
            changed.append("display_name")
        if avatar is not UNSET:
            user.avatar = avatar or ""
            changed.append("avatar")
        if country is not UNSET:
            user.country = country or ""
            changed.append("country")
        if language is not UNSET:
            user.language = language or ""
            changed.append("language")
        if show_presence is not UNSET:
            user.show_presence = bool(show_presence)
            changed.append("show_presence")
        if changed:
            user.save(update_fields=changed)
    return user
