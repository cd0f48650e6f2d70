from django.contrib.auth.models import AbstractUser, UserManager
from django.db import models
from django.db.models.functions import Lower


class CaseInsensitiveUserManager(UserManager):
    """Log-in looks usernames up without regard to case (they are unique that way too)."""

    def get_by_natural_key(self, username):
        return self.get(**{f"{self.model.USERNAME_FIELD}__iexact": username})


class User(AbstractUser):
    """The project's user model (AUTH_USER_MODEL): profiles and ratings can grow from here."""

    objects = CaseInsensitiveUserManager()

    class Meta(AbstractUser.Meta):
        constraints = [
            models.UniqueConstraint(Lower("username"), name="accounts_user_username_ci_unique"),
        ]

    def __str__(self) -> str:
        return self.username
