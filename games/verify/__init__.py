"""Verifiable games: the checks a player can run without trusting the server.

Pure (the rules core, the standard library, ``cryptography`` for the seal): an import-linter
contract keeps Django and the database out, so ``python -m games.verify export.json`` runs
anywhere the rules core does. See docs/verifying.md for the algorithms.
"""

from .core import (
    EXPORT_FORMAT,
    GENESIS_HASH,
    Failure,
    Record,
    canonical_json,
    check_chain,
    check_legality,
    check_seal,
    event_hash,
    key_id,
    records_of,
    rules_digest,
    seal_payload,
    verify_export,
)

__all__ = [
    "EXPORT_FORMAT",
    "GENESIS_HASH",
    "Failure",
    "Record",
    "canonical_json",
    "check_chain",
    "check_legality",
    "check_seal",
    "event_hash",
    "key_id",
    "records_of",
    "rules_digest",
    "seal_payload",
    "verify_export",
]
