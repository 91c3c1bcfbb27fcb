"""APIGroupInfo: what a group hands to the server to install: its versions' REST storage."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class APIGroupInfo:
    group: str
    # version -> {"resource" or "resource/subresource": REST storage}, in preference order
    versioned_storage: dict[str, dict[str, Any]] = field(default_factory=dict)
