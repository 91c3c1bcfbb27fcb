"""ValidatePriorityLevelConfiguration and its parts (pkg/apis/flowcontrol/validation/validation.go, v1.34)."""

from __future__ import annotations

import math
from typing import Any

from ...apimachinery import field
from . import structs
from .bootstrap import MANDATORY_PRIORITY_LEVELS, mandatory_spec
from .common import EXEMPT, PRESERVE_ZERO_ANNOTATION, as_dict, as_int

Object = dict[str, Any]
ENABLEMENTS = ("Exempt", "Limited")
LIMIT_RESPONSE_TYPES = ("Queue", "Reject")
MAX_QUEUES = 10 * 1000 * 1000
MAX_HASH_BITS = 60  # shufflesharding.MaxHashBits
PERCENT_MESSAGE = "must be between 0 and 100, inclusive"
NON_NEGATIVE_MESSAGE = "must be a non-negative integer"


def validate_annotations(meta: Object) -> field.ErrorList:
    """The v1beta3 round-trip annotation never reaches the stored object."""
    if PRESERVE_ZERO_ANNOTATION not in as_dict(meta.get("annotations")):
        return []
    return [field.forbidden(field.Path("metadata", "annotations"),
                            f"annotation '{PRESERVE_ZERO_ANNOTATION}' is forbidden")]


def validate_spec(name: str, spec: Object, path: field.Path) -> field.ErrorList:
    """ValidatePriorityLevelConfigurationSpec, then ValidateIfMandatoryPriorityLevelConfigurationObject."""
    kind = spec.get("type") or ""
    errs: field.ErrorList = []
    if (name == EXEMPT) != (kind == "Exempt"):
        errs.append(field.invalid(path.child("type"), kind, "type must be 'Exempt' if and only if name is 'exempt'"))
    limited, exempt = spec.get("limited"), spec.get("exempt")
    if kind == "Exempt":
        if limited is not None:
            errs.append(field.forbidden(path.child("limited"), "must be nil if the type is not Limited"))
        if exempt is not None:
            errs += validate_exempt(as_dict(exempt), path.child("exempt"))
    elif kind == "Limited":
        if exempt is not None:
            errs.append(field.forbidden(path.child("exempt"), "must be nil if the type is Limited"))
        if limited is None:
            errs.append(field.required(path.child("limited"), "must not be empty when type is Limited"))
        else:
            errs += validate_limited(as_dict(limited), path.child("limited"))
    else:
        errs.append(field.not_supported(path.child("type"), kind, ENABLEMENTS))
    return errs + _validate_mandatory(name, spec, path)


def _validate_mandatory(name: str, spec: Object, path: field.Path) -> field.ErrorList:
    fixed = mandatory_spec(MANDATORY_PRIORITY_LEVELS, name)
    if fixed is None:
        return []
    have = structs.priority_level_spec(spec)
    if name == EXEMPT:
        # Only the exempt section of the exempt level may differ from the fixed value.
        compared = structs.priority_level_spec({**spec, "exempt": fixed.get("exempt")})
        message = f"spec of '{name}' except the 'spec.exempt' field must equal the fixed value"
    else:
        compared, message = have, f"spec of '{name}' must equal the fixed value"
    if structs.semantic_equal(compared, structs.priority_level_spec(fixed)):
        return []
    return [field.invalid(path, have, message)]


def _validate_percent(value: Any, path: field.Path) -> field.ErrorList:
    if value is None or 0 <= as_int(value) <= 100:
        return []
    return [field.invalid(path, as_int(value), PERCENT_MESSAGE)]


def validate_exempt(exempt: Object, path: field.Path) -> field.ErrorList:
    """ValidateExemptPriorityLevelConfiguration."""
    errs: field.ErrorList = []
    shares = exempt.get("nominalConcurrencyShares")
    if shares is not None and as_int(shares) < 0:
        errs.append(field.invalid(path.child("nominalConcurrencyShares"), as_int(shares), NON_NEGATIVE_MESSAGE))
    return errs + _validate_percent(exempt.get("lendablePercent"), path.child("lendablePercent"))


def validate_limited(limited: Object, path: field.Path) -> field.ErrorList:
    """ValidateLimitedPriorityLevelConfiguration (zero shares allowed since v1.32)."""
    errs: field.ErrorList = []
    shares = as_int(limited.get("nominalConcurrencyShares"))
    if shares < 0:
        errs.append(field.invalid(path.child("nominalConcurrencyShares"), shares, NON_NEGATIVE_MESSAGE))
    errs += validate_limit_response(as_dict(limited.get("limitResponse")), path.child("limitResponse"))
    errs += _validate_percent(limited.get("lendablePercent"), path.child("lendablePercent"))
    borrowing = limited.get("borrowingLimitPercent")
    if borrowing is not None and as_int(borrowing) < 0:
        errs.append(field.invalid(path.child("borrowingLimitPercent"), as_int(borrowing),
                                  "if specified, must be a non-negative integer"))
    return errs


def validate_limit_response(response: Object, path: field.Path) -> field.ErrorList:
    """ValidateLimitResponse."""
    kind, queuing = response.get("type") or "", response.get("queuing")
    if kind == "Reject":
        if queuing is None:
            return []
        return [field.forbidden(path.child("queuing"), "must be nil if limited.limitResponse.type is not Limited")]
    if kind == "Queue":
        if queuing is None:
            return [field.required(path.child("queuing"),
                                   "must not be empty if limited.limitResponse.type is Limited")]
        return validate_queuing(as_dict(queuing), path.child("queuing"))
    return [field.not_supported(path.child("type"), kind, LIMIT_RESPONSE_TYPES)]


def required_entropy_bits(deck_size: int, hand_size: int) -> int:
    """shufflesharding.RequiredEntropyBits."""
    return math.ceil(math.log2(deck_size) * hand_size)


def validate_queuing(queuing: Object, path: field.Path) -> field.ErrorList:
    """ValidatePriorityLevelQueuingConfiguration: positive sizes a shuffle-sharding dealer can use."""
    queues, hand_size = as_int(queuing.get("queues")), as_int(queuing.get("handSize"))
    length_limit = as_int(queuing.get("queueLengthLimit"))
    errs: field.ErrorList = []
    if length_limit <= 0:
        errs.append(field.invalid(path.child("queueLengthLimit"), length_limit, "must be positive"))
    if queues <= 0:
        errs.append(field.invalid(path.child("queues"), queues, "must be positive"))
    elif queues > MAX_QUEUES:
        errs.append(field.invalid(path.child("queues"), queues, f"must not be greater than {MAX_QUEUES}"))
    hand_path = path.child("handSize")
    if hand_size <= 0:
        errs.append(field.invalid(hand_path, hand_size, "must be positive"))
    elif hand_size > queues:
        errs.append(field.invalid(hand_path, hand_size, f"should not be greater than queues ({queues})"))
    elif required_entropy_bits(queues, hand_size) > MAX_HASH_BITS:
        errs.append(field.invalid(hand_path, hand_size, f"required entropy bits of deckSize {queues} and handSize "
                                                        f"{hand_size} should not be greater than {MAX_HASH_BITS}"))
    return errs
