"""Input and output serializers of the accounts API (no model writes here: see services)."""

from django.contrib.auth.validators import ASCIIUsernameValidator
from rest_framework import serializers

USERNAME_MAX_LENGTH = 150
PASSWORD_MAX_LENGTH = 256


class RegisterInputSerializer(serializers.Serializer):
    username = serializers.CharField(
        max_length=USERNAME_MAX_LENGTH,
        validators=[ASCIIUsernameValidator()],
        help_text="ASCII letters, digits and @/./+/-/_ only; unique regardless of case.",
    )
    password = serializers.CharField(
        max_length=PASSWORD_MAX_LENGTH,
        trim_whitespace=False,
        write_only=True,
        style={"input_type": "password"},
        help_text="Checked by the server's password validators.",
    )
    email = serializers.EmailField(required=False, allow_blank=True, default="")


class TokenInputSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=USERNAME_MAX_LENGTH)
    password = serializers.CharField(
        max_length=PASSWORD_MAX_LENGTH,
        trim_whitespace=False,
        write_only=True,
        style={"input_type": "password"},
    )


class UserOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField()
    email = serializers.CharField(help_text="An email address, or empty when none was given.")
    date_joined = serializers.DateTimeField()


class TokenOutputSerializer(serializers.Serializer):
    token = serializers.CharField(help_text='Send as the header "Authorization: Token <token>".')


class RegisterOutputSerializer(TokenOutputSerializer):
    user = UserOutputSerializer()
