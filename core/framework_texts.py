"""The messages of Django, DRF and knox that a client can provoke, marked for our catalog.

Django and DRF ship translations for most of the players' languages but not for Filipino, and
their wording is theirs. Listing their msgids here puts them in ``tongits_site/locale``'s
catalog, which comes first in ``LOCALE_PATHS``, so every language the server speaks has them
from our translators, the same way as our own texts. Each msgid is byte for byte the framework's
(placeholders included: a different one would simply never be looked up), with a comment naming
where it comes from. ``gettext_noop`` only marks: the frameworks translate them where they raise
them. A message with a plural is marked with ``ngettext_lazy`` (its number, 1, only makes the
singular its msgid), since there is no plural ``gettext_noop``.

Each message is also registered under the ``code`` the API answers with it
(``core.error_texts``): every validation message under ``invalid``.
"""

from __future__ import annotations

from django.utils.translation import gettext_noop, ngettext_lazy

from core import error_texts

#: Validation messages (400 ``invalid``, per field in ``fields``).
VALIDATION = (
    # rest_framework/fields.py Field
    gettext_noop("This field is required."),
    gettext_noop("This field may not be null."),
    # rest_framework/fields.py BooleanField
    gettext_noop("Must be a valid boolean."),
    # rest_framework/fields.py CharField
    gettext_noop("Not a valid string."),
    gettext_noop("This field may not be blank."),
    gettext_noop("Ensure this field has no more than {max_length} characters."),
    gettext_noop("Ensure this field has at least {min_length} characters."),
    # rest_framework/fields.py EmailField; django/core/validators.py EmailValidator
    gettext_noop("Enter a valid email address."),
    # rest_framework/fields.py RegexField
    gettext_noop("This value does not match the required pattern."),
    # rest_framework/fields.py IntegerField and FloatField
    gettext_noop("A valid integer is required."),
    gettext_noop("A valid number is required."),
    gettext_noop("Ensure this value is less than or equal to {max_value}."),
    gettext_noop("Ensure this value is greater than or equal to {min_value}."),
    gettext_noop("String value too large."),
    # rest_framework/fields.py DateTimeField (the match history's since and until)
    gettext_noop("Datetime has wrong format. Use one of these formats instead: {format}."),
    gettext_noop("Datetime value out of range."),
    # rest_framework/fields.py ChoiceField
    gettext_noop('"{input}" is not a valid choice.'),
    # rest_framework/fields.py ListField; rest_framework/serializers.py ListSerializer
    gettext_noop('Expected a list of items but got type "{input_type}".'),
    gettext_noop("This list may not be empty."),
    gettext_noop("Ensure this field has at least {min_length} elements."),
    gettext_noop("Ensure this field has no more than {max_length} elements."),
    # rest_framework/serializers.py Serializer (a nested object that is not one)
    gettext_noop("Invalid data. Expected a dictionary, but got {datatype}."),
    # rest_framework/exceptions.py ValidationError (its default detail)
    gettext_noop("Invalid input."),
    # django/contrib/auth/validators.py ASCIIUsernameValidator (registration, renaming)
    gettext_noop(
        "Enter a valid username. This value may contain only unaccented lowercase a-z "
        "and uppercase A-Z letters, numbers, and @/./+/-/_ characters."
    ),
    # django/contrib/auth/password_validation.py UserAttributeSimilarityValidator
    gettext_noop("The password is too similar to the %(verbose_name)s."),
    # django/contrib/auth/password_validation.py CommonPasswordValidator
    gettext_noop("This password is too common."),
    # django/contrib/auth/password_validation.py NumericPasswordValidator
    gettext_noop("This password is entirely numeric."),
)

#: django/contrib/auth/models.py AbstractUser: the field names the similarity message names.
FIELD_NAMES = (
    gettext_noop("username"),
    gettext_noop("first name"),
    gettext_noop("last name"),
    gettext_noop("email address"),
)

#: django/contrib/auth/password_validation.py MinimumLengthValidator (a plural).
PASSWORD_TOO_SHORT = ngettext_lazy(
    "This password is too short. It must contain at least %d character.",
    "This password is too short. It must contain at least %d characters.",
    1,
)

#: The other framework answers, per code.
BY_CODE: dict[str, tuple[str, ...]] = {
    # rest_framework/exceptions.py ParseError
    "parse_error": (gettext_noop("Malformed request."),),
    # rest_framework/exceptions.py AuthenticationFailed; knox/auth.py TokenAuthentication
    "authentication_failed": (
        gettext_noop("Incorrect authentication credentials."),
        gettext_noop("Invalid token header. No credentials provided."),
        gettext_noop("Invalid token."),
        gettext_noop("User inactive or deleted."),
    ),
    # rest_framework/exceptions.py NotAuthenticated
    "not_authenticated": (gettext_noop("Authentication credentials were not provided."),),
    # rest_framework/exceptions.py PermissionDenied
    "permission_denied": (gettext_noop("You do not have permission to perform this action."),),
    # rest_framework/exceptions.py NotFound (Django's Http404 too)
    "not_found": (gettext_noop("Not found."),),
    # rest_framework/exceptions.py MethodNotAllowed
    "method_not_allowed": (gettext_noop('Method "{method}" not allowed.'),),
    # rest_framework/exceptions.py NotAcceptable
    "not_acceptable": (gettext_noop("Could not satisfy the request Accept header."),),
    # rest_framework/exceptions.py UnsupportedMediaType
    "unsupported_media_type": (gettext_noop('Unsupported media type "{media_type}" in request.'),),
}

error_texts.register("invalid", *VALIDATION, PASSWORD_TOO_SHORT)
for code, texts in BY_CODE.items():
    error_texts.register(code, *texts)
