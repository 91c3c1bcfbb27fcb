"""Shuffle sharding (k8s.io/apimachinery pkg/util/shufflesharding): a flow's hash deals it a hand of
distinct queues out of the deck, so two flows rarely share all of their queues."""

from __future__ import annotations

import hashlib
import math

MAX_HASH_BITS = 60


def required_entropy_bits(deck_size: int, hand_size: int) -> int:
    return math.ceil(math.log2(deck_size) * hand_size)


class Dealer:
    def __init__(self, deck_size: int, hand_size: int):
        if not 0 < hand_size <= deck_size:
            raise ValueError(f"handSize {hand_size} must be in 1..deckSize {deck_size}")
        if required_entropy_bits(deck_size, hand_size) > MAX_HASH_BITS:
            raise ValueError(
                f"deckSize {deck_size} and handSize {hand_size} need more than {MAX_HASH_BITS} bits"
            )
        self.deck_size, self.hand_size = deck_size, hand_size

    def deal(self, hash_value: int) -> list[int]:
        """The hand's cards: each remainder of the hash picks among the cards not yet dealt."""
        remainders = []
        for i in range(self.hand_size):
            hash_value, remainder = divmod(hash_value, self.deck_size - i)
            remainders.append(remainder)
        hand = []
        for i, card in enumerate(remainders):
            for earlier in reversed(remainders[:i]):
                if card >= earlier:
                    card += 1
            hand.append(card)
        return hand


def hash_flow_id(flow_schema: str, distinguisher: str) -> int:
    """hashFlowID: the first 8 bytes of sha256(schema name, 0, distinguisher), little endian."""
    digest = hashlib.sha256(flow_schema.encode() + b"\x00" + distinguisher.encode()).digest()
    return int.from_bytes(digest[:8], "little")
