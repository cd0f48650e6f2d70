"""Reads of accounts data (HackSoft styleguide: selectors read, services write)."""

from accounts.models import User


def user_username_taken(*, username: str) -> bool:
    """Whether a user already has this username, ignoring case."""
    return User.objects.filter(username__iexact=username).exists()
