"""Writes to accounts data (HackSoft styleguide: services write, selectors read).

Services take keyword arguments, run in a transaction where they write more than one row, and
raise domain errors (``tongits_site.errors``, or Django's ``ValidationError``); the API edge alone
turns them into HTTP answers.
"""

from django.contrib.auth import authenticate
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from rest_framework.authtoken.models import Token

from accounts.models import BOT_USERNAME_PREFIX, User
from accounts.selectors import user_username_taken
from tongits_site import token_cache
from tongits_site.errors import Invalid, Unauthenticated


class UsernameTaken(Invalid):
    code = "username_taken"
    detail = "A user with that username already exists."


class UsernameReserved(Invalid):
    code = "username_reserved"
    detail = f"Usernames starting with {BOT_USERNAME_PREFIX!r} belong to the bots."


class InvalidCredentials(Unauthenticated):
    code = "invalid_credentials"
    detail = "Unable to log in with the given username and password."


@transaction.atomic
def user_register(*, username: str, password: str, email: str = "") -> tuple[User, Token]:
    """Create a user (password checked by AUTH_PASSWORD_VALIDATORS) and their API token."""
    username = User.normalize_username(username)
    if username.lower().startswith(BOT_USERNAME_PREFIX):  # bot-easy, ... play under these
        raise UsernameReserved()
    if user_username_taken(username=username):
        raise UsernameTaken()
    user = User(username=username, email=User.objects.normalize_email(email))
    try:
        validate_password(password, user=user)
    except ValidationError as exc:
        raise ValidationError({"password": exc.messages}) from exc
    user.set_password(password)
    try:
        with transaction.atomic():
            user.save()
    except IntegrityError as exc:  # a concurrent registration won the race for this name
        raise UsernameTaken() from exc
    return user, Token.objects.create(user=user)


def token_obtain(*, username: str, password: str) -> Token:
    """The user's API token (created on first log-in); InvalidCredentials if the pair is wrong."""
    user = authenticate(username=username, password=password)
    if user is None:
        raise InvalidCredentials()
    token, _ = Token.objects.get_or_create(user=user)
    return token


def token_revoke(*, user: User) -> None:
    """Log out: delete the user's token, so every client holding it must log in again."""
    for key in Token.objects.filter(user=user).values_list("key", flat=True):
        token_cache.forget(key)  # at once here; other processes within TONGITS_TOKEN_CACHE_SECONDS
    Token.objects.filter(user=user).delete()
