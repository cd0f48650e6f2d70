"""A second verifier, written from docs/verifying.md alone: the proof that the page suffices.

Plain Python, the standard library only (no project import, not even the signature library:
Ed25519 verification below is RFC 8032's reference algorithm). It checks sections 3, 4, 5 and 7
of the page: the chain, the deals (commitments and seeded shuffles), where the cards are, and
the seal. Section 6 (legality) needs a
rules engine, which the page points to rather than restates; the project's verifier does it.

``verify(doc, public_key_hex) -> None`` when sound, else a string naming the first failure.
"""

from __future__ import annotations

import hashlib
import json

# ---------------------------------------------------------------- section 2


def canonical(value) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("ascii")).hexdigest()


# ---------------------------------------------------------------- Ed25519 (RFC 8032, 6)

P = 2**255 - 19
Q = 2**252 + 27742317777372353535851937790883648493
D = -121665 * pow(121666, P - 2, P) % P
SQRT_M1 = pow(2, (P - 1) // 4, P)


def _add(a, b):
    x = (a[1] - a[0]) * (b[1] - b[0]) % P
    y = (a[1] + a[0]) * (b[1] + b[0]) % P
    c = 2 * a[3] * b[3] * D % P
    d = 2 * a[2] * b[2] % P
    e, f, g, h = y - x, d - c, d + c, y + x
    return (e * f % P, g * h % P, f * g % P, e * h % P)


def _mul(s, point):
    out = (0, 1, 1, 0)
    while s > 0:
        if s & 1:
            out = _add(out, point)
        point = _add(point, point)
        s >>= 1
    return out


def _equal(a, b) -> bool:
    return (a[0] * b[2] - b[0] * a[2]) % P == 0 and (a[1] * b[2] - b[1] * a[2]) % P == 0


def _recover_x(y, sign):
    if y >= P:
        return None
    x2 = (y * y - 1) * pow(D * y * y + 1, P - 2, P)
    if x2 == 0:
        return None if sign else 0
    x = pow(x2, (P + 3) // 8, P)
    if (x * x - x2) % P != 0:
        x = x * SQRT_M1 % P
    if (x * x - x2) % P != 0:
        return None
    if (x & 1) != sign:
        x = P - x
    return x


def _decompress(raw: bytes):
    if len(raw) != 32:
        return None
    y = int.from_bytes(raw, "little")
    sign = y >> 255
    y &= (1 << 255) - 1
    x = _recover_x(y, sign)
    return None if x is None else (x, y, 1, x * y % P)


_GY = 4 * pow(5, P - 2, P) % P
_GX = _recover_x(_GY, 0)
G = (_GX, _GY, 1, _GX * _GY % P)


def ed25519_verify(public: bytes, message: bytes, signature: bytes) -> bool:
    if len(public) != 32 or len(signature) != 64:
        return False
    a = _decompress(public)
    r = _decompress(signature[:32])
    if a is None or r is None:
        return False
    s = int.from_bytes(signature[32:], "little")
    if s >= Q:
        return False
    h = int.from_bytes(hashlib.sha512(signature[:32] + public + message).digest(), "little") % Q
    return _equal(_mul(s, G), _add(r, _mul(h, a)))


# ---------------------------------------------------------------- the checks

FULL_DECK = {r + s for s in "CDHS" for r in "A23456789TJQK"}


def _chain(doc) -> str | None:
    prev = "0" * 64
    for expected, event in enumerate(doc["events"], start=1):
        if event["seq"] != expected:
            return f"chain: seq {expected} missing"
        if event["prev_hash"] != prev or event["type"] != event["data"].get("type"):
            return f"chain: seq {expected} does not link"
        envelope = {
            "game": doc["game"],
            "seq": event["seq"],
            "actor": event["actor"],
            "recorded_at": event["recorded_at"],
            "data": event["data"],
        }
        if sha256(prev + canonical(envelope)) != event["hash"]:
            return f"chain: seq {expected} hash"
        prev = event["hash"]
    if not doc["events"] or doc["events"][-1]["seq"] != doc["version"]:
        return "chain: the stream is not version events long"
    return None


def shuffle(server_seed: str, game: str, round_no: int, client_seeds: list) -> list:
    """Section 4, "Seeded shuffles", steps 1 to 4."""
    import hmac

    message = canonical({"v": 1, "game": game, "round": round_no, "client_seeds": client_seeds})
    key = hmac.new(server_seed.encode("ascii"), message.encode("ascii"), "sha256").digest()
    stream = bytearray()
    block = 0

    def u32() -> int:
        nonlocal block
        if len(stream) < 4:
            stream.extend(hmac.new(key, block.to_bytes(8, "big"), "sha256").digest())
            block += 1
        value = int.from_bytes(stream[:4], "big")
        del stream[:4]
        return value

    def uniform(n: int) -> int:
        limit = 2**32 - (2**32 % n)
        while True:
            u = u32()
            if u < limit:
                return u % n

    deck = [r + s for s in "CDHS" for r in "A23456789TJQK"]
    for i in range(51, 0, -1):
        j = uniform(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def _seeded(data, game: str, committed: str | None, dealer: int) -> str | None:
    if committed is None:
        return None
    seed = data.get("server_seed", "")
    if sha256(seed) != committed:
        return "server seed is not the committed one"
    deck = shuffle(seed, game, data["round"], data["client_seeds"])
    hands = data["hands"]
    if [hands[dealer], hands[(dealer + 1) % 3], hands[(dealer + 2) % 3], data["stock"]] != [
        deck[:13],
        deck[13:25],
        deck[25:37],
        deck[37:],
    ]:
        return "not the shuffle of its seeds"
    return None


def _deal(data, rounds_done, first_dealer, last_dealer, last_winner) -> str | None:
    hands, stock = data["hands"], data["stock"]
    text = data["salt"] + ":" + ",".join(hands[0] + hands[1] + hands[2] + stock)
    if sha256(text) != data["deck_commitment"]:
        return "commitment"
    if data["round"] != rounds_done + 1:
        return "round number"
    if rounds_done == 0:
        dealer = first_dealer
    elif last_winner is not None:
        dealer = last_winner
    else:
        dealer = (last_dealer + 1) % 3
    if data["dealer"] != dealer:
        return "dealer"
    sizes = [len(h) for h in hands]
    want = [12, 12, 12]
    want[dealer] = 13
    if sizes != want or len(stock) != 15:
        return "sizes"
    cards = [c for h in hands for c in h] + list(stock)
    if len(set(cards)) != 52 or set(cards) != FULL_DECK:
        return "not 52 distinct cards"
    return None


def _cards(doc) -> str | None:
    events = doc["events"]
    first = events[0]["data"]
    if first["type"] != "game_started":
        return f"seq {events[0]['seq']}: not game_started"
    rounds_done, last_dealer, last_winner, over = 0, None, None, False
    committed = first.get("next_server_seed_hash") or None
    hands = stock = discard = melds = None
    for event in events[1:]:
        data, seq, kind = event["data"], event["seq"], event["type"]
        try:
            if kind == "round_started":
                if event["actor"] != "system" or over:
                    return f"deal at seq {seq}: not the server's, or after the match"
                fault = _deal(data, rounds_done, first["first_dealer"], last_dealer, last_winner)
                fault = fault or _seeded(data, doc["game"], committed, data["dealer"])
                if fault:
                    return f"deal at seq {seq}: {fault}"
                committed = None
                rounds_done, last_dealer = data["round"], data["dealer"]
                hands = [set(h) for h in data["hands"]]
                stock, discard, melds = list(data["stock"]), [], {}
            elif kind == "round_ended":
                last_winner = data["winner"]
                committed = data.get("next_server_seed_hash") or None
            elif kind == "match_ended":
                over = True
            elif kind == "drew":
                if not stock or stock[0] != data["card"]:
                    return f"cards at seq {seq}: not the top of the stock"
                hands[data["seat"]].add(stock.pop(0))
            elif kind == "took_discard":
                if not discard or discard[-1] != data["card"]:
                    return f"cards at seq {seq}: not the top discard"
                discard.pop()
                if data["lay_off"]:
                    melds[data["meld_id"]].add(data["card"])
                else:
                    rest = set(data["cards"]) - {data["card"]}
                    if not rest <= hands[data["seat"]]:
                        return f"cards at seq {seq}: not in the hand"
                    hands[data["seat"]] -= rest
                    melds[data["meld_id"]] = set(data["cards"])
            elif kind == "melded":
                cards = set(data["cards"])
                if not cards <= hands[data["seat"]]:
                    return f"cards at seq {seq}: not in the hand"
                hands[data["seat"]] -= cards
                melds[data["meld_id"]] = cards
            elif kind == "laid_off":
                if data["card"] not in hands[data["seat"]] or data["meld_id"] not in melds:
                    return f"cards at seq {seq}: no such card or meld"
                hands[data["seat"]].discard(data["card"])
                melds[data["meld_id"]].add(data["card"])
            elif kind == "discarded":
                if data["card"] not in hands[data["seat"]]:
                    return f"cards at seq {seq}: not in the hand"
                hands[data["seat"]].discard(data["card"])
                discard.append(data["card"])
        except (KeyError, TypeError, IndexError, AttributeError):
            return f"cards at seq {seq}: malformed {kind}"
        if hands is not None:
            places = [*hands, set(stock), set(discard), *melds.values()]
            union = set().union(*places)
            if sum(len(p) for p in places) != 52 or union != FULL_DECK:
                return f"cards at seq {seq}: not each card in exactly one place"
    return None


def _seal(doc, public_key_hex: str) -> str | None:
    seal = doc.get("seal")
    if not seal:
        return "seal: none"
    last = doc["events"][-1]
    if seal["version"] != doc["version"] or seal["hash"] != last["hash"]:
        return "seal: another version or hash"
    if seal["key_id"] != sha256(public_key_hex)[:16]:
        return "seal: another key"
    rules = doc["events"][0]["data"]["rules"]
    message = canonical(
        {
            "game": doc["game"],
            "version": doc["version"],
            "hash": last["hash"],
            "rules_digest": sha256(canonical(rules)),
        }
    )
    ok = ed25519_verify(
        bytes.fromhex(public_key_hex), message.encode("ascii"), bytes.fromhex(seal["signature"])
    )
    return None if ok else "seal: bad signature"


def verify(doc, public_key_hex: str) -> str | None:
    return _chain(doc) or _cards(doc) or _seal(doc, public_key_hex)


def receipts_match(doc, receipts: dict[int, str]) -> bool:
    """Section 3: every kept receipt (seq -> hash) is in the export with the same hash."""
    hashes = {e["seq"]: e["hash"] for e in doc["events"]}
    return all(hashes.get(seq) == digest for seq, digest in receipts.items())
