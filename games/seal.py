"""The seal of a finished match: an Ed25519 signature, stored beside the game (``GameSeal``).

It signs the canonical JSON of ``{"game", "version", "hash" (of the last event), "rules_digest"}``
(``games.verify.seal_payload``), so a match re-written after it, even legally and with its hash
chain recomputed, no longer matches its seal, and nobody without the key can sign it again.

The key is ``TONGITS_SEAL_KEY`` (64 hex digits, the 32-byte private seed) or, when that is empty,
a development key generated on first use in ``TONGITS_SEAL_KEY_FILE`` (``var/seal-ed25519.key``).
Every public key the server has sealed with is recorded (``SealKey``) and listed by
``GET /api/v1/keys``; a new key closes the validity of the older ones, which stay listed.

Sealing happens in the write door right after the write that ends the match; settlement (which
the sweeper retries until done) seals a finished match the door missed, and ``manage.py
verify_events --seal-missing`` seals the matches that ended before seals existed. Reads (audit,
export, ``GET /keys``) never write.
"""

from __future__ import annotations

import functools
import logging
import os
import uuid
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from games import store, verify
from games.models import Game, GameSeal, SealKey

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class SigningKey:
    private: Ed25519PrivateKey
    public_hex: str
    key_id: str


def _from_seed(seed_hex: str) -> SigningKey:
    private = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(seed_hex))
    public = private.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )
    return SigningKey(private, public.hex(), verify.key_id(public.hex()))


def _dev_seed() -> str:
    """The development key's seed, generated (mode 0600) the first time it is needed: written
    whole to a private temporary file, then linked into place, so a process starting at the
    same moment reads either no file or the whole key, and the first link wins."""
    path = settings.TONGITS_SEAL_KEY_FILE
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(os.urandom(32).hex() + "\n")
        try:
            os.link(tmp, path)
            logger.warning("generated a development seal key in %s", path)
        except FileExistsError:
            pass  # another process made it first: use theirs
        finally:
            tmp.unlink()
    return path.read_text().strip()


@functools.lru_cache(maxsize=4)
def _signing_key(configured: str) -> SigningKey:
    return _from_seed(configured or _dev_seed())


def signing_key() -> SigningKey:
    """The server's current key, recorded in ``SealKey`` (one look-up: this runs once per
    finished match and per ``GET /keys``)."""
    key = _signing_key(settings.TONGITS_SEAL_KEY)
    _record(key.key_id, key.public_hex)
    return key


def _record(key_id: str, public_hex: str) -> None:
    now = timezone.now()
    with transaction.atomic():
        _, created = SealKey.objects.get_or_create(
            key_id=key_id, defaults={"public_key": public_hex, "valid_from": now}
        )
        if created:
            SealKey.objects.filter(valid_to__isnull=True).exclude(key_id=key_id).update(
                valid_to=now
            )
        else:
            SealKey.objects.filter(key_id=key_id, valid_to__isnull=False).update(valid_to=None)


def public_keys() -> list[dict[str, Any]]:
    """Every key the server has sealed with, oldest first (a key is listed from its first
    seal on)."""
    return [
        {
            "id": k.key_id,
            "algorithm": k.algorithm,
            "public_key": k.public_key,
            "valid_from": k.valid_from,
            "valid_to": k.valid_to,
        }
        for k in SealKey.objects.all()
    ]


def trusted_keys() -> dict[str, str]:
    return dict(SealKey.objects.values_list("key_id", "public_key"))


def started_rules(game_id: uuid.UUID | str) -> dict[str, Any]:
    """The rules as ``game_started`` records them (what the seal's ``rules_digest`` covers)."""
    first = store.event_data(game_id, upto=1)
    data = first[0] if first else None
    return data.get("rules", {}) if isinstance(data, dict) else {}


def seal_match(game_id: uuid.UUID | str, version: int, last_hash: str) -> GameSeal:
    """Sign the match at ``version`` (its last event ``last_hash``); a sealed game keeps its
    first seal."""
    existing = GameSeal.objects.filter(game_id=game_id).first()
    if existing is not None:
        return existing
    rules = started_rules(game_id)
    key = signing_key()
    message = verify.seal_payload(str(game_id), version, last_hash, rules)
    signature = key.private.sign(message.encode("ascii")).hex()
    try:
        with transaction.atomic():
            return GameSeal.objects.create(
                game_id=game_id,
                version=version,
                hash=last_hash,
                rules_digest=verify.rules_digest(rules),
                key_id=key.key_id,
                signature=signature,
                signed_at=timezone.now(),
            )
    except IntegrityError:  # sealed meanwhile by another process
        return GameSeal.objects.get(game_id=game_id)


def seal_of(game_id: uuid.UUID | str) -> GameSeal | None:
    return GameSeal.objects.filter(game_id=game_id).first()


def ensure_sealed(game_id: uuid.UUID | str) -> GameSeal | None:
    """The seal of a finished match, made now if the write that ended it did not make it."""
    game = Game.objects.filter(pk=game_id).only("status", "version", "last_hash").first()
    if game is None or game.status != Game.Status.FINISHED:
        return None
    seal = GameSeal.objects.filter(game_id=game_id).first()
    if seal is None:
        logger.warning("sealing finished match %s late", game_id)
        seal = seal_match(game.pk, game.version, bytes(game.last_hash).hex())
    return seal


def seal_dict(seal: GameSeal | None) -> dict[str, Any] | None:
    """The seal as the export and the audit show it."""
    if seal is None:
        return None
    return {
        "key_id": seal.key_id,
        "algorithm": "ed25519",
        "game": str(seal.game_id),
        "version": seal.version,
        "hash": seal.hash,
        "rules_digest": seal.rules_digest,
        "signature": seal.signature,
        "signed_at": seal.signed_at.isoformat().replace("+00:00", "Z"),
    }
