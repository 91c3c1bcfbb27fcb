"""The storage codec: what writing (encode) and reading (decode) one stored value costs per media type, for
a ConfigMap, a Pod and a Deployment as this server stores them (tests/data/storage/stored-objects.json).

    python3 bench/storage_codec.py [--rounds 2000]

A write encodes once (and decodes what it stored, for the response and the watch event); every watch
cache decodes each event's value once. Prints microseconds per operation and value sizes; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kube_apiserver.storage.codec import JSON, PROTOBUF, YAML, StorageCodec

OBJECTS = Path(__file__).resolve().parents[1] / "tests" / "data" / "storage" / "stored-objects.json"
SAMPLES = {
    "ConfigMap": "/registry/configmaps/corpus/web-config",
    "Pod": "/registry/pods/corpus/web-0",
    "Deployment": "/registry/deployments/corpus/web",
}


def per_call_us(fn: Callable[[], Any], rounds: int) -> float:
    """The best of three runs of `rounds` calls, in microseconds per call."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(rounds):
            fn()
        best = min(best, time.perf_counter() - start)
    return best / rounds * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2000)
    args = parser.parse_args()
    stored = json.loads(OBJECTS.read_text())
    print(f"{'kind':<11} {'media type':<36} {'bytes':>6} {'encode us':>10} {'decode us':>10} {'both us':>9}")
    for kind, key in SAMPLES.items():
        obj = stored[key]
        for media_type in (JSON, PROTOBUF, YAML):
            codec = StorageCodec(media_type)
            value = codec.encode(obj)
            rounds = args.rounds if media_type != YAML else max(args.rounds // 10, 10)
            encode = per_call_us(lambda c=codec, o=obj: c.encode(o), rounds)
            decode = per_call_us(lambda c=codec, v=value: c.decode(v, 1), rounds)
            print(
                f"{kind:<11} {media_type:<36} {len(value):>6} {encode:>10.1f} {decode:>10.1f} {encode + decode:>9.1f}"
            )


if __name__ == "__main__":
    main()
