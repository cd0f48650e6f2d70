"""Input and output serializers of the accounts API (no model writes here: see services)."""

from collections.abc import Callable

from django.conf import settings
from django.contrib.auth.validators import ASCIIUsernameValidator
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from accounts import profile
from accounts.models import LOGIN_METHODS
from chips.api.serializers import SettlementSerializer, StatementItemSerializer, WalletSerializer
from core.api_fields import (
    QuerySerializer,
    StrictBooleanField,
    StrictCharField,
    StrictChoiceField,
    StrictEmailField,
    StrictRegexField,
)
from games.api.event_schemas import BOT_LEVELS, rules_serializer
from games.rules import RuleSet

USERNAME_MAX_LENGTH = 150
RULES_PRESETS = [*RuleSet.PRESETS, "custom"]


@extend_schema_field(rules_serializer())
class RulesField(serializers.DictField):
    """A match's rules as stored: every option of its RuleSet."""


PASSWORD_MAX_LENGTH = 256
DEVICE_MAX_LENGTH = 100


def _minimum_password_length() -> int:
    """The shortest password the server's validators accept (Django's default: 8)."""
    for validator in settings.AUTH_PASSWORD_VALIDATORS:
        if validator["NAME"].endswith(".MinimumLengthValidator"):
            return int(validator.get("OPTIONS", {}).get("min_length", 8))
    return 1


PASSWORD_MIN_LENGTH = _minimum_password_length()
#: What the server's password validators refuse (AUTH_PASSWORD_VALIDATORS, Django's four).
PASSWORD_RULES = (
    f"At least {PASSWORD_MIN_LENGTH} characters, not all digits, not a commonly used password, "
    "and not too like the username or e-mail (400 invalid otherwise)."
)


def password_field(**kwargs) -> serializers.CharField:
    return StrictCharField(
        max_length=PASSWORD_MAX_LENGTH,
        trim_whitespace=False,
        write_only=True,
        style={"input_type": "password"},
        **kwargs,
    )


class RegisterInputSerializer(serializers.Serializer):
    username = StrictCharField(
        max_length=USERNAME_MAX_LENGTH,
        validators=[ASCIIUsernameValidator()],
        help_text="ASCII letters, digits and @/./+/-/_ only; unique regardless of case.",
    )
    password = password_field(min_length=PASSWORD_MIN_LENGTH, help_text=PASSWORD_RULES)
    # No default: an email default of "" is not a valid "format: email" (the service's is "").
    email = StrictEmailField(
        required=False, allow_blank=True, help_text="Optional; empty or absent: none."
    )
    device = StrictCharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=DEVICE_MAX_LENGTH,
        help_text='A name for this session, shown in GET /me/sessions (e.g. "Dana\'s phone").',
    )


class TokenInputSerializer(serializers.Serializer):
    username = StrictCharField(max_length=USERNAME_MAX_LENGTH)
    password = password_field()
    device = StrictCharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=DEVICE_MAX_LENGTH,
        help_text="A name for this session (each log-in is a session of its own).",
    )


LANGUAGE_CODES = [code for code, _name in settings.LANGUAGES]


class UserOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField()
    email = serializers.CharField(help_text="An email address, or empty when none was given.")
    date_joined = serializers.DateTimeField()
    display_name = serializers.SerializerMethodField(
        help_text="What others see beside the username (the username until one is chosen)."
    )
    avatar = serializers.SerializerMethodField(
        help_text="A key of GET /avatars (one picked by the account's id until one is chosen)."
    )
    country = serializers.CharField(help_text="ISO 3166-1 alpha-2, or empty.")
    language = serializers.CharField(
        help_text="en, fil, es, vi, tr or ar; empty: each request's Accept-Language decides."
    )
    guest = serializers.SerializerMethodField(
        help_text="True while the account has no password: a guest's, or an Apple or Google "
        "one's (POST /me/logins adds a username and password)."
    )
    show_presence = serializers.BooleanField(
        help_text="Friends see whether you are online, playing or when you were last seen."
    )

    def get_display_name(self, user) -> str:
        return user.shown_name

    def get_avatar(self, user) -> str:
        return profile.avatar_of(user)

    def get_guest(self, user) -> bool:
        return not user.has_usable_password()


class SessionSerializer(serializers.Serializer):
    id = serializers.UUIDField(help_text="DELETE /me/sessions/{id} ends it.")
    device = serializers.CharField(help_text="The name given at log-in (may be empty).")
    created_at = serializers.DateTimeField()
    last_used_at = serializers.DateTimeField(help_text="To the minute.")
    expires_at = serializers.DateTimeField(
        allow_null=True, help_text="Unless used before then: each use moves it on."
    )
    expired = serializers.BooleanField()
    current = serializers.BooleanField(help_text="The session of this request's token.")


class TokenOutputSerializer(serializers.Serializer):
    token = serializers.CharField(
        help_text='Send as the header "Authorization: Token <token>". Shown only here: the '
        "server keeps a hash of it."
    )
    session = SessionSerializer(help_text="The session this token opens.")


class RegisterOutputSerializer(TokenOutputSerializer):
    user = UserOutputSerializer()


DEVICE_KEY_RULES = (
    "The app's own random secret for this installation, kept in the phone's keychain: 32 to 128 "
    "letters, digits, - and _. The server keeps only its SHA-256."
)


class DeviceSignInInputSerializer(serializers.Serializer):
    device_key = StrictRegexField(
        r"^[A-Za-z0-9_-]{32,128}$", max_length=128, help_text=DEVICE_KEY_RULES
    )
    device = StrictCharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=DEVICE_MAX_LENGTH,
        help_text="A name for this session and device, shown in GET /me/sessions.",
    )


class ProviderSignInInputSerializer(serializers.Serializer):
    id_token = StrictCharField(
        max_length=8192, trim_whitespace=False, help_text="The ID token the provider's SDK gave."
    )
    nonce = StrictCharField(
        required=False,
        max_length=256,
        trim_whitespace=False,
        help_text="The nonce the app asked the provider to put in the token (or whose SHA-256 "
        "it asked for, as Apple's iOS flow does); then the token must carry it.",
    )
    device = StrictCharField(
        required=False, allow_blank=True, default="", max_length=DEVICE_MAX_LENGTH
    )


class LoginEntrySerializer(serializers.Serializer):
    method = serializers.ChoiceField(choices=LOGIN_METHODS)
    username = serializers.CharField(required=False, help_text="password: the username.")
    device = serializers.CharField(required=False, help_text="device: the name it was given.")
    email = serializers.CharField(
        required=False, help_text="apple, google: the address the provider verified, or empty."
    )
    created_at = serializers.DateTimeField(allow_null=True, help_text="null for password.")
    last_used_at = serializers.DateTimeField(allow_null=True)


class LoginAddInputSerializer(serializers.Serializer):
    """One body for each method; the fields of the others are refused."""

    NEEDS = {
        "device": ("device_key",),
        "apple": ("id_token",),
        "google": ("id_token",),
        "password": ("username", "password"),
    }
    ALLOWS = {
        "device": {"device_key", "device"},
        "apple": {"id_token", "nonce"},
        "google": {"id_token", "nonce"},
        "password": {"username", "password"},
    }

    method = StrictChoiceField(choices=LOGIN_METHODS)
    device_key = StrictRegexField(
        r"^[A-Za-z0-9_-]{32,128}$", max_length=128, required=False, help_text=DEVICE_KEY_RULES
    )
    device = StrictCharField(required=False, allow_blank=True, max_length=DEVICE_MAX_LENGTH)
    id_token = StrictCharField(max_length=8192, required=False, trim_whitespace=False)
    nonce = StrictCharField(max_length=256, required=False, trim_whitespace=False)
    username = StrictCharField(
        max_length=USERNAME_MAX_LENGTH,
        validators=[ASCIIUsernameValidator()],
        required=False,
        help_text="password: the username the account takes (registration's rules).",
    )
    password = password_field(
        min_length=PASSWORD_MIN_LENGTH, required=False, help_text=PASSWORD_RULES
    )

    def validate(self, attrs: dict) -> dict:
        method = attrs["method"]
        errors = {
            name: [_("This field is required.")] for name in self.NEEDS[method] if name not in attrs
        }
        errors.update(
            {
                name: [_("Not a field of this method.")]
                for name in attrs
                if name != "method" and name not in self.ALLOWS[method]
            }
        )
        if errors:
            raise serializers.ValidationError(errors)
        return attrs


class LoginAddedSerializer(serializers.Serializer):
    login = LoginEntrySerializer()
    logins = LoginEntrySerializer(many=True, help_text="Every way into the account now.")


class ProfileInputSerializer(serializers.Serializer):
    display_name = StrictCharField(
        required=False,
        allow_null=True,
        allow_blank=True,
        trim_whitespace=False,
        max_length=200,
        help_text="1 to 24 letters (any script), digits, spaces and _ - .; null or empty: the "
        "username again. 400 display_name_refused for other characters, right-to-left letters "
        "mixed with left-to-right ones, or a refused word.",
    )
    avatar = StrictChoiceField(
        choices=list(profile.AVATARS),
        required=False,
        allow_null=True,
        allow_blank=True,
        help_text="A key of GET /avatars; null or empty: the default.",
    )
    country = StrictCharField(
        required=False,
        allow_null=True,
        allow_blank=True,
        max_length=2,
        help_text="ISO 3166-1 alpha-2 (PH, US, ...); null or empty: none.",
    )
    language = StrictChoiceField(
        choices=LANGUAGE_CODES,
        required=False,
        allow_null=True,
        allow_blank=True,
        help_text="The language the server speaks to the account in (error details, "
        "notifications, pushes, mails); null or empty: each request's Accept-Language.",
    )
    show_presence = StrictBooleanField(
        required=False,
        help_text="false: friends no longer see whether you are online, playing or when you "
        "were last seen (docs/friends.md).",
    )

    def validate_country(self, value: str | None) -> str | None:
        if value is None:
            return None
        code = profile.country_code(value)
        if code is None:
            raise serializers.ValidationError(_("Not an ISO 3166-1 alpha-2 country code."))
        return code


class AvatarSerializer(serializers.Serializer):
    key = serializers.CharField()
    url = serializers.CharField(help_text="The picture (SVG), served by this server.")


class PasswordChangeInputSerializer(serializers.Serializer):
    old_password = password_field()
    new_password = password_field(min_length=PASSWORD_MIN_LENGTH, help_text=PASSWORD_RULES)


class PasswordResetInputSerializer(serializers.Serializer):
    email = StrictEmailField(help_text="The account's address; the answer is 202 either way.")


class PasswordResetConfirmInputSerializer(serializers.Serializer):
    uid = StrictCharField(max_length=64, help_text="From the reset mail.")
    token = StrictCharField(max_length=128, help_text="From the reset mail; works once.")
    new_password = password_field(min_length=PASSWORD_MIN_LENGTH, help_text=PASSWORD_RULES)


class AccountDeleteInputSerializer(serializers.Serializer):
    password = password_field(
        required=False, default="", help_text="The account's password, to confirm."
    )
    confirm = StrictCharField(
        required=False,
        default="",
        max_length=USERNAME_MAX_LENGTH,
        help_text="An account without a password (a guest's, an Apple or Google one's): its "
        "username, to confirm.",
    )


class AcceptedSerializer(serializers.Serializer):
    detail = serializers.CharField()


# ---------------------------------------------------------------- players, history, leaderboard


class RatingSerializer(serializers.Serializer):
    ordinal = serializers.FloatField(
        help_text="Conservative rating, mu - 3 sigma: the leaderboard's order (starts at 0)."
    )
    mu = serializers.FloatField(help_text="openskill (Plackett-Luce) skill estimate; starts at 25.")
    sigma = serializers.FloatField(help_text="Uncertainty of mu; starts at 25/3 and shrinks.")


class RoundKindsSerializer(serializers.Serializer):
    tongits = serializers.IntegerField()
    draw = serializers.IntegerField()
    stock_out = serializers.IntegerField(help_text="Turn-cap rounds are settled as stock outs.")


@extend_schema_field(
    {"oneOf": [{"type": "string", "format": "date-time"}, {"type": "string", "format": "date"}]}
)
class DateOrDateTimeField(serializers.DateTimeField):
    """An ISO 8601 date-time, or a date (its midnight, in UTC), as the docs say."""


class PlayerMatchesQuerySerializer(QuerySerializer):
    DATE_FORMATS = ["iso-8601", "%Y-%m-%d"]

    result = serializers.ChoiceField(
        choices=["win", "loss"], required=False, help_text="Only matches won, or lost."
    )
    since = DateOrDateTimeField(
        required=False,
        input_formats=DATE_FORMATS,
        help_text="Matches that ended at or after this time (ISO 8601, or a date).",
    )
    until = DateOrDateTimeField(
        required=False,
        input_formats=DATE_FORMATS,
        help_text="Matches that ended before this time (ISO 8601, or a date).",
    )
    opponent = serializers.CharField(
        required=False, max_length=USERNAME_MAX_LENGTH, help_text="Only matches against this user."
    )
    rules = serializers.ChoiceField(
        choices=RULES_PRESETS,
        required=False,
        help_text="Rules preset (turn time aside); custom is any other set of options.",
    )


class OpponentSerializer(serializers.Serializer):
    username = serializers.CharField()
    display_name = serializers.CharField(
        allow_null=True, help_text="The name the player chose (else the username)."
    )
    avatar = serializers.CharField(
        allow_null=True, help_text="A key of GET /avatars (null: a deleted player)."
    )
    is_bot = serializers.BooleanField()


class PlayerMatchOutputSerializer(serializers.Serializer):
    game_id = serializers.UUIDField(source="match_id")
    url = serializers.CharField(help_text="This match's detail.")
    replay = serializers.CharField(help_text="The game's replay (GET, authenticated).")
    started_at = serializers.DateTimeField()
    ended_at = serializers.DateTimeField()
    rules = serializers.ChoiceField(
        choices=RULES_PRESETS, source="rules_preset", help_text="standard, house, h19 or custom."
    )
    seat = serializers.IntegerField()
    result = serializers.ChoiceField(choices=["win", "loss"])
    placement = serializers.IntegerField(help_text="1 (the match winner) to 3; equals share.")
    resigned = serializers.BooleanField(help_text="The player resigned (placed last).")
    rounds_played = serializers.IntegerField()
    rounds_won = serializers.IntegerField()
    rounds_won_by = RoundKindsSerializer()
    rounds_lost_to = RoundKindsSerializer(help_text="Rounds another seat won, by how.")
    rounds_without_winner = serializers.IntegerField()
    times_burned = serializers.IntegerField()
    draw_calls = serializers.IntegerField()
    draw_calls_won = serializers.IntegerField()
    challenges = serializers.IntegerField()
    challenges_won = serializers.IntegerField()
    time_outs = serializers.IntegerField()
    chips = serializers.IntegerField(help_text="Net chips won (+) or lost (-).")
    average_deadwood = serializers.FloatField(allow_null=True)
    opponents = OpponentSerializer(many=True, help_text="The next seat, then the one after.")
    rating_before = RatingSerializer()
    rating_after = RatingSerializer()


class PlayerStatsSerializer(serializers.Serializer):
    username = serializers.CharField()
    display_name = serializers.CharField(
        allow_null=True, help_text="The name the player chose (else the username)."
    )
    avatar = serializers.CharField(
        allow_null=True, help_text="A key of GET /avatars (null: a deleted player)."
    )
    is_bot = serializers.BooleanField()
    matches = serializers.IntegerField()
    wins = serializers.IntegerField()
    losses = serializers.IntegerField()
    win_rate = serializers.FloatField(allow_null=True)
    rounds_played = serializers.IntegerField()
    rounds_won = serializers.IntegerField()
    rounds_won_by = RoundKindsSerializer()
    rounds_lost_to = RoundKindsSerializer()
    rounds_without_winner = serializers.IntegerField()
    times_burned = serializers.IntegerField()
    draw_calls = serializers.IntegerField()
    draw_calls_won = serializers.IntegerField()
    draw_call_success = serializers.FloatField(
        allow_null=True, help_text="Share of Draw calls that won the round."
    )
    challenges = serializers.IntegerField()
    challenges_won = serializers.IntegerField()
    time_outs = serializers.IntegerField()
    chips_net = serializers.IntegerField()
    average_deadwood = serializers.FloatField(
        allow_null=True, help_text="Mean deadwood points in hand at the end of a round."
    )
    rating = RatingSerializer()
    last_match_at = serializers.DateTimeField(allow_null=True)


class LeaderboardQuerySerializer(QuerySerializer):
    order = serializers.ChoiceField(
        choices=["rating", "chips"],
        required=False,
        default="rating",
        help_text="rating (default): by conservative rating. chips: by chips (available and in "
        "play), only players who chose to be listed (PATCH /me/wallet); bots sit on the "
        "house's chips and are not listed.",
    )
    min_games = serializers.IntegerField(
        required=False,
        default=1,
        min_value=0,
        max_value=1_000_000,
        help_text="Only players with at least this many finished matches (default 1; the "
        "rating order only).",
    )


class LeaderboardEntrySerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    username = serializers.CharField()
    display_name = serializers.CharField(
        allow_null=True, help_text="The name the player chose (else the username)."
    )
    avatar = serializers.CharField(
        allow_null=True, help_text="A key of GET /avatars (null: a deleted player)."
    )
    is_bot = serializers.BooleanField()
    rating = RatingSerializer()
    matches = serializers.IntegerField()
    wins = serializers.IntegerField()
    win_rate = serializers.FloatField(allow_null=True)
    chips_net = serializers.IntegerField()
    chips = serializers.IntegerField(
        allow_null=True, help_text="The player's chips, if they chose to be listed; else null."
    )


class MatchSeatSerializer(serializers.Serializer):
    seat = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=["user", "bot"])
    username = serializers.CharField(allow_null=True, help_text="Bots play as bot-<level>.")
    display_name = serializers.CharField(
        allow_null=True, help_text="The name the player chose (else the username)."
    )
    avatar = serializers.CharField(
        allow_null=True, help_text="A key of GET /avatars (null: a deleted player)."
    )
    level = serializers.ChoiceField(
        choices=BOT_LEVELS, allow_null=True, help_text="Bot seats: easy, normal or hard."
    )
    placement = serializers.IntegerField()
    rounds_won = serializers.IntegerField()
    chips = serializers.IntegerField()
    rating_before = RatingSerializer(allow_null=True)
    rating_after = RatingSerializer(allow_null=True)


class MatchRoundSerializer(serializers.Serializer):
    round = serializers.IntegerField()
    reason = serializers.ChoiceField(choices=["tongits", "draw", "stock_out", "turn_cap"])
    winner = serializers.IntegerField(allow_null=True, help_text="Seat; null: nobody won.")
    draw_caller = serializers.IntegerField(allow_null=True)
    challengers = serializers.ListField(child=serializers.IntegerField())
    deadwood = serializers.ListField(child=serializers.IntegerField(), help_text="Per seat.")
    burned = serializers.ListField(child=serializers.IntegerField(), help_text="Seats.")
    payouts = serializers.ListField(child=serializers.IntegerField(), help_text="Per seat.")


class MatchDetailSerializer(serializers.Serializer):
    game_id = serializers.UUIDField()
    rules_preset = serializers.ChoiceField(choices=RULES_PRESETS)
    rules = RulesField(help_text="Every option of the table's rules.")
    rated = serializers.BooleanField(help_text="false: a casual match, no rating changed.")
    started_at = serializers.DateTimeField()
    ended_at = serializers.DateTimeField()
    winner_seat = serializers.IntegerField()
    seats = MatchSeatSerializer(many=True)
    rounds = MatchRoundSerializer(many=True)
    replay = serializers.CharField(help_text="GET it for the game at any step, all revealed.")
    audit = serializers.CharField(help_text="GET it to verify the hash chain and the deals.")
    settlement = SettlementSerializer(
        allow_null=True, help_text="Table stakes: the buy-ins and the payout; null: no chips."
    )


class PageQuerySerializer(QuerySerializer):
    cursor = serializers.CharField(
        required=False, help_text="Opaque position: take it from a page's next or previous link."
    )
    page_size = serializers.IntegerField(
        required=False, min_value=1, max_value=100, help_text="Matches per page (default 20)."
    )


class PlayerMatchesParamsSerializer(PlayerMatchesQuerySerializer, PageQuerySerializer):
    """Filters and paging of the history (documentation: the view validates the two apart)."""


class PlayerMatchPageSerializer(serializers.Serializer):
    next = serializers.CharField(allow_null=True, help_text="The next (older) page, or null.")
    previous = serializers.CharField(allow_null=True, help_text="The previous page, or null.")
    results = PlayerMatchOutputSerializer(many=True)


class LeaderboardParamsSerializer(LeaderboardQuerySerializer):
    limit = serializers.IntegerField(required=False, default=50, min_value=1, max_value=200)
    offset = serializers.IntegerField(required=False, default=0, min_value=0, max_value=10**9)


class LeaderboardPageSerializer(serializers.Serializer):
    count = serializers.IntegerField(
        help_text="Players with at least min_games matches (chips order: listed players)."
    )
    results = LeaderboardEntrySerializer(many=True)


# ---------------------------------------------------------------- export


class AccountSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField()
    email = serializers.CharField()
    date_joined = serializers.DateTimeField()
    last_login = serializers.DateTimeField(allow_null=True)
    display_name = serializers.CharField(help_text="Empty: none chosen.")
    avatar = serializers.CharField(help_text="Empty: none chosen.")
    country = serializers.CharField()
    language = serializers.CharField()


class ExportedGameSerializer(serializers.Serializer):
    game_id = serializers.UUIDField()
    status = serializers.CharField()
    created_at = serializers.DateTimeField()
    rules = serializers.DictField()
    seat = serializers.IntegerField(required=False, allow_null=True, help_text="Started games.")
    seats = serializers.ListField(child=serializers.DictField(), required=False)
    events = serializers.ListField(
        child=serializers.DictField(),
        required=False,
        help_text="The game's events as this seat saw them (others' cards hidden, always).",
    )


class ExportedWalletSerializer(serializers.Serializer):
    wallet = WalletSerializer(allow_null=True, help_text="null: the account never had chips.")
    entries = StatementItemSerializer(many=True, help_text="Every entry, oldest first.")


#: The fields of the sections ``accounts.selectors.EXPORT_SECTIONS`` adds (the apps above accounts
#: register both at start-up): ``name -> a new serializer field``, so the schema types them.
EXPORT_SECTION_FIELDS: dict[str, Callable[[], serializers.Field]] = {}


class AccountExportSerializer(serializers.Serializer):
    exported_at = serializers.DateTimeField()
    account = AccountSerializer()
    chips = ExportedWalletSerializer()
    sessions = SessionSerializer(many=True)
    logins = LoginEntrySerializer(many=True, help_text="The ways into the account.")
    history = PlayerMatchOutputSerializer(many=True, help_text="Newest first.")
    stats = PlayerStatsSerializer()
    games = ExportedGameSerializer(many=True)

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        for name, make in EXPORT_SECTION_FIELDS.items():
            fields[name] = make()
        return fields
