"""Writes to accounts data (HackSoft styleguide: services write, selectors read).

Services take keyword arguments, run in a transaction where they write more than one row, and
raise domain errors (``core.errors``, or Django's ``ValidationError``); the API edge alone
turns them into HTTP answers.
"""

import contextlib
import uuid
from typing import Any

from celery import current_app
from django.conf import settings
from django.contrib.auth import authenticate
from django.contrib.auth.password_validation import validate_password
from django.contrib.auth.signals import user_logged_in
from django.contrib.auth.tokens import default_token_generator
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.encoding import force_bytes, force_str
from django.utils.http import urlsafe_base64_decode, urlsafe_base64_encode
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, override

from accounts import projections, sanctions, signals, token_cache
from accounts.models import BOT_USERNAME_PREFIX, Login, LoginClaim, Session, User
from chips import services as chips
from core.errors import Invalid, NotFound, Unauthenticated
from games import lobby, play
from games.errors import AlreadyResigned, NotActive, NotStarted
from games.live.models import StreamTicket
from games.models import Game

#: The task that mails a reset link (queued by name for every address, known or not).
SEND_PASSWORD_RESET = "accounts.tasks.send_password_reset"


class UsernameTaken(Invalid):
    code = "username_taken"
    detail = gettext_lazy("A user with that username already exists.")


class UsernameReserved(Invalid):
    code = "username_reserved"
    detail = gettext_lazy("Usernames starting with 'bot-' belong to the bots.")


class InvalidCredentials(Unauthenticated):
    code = "invalid_credentials"
    detail = gettext_lazy("Unable to log in with the given username and password.")


class WrongPassword(Invalid):
    code = "wrong_password"
    detail = gettext_lazy("The current password is not correct.")


class WrongConfirmation(Invalid):
    code = "wrong_confirmation"
    detail = gettext_lazy("To delete an account without a password, confirm with its username.")


class InvalidResetToken(Invalid):
    code = "invalid_reset_token"
    detail = gettext_lazy("This reset link is not valid: it is wrong, used already or too old.")


class SessionNotFound(NotFound):
    detail = gettext_lazy("No session of yours with that id.")


def checked_password(password: str, user: User, field: str = "password") -> None:
    """AUTH_PASSWORD_VALIDATORS (Django's defaults), as a field error of ``field``."""
    try:
        validate_password(password, user=user)
    except ValidationError as exc:
        raise ValidationError({field: exc.messages}) from exc


def checked_username(username: str, *, user: User | None = None) -> str:
    """A username a person may take (registration's rules): normalised, not a bot's, not
    another account's regardless of case (``user``'s own name may be kept)."""
    username = User.normalize_username(username)
    if username.lower().startswith(BOT_USERNAME_PREFIX):  # bot-easy, ... play under these
        raise UsernameReserved()
    taken = User.objects.filter(username__iexact=username)
    if user is not None:
        taken = taken.exclude(pk=user.pk)
    if taken.exists():
        raise UsernameTaken()
    return username


def fresh(user: User) -> User:
    """The user's row, locked: the request's user may be a second old (the token look-up is
    remembered), and its password hash with it."""
    return User.objects.select_for_update().get(pk=user.pk)


# ---------------------------------------------------------------- sessions


def session_create(*, user: User, device: str = "", address: str = "") -> tuple[Session, str]:
    """A new session (a knox token, stored hashed) and its key, which exists only in this answer.
    ``address``: the client's, when a request asks for it (fair play links accounts by it)."""
    with transaction.atomic():
        session, key = Session.objects.create(user=user, device=device[:100])
        signals.session_started.send(Session, session=session, address=address)
    return session, key


@transaction.atomic
def user_register(
    *, username: str, password: str, email: str = "", device: str = "", address: str = ""
) -> tuple[User, Session, str]:
    """Create a user (password checked by AUTH_PASSWORD_VALIDATORS), their wallet with its
    sign-up grant, and their first session."""
    username = checked_username(username)
    user = User(username=username, email=User.objects.normalize_email(email))
    checked_password(password, user)
    user.set_password(password)
    try:
        with transaction.atomic():
            user.save()
    except IntegrityError as exc:  # a concurrent registration won the race for this name
        raise UsernameTaken() from exc
    chips.open_wallet(user.pk)  # with the sign-up grant (TONGITS_SIGNUP_GRANT)
    session, key = session_create(user=user, device=device, address=address)
    return user, session, key


def token_obtain(
    *, username: str, password: str, device: str = "", address: str = ""
) -> tuple[Session, str]:
    """Log in: a new session of its own for this device; InvalidCredentials if the pair is wrong,
    ``AccountSuspended`` (with a key for the appeal only) while the account is suspended.

    Every log-in is a separate session, so logging out on one phone leaves the others in.
    """
    user = authenticate(username=username, password=password)
    if user is None:
        raise InvalidCredentials()
    user_logged_in.send(sender=type(user), request=None, user=user)  # last_login, as Django does
    session, key = session_create(user=user, device=device, address=address)
    sanctions.refuse_sign_in(user, key)
    return session, key


def _end(sessions: list[Session]) -> int:
    ids = {s.pk for s in sessions}
    token_cache.forget_sessions(ids)  # at once here; elsewhere within TONGITS_TOKEN_CACHE_SECONDS
    return Session.objects.filter(pk__in=ids).delete()[0]


def session_end(*, user: User, session_id: Any) -> None:
    """End one of the user's sessions (this device's logout, or another device's by its id)."""
    session = Session.objects.filter(user=user, pk=session_id).first()
    if session is None:
        raise SessionNotFound()
    _end([session])


def sessions_end_all(*, user: User, keep: Session | None = None) -> int:
    """End every session of the user but ``keep``: logout everywhere, a new password."""
    others = Session.objects.filter(user=user)
    if keep is not None:
        others = others.exclude(pk=keep.pk)
    return _end(list(others.only("pk")))


def sessions_purge(*, expired_before: Any) -> int:
    """Delete sessions that expired before this time (until then they answer token_expired)."""
    return Session.objects.filter(expiry__lt=expired_before).delete()[0]


# ---------------------------------------------------------------- passwords


@transaction.atomic
def password_change(
    *, user: User, old_password: str, new_password: str, current: Session | None
) -> None:
    """Set a new password (old one required) and end every other session of the user."""
    user = fresh(user)
    if not user.check_password(old_password):
        raise WrongPassword()
    checked_password(new_password, user, field="new_password")
    user.set_password(new_password)
    user.save(update_fields=["password"])
    sessions_end_all(user=user, keep=current)


def password_reset_request(*, email: str) -> None:
    """Queue the reset mail for this address, whether or not an account has it.

    The request does the same work either way (one task queued by name), so neither its answer
    nor its time tells whether the address is known; the task looks the user up and mails.
    """
    current_app.send_task(SEND_PASSWORD_RESET, args=[User.objects.normalize_email(email)])


def password_reset_send(*, email: str) -> int:
    """Mail a one-use reset link to each active person with this address (the task's work)."""
    sent = 0
    for user in User.objects.filter(email__iexact=email, is_active=True, is_bot=False):
        if not user.has_usable_password():
            continue
        uid = urlsafe_base64_encode(force_bytes(user.pk))
        token = default_token_generator.make_token(user)
        link = settings.TONGITS_PASSWORD_RESET_URL.format(uid=uid, token=token)
        hours = settings.PASSWORD_RESET_TIMEOUT // 3600
        with override(user.language or settings.LANGUAGE_CODE):
            values = {"username": user.username, "hours": hours, "link": link}
            body = "\n\n".join(
                [
                    _("Someone asked to reset the Tongits password of %(username)s.") % values,
                    _("To choose a new one, open this link within %(hours)s hours:\n%(link)s")
                    % values,
                    _(
                        "Or send uid %(uid)s and token %(token)s with the new password to "
                        "POST /api/v1/auth/password-reset/confirm."
                    )
                    % {"uid": uid, "token": token},
                    _("If it was not you, ignore this mail: your password stays as it is."),
                ]
            )
            subject = _("Reset your Tongits password")
        send_mail(subject, body + "\n", None, [user.email])
        sent += 1
    return sent


@transaction.atomic
def password_reset_confirm(*, uid: str, token: str, new_password: str) -> User:
    """Set the password from a mailed link; the link then stops working (Django's token hashes
    the password), and every session ends."""
    try:
        pk = int(force_str(urlsafe_base64_decode(uid)))
        if not 0 < pk < 2**63:
            raise ValueError(pk)
        user = User.objects.select_for_update().get(pk=pk, is_active=True, is_bot=False)
    except (ValueError, TypeError, User.DoesNotExist):
        raise InvalidResetToken() from None
    if not default_token_generator.check_token(user, token):
        raise InvalidResetToken()
    checked_password(new_password, user, field="new_password")
    user.set_password(new_password)
    user.save(update_fields=["password"])
    sessions_end_all(user=user)
    return user


# ---------------------------------------------------------------- leaving


@transaction.atomic
def account_delete(*, user: User, password: str = "", confirm: str = "") -> None:
    """Delete the account (its password confirms it; an account without one, such as a guest's,
    is confirmed by its username in ``confirm``): nothing personal remains.

    The row stays, anonymised (a random placeholder name, no e-mail, no password, inactive,
    ``deleted_at``), because the games' hash-chained events name the player by this id; every
    read shows "deleted player" for it. Sessions and stream tickets end; tables not started are
    left; history rows and totals leave the projections (``projections.forget_player``), and
    opponents keep the matches. Each running match counts them as resigned (``play.resign``).
    The wallet's chips go to the house (an ``account_deleted`` entry), and so do chips a
    running match pays them later; the entries stay, as every entry does.
    """
    user = fresh(user)
    if user.is_bot:
        raise WrongPassword()
    if user.has_usable_password():
        if not user.check_password(password):
            raise WrongPassword()
    elif confirm != user.username:
        raise WrongConfirmation()
    sessions_end_all(user=user)
    Login.objects.filter(user=user).delete()  # the same identity may sign up afresh
    LoginClaim.objects.filter(user=user).delete()
    StreamTicket.objects.filter(user=user).delete()
    game_ids = lobby.player_departs(user=user)
    running = Game.objects.filter(pk__in=game_ids, status=Game.Status.ACTIVE)
    for game_id in running.values_list("pk", flat=True):
        # Resigned: placed last, the seat played at once whenever it is to act (a match over
        # meanwhile, or a resignation already made, is fine as it is).
        with contextlib.suppress(NotActive, AlreadyResigned, NotStarted):
            play.resign(game_id, user.pk)
    user.username = f"deleted-{uuid.uuid4().hex}"
    user.email = user.first_name = user.last_name = ""
    user.display_name = user.avatar = user.country = ""
    user.set_unusable_password()
    user.is_active = user.is_staff = user.is_superuser = False
    user.last_login = None
    user.deleted_at = timezone.now()
    user.save()
    user.groups.clear()
    user.user_permissions.clear()
    projections.forget_player(user.pk)
    chips.close_wallet(user_id=user.pk)
    token_cache.forget_user(user.pk)
    # The save above made every process forget the name (games.live.signals, on commit).
    signals.account_deleted.send(User, user_id=user.pk, at=user.deleted_at)
