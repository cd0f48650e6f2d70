"""Writes to accounts data (HackSoft styleguide: services write, selectors read).

Services take keyword arguments, run in a transaction where they write more than one row, and
raise errors from ``tongits_site.api_errors`` (or Django's ``ValidationError``), which the API
turns into ``{"code", "detail"}`` responses.
"""

from django.contrib.auth import authenticate
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from rest_framework.authtoken.models import Token
from rest_framework.exceptions import AuthenticationFailed

from accounts.models import BOT_USERNAME_PREFIX, User
from accounts.selectors import user_username_taken
from tongits_site.api_errors import ApiError


class UsernameTaken(ApiError):
    default_code = "username_taken"
    default_detail = "A user with that username already exists."


class UsernameReserved(ApiError):
    default_code = "username_reserved"
    default_detail = f"Usernames starting with {BOT_USERNAME_PREFIX!r} belong to the bots."


class InvalidCredentials(AuthenticationFailed):
    default_code = "invalid_credentials"
    default_detail = "Unable to log in with the given username and password."


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
    Token.objects.filter(user=user).delete()
