"""prioritylevelconfigurations and prioritylevelconfigurations/status
(pkg/registry/flowcontrol/prioritylevelconfiguration): the strategy, the stored form, the table kubectl
prints and the protobuf description."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field
from ...registry.context import Context
from ...registry.rest import ResourceInfo, TableColumn
from ...registry.store import Store
from ...registry.table import AGE, NAME, TableConvertor, age, name
from ...storage.factory import StorageFactory
from . import structs
from .common import GROUP, VERSION, as_dict, ordered, validate_status
from .defaults import default_priority_level
from .prioritylevel_validation import validate_annotations, validate_spec
from .status import status_rest
from .strategy import FlowControlStrategy

Object = dict[str, Any]
INFO = ResourceInfo(GROUP, VERSION, "prioritylevelconfigurations", "PriorityLevelConfiguration",
                    "prioritylevelconfiguration", False)


class PriorityLevelConfigurationStrategy(FlowControlStrategy):
    spec_struct = staticmethod(structs.priority_level_spec)

    def default(self, obj: Object) -> None:
        default_priority_level(obj)

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        errs = super().validate(ctx, obj) + validate_annotations(obj["metadata"])
        errs += validate_spec(obj["metadata"].get("name") or "", as_dict(obj.get("spec")), field.Path("spec"))
        return errs + validate_status(as_dict(obj.get("status")), field.Path("status"))

    def canonicalize(self, obj: Object) -> None:
        obj["spec"] = stored_spec(as_dict(obj.get("spec")))


def stored_spec(spec: Object) -> Object:
    """The spec as Kubernetes stores and serves it: Go field order, omitempty fields left out."""
    out = ordered(spec, ("type", "limited", "exempt"))
    if "limited" in out:
        limited = ordered(as_dict(out["limited"]), ("nominalConcurrencyShares", "limitResponse", "lendablePercent",
                                                    "borrowingLimitPercent"))
        response = ordered(as_dict(limited.get("limitResponse")), ("type", "queuing"))
        if "queuing" in response:
            response["queuing"] = ordered(as_dict(response["queuing"]), ("queues", "handSize", "queueLengthLimit"))
        limited["limitResponse"] = response
        out["limited"] = limited
    if "exempt" in out:
        out["exempt"] = ordered(as_dict(out["exempt"]), ("nominalConcurrencyShares", "lendablePercent"))
    return out


def _row(obj: Object) -> list[Any]:
    """printPriorityLevelConfiguration: the limited and queuing figures, <none> where there are none."""
    spec = as_dict(obj.get("spec"))
    shares: Any = "<none>"
    queues: Any = "<none>"
    hand_size: Any = "<none>"
    length_limit: Any = "<none>"
    if isinstance(spec.get("limited"), dict):
        limited = spec["limited"]
        shares = limited.get("nominalConcurrencyShares") or 0
        queuing = as_dict(limited.get("limitResponse")).get("queuing")
        if isinstance(queuing, dict):
            queues, hand_size = queuing.get("queues") or 0, queuing.get("handSize") or 0
            length_limit = queuing.get("queueLengthLimit") or 0
    return [name(obj), spec.get("type") or "", shares, queues, hand_size, length_limit, age(obj)]


TABLE = TableConvertor((
    NAME,
    TableColumn("Type", "string", "", "`type` indicates whether this priority level is subject to limitation on "
                "request execution.  A value of `\"Exempt\"` means that requests of this priority level are not "
                "subject to a limit (and thus are never queued) and do not detract from the capacity made "
                "available to other priority levels.  A value of `\"Limited\"` means that (a) requests of this "
                "priority level _are_ subject to limits and (b) some of the server's limited capacity is made "
                "available exclusively to this priority level. Required."),
    TableColumn("NominalConcurrencyShares", "string", "", "`nominalConcurrencyShares` (NCS) contributes to the "
                "computation of the NominalConcurrencyLimit (NominalCL) of this level. This is the number of "
                "execution seats available at this priority level. This is used both for requests dispatched from "
                "this priority level as well as requests dispatched from other priority levels borrowing seats "
                "from this level. The server's concurrency limit (ServerCL) is divided among the Limited priority "
                "levels in proportion to their NCS values:\n\nNominalCL(i)  = ceil( ServerCL * NCS(i) / sum_ncs ) "
                "sum_ncs = sum[priority level k] NCS(k)\n\nBigger numbers mean a larger nominal concurrency "
                "limit, at the expense of every other priority level.\n\nIf not specified, this field defaults to "
                "a value of 30.\n\nSetting this field to zero supports the construction of a \"jail\" for this "
                "priority level that is used to hold some request(s)"),
    TableColumn("Queues", "string", "", "`queues` is the number of queues for this priority level. The queues "
                "exist independently at each apiserver. The value must be positive.  Setting it to 1 effectively "
                "precludes shufflesharding and thus makes the distinguisher method of associated flow schemas "
                "irrelevant.  This field has a default value of 64."),
    TableColumn("HandSize", "string", "", "`handSize` is a small positive number that configures the shuffle "
                "sharding of requests into queues.  When enqueuing a request at this priority level the request's "
                "flow identifier (a string pair) is hashed and the hash value is used to shuffle the list of "
                "queues and deal a hand of the size specified here.  The request is put into one of the shortest "
                "queues in that hand. `handSize` must be no larger than `queues`, and should be significantly "
                "smaller (so that a few heavy flows do not saturate most of the queues).  See the user-facing "
                "documentation for more extensive guidance on setting this field.  This field has a default value "
                "of 8."),
    TableColumn("QueueLengthLimit", "string", "", "`queueLengthLimit` is the maximum number of requests allowed "
                "to be waiting in a given queue of this priority level at a time; excess requests are rejected.  "
                "This value must be positive.  If not specified, it will be defaulted to 50."),
    AGE,
), _row)


def new_rest(storage: StorageFactory) -> dict[str, Any]:
    store = Store(INFO, PriorityLevelConfigurationStrategy(INFO), storage, "/registry/prioritylevelconfigurations",
                  TABLE)
    return {"prioritylevelconfigurations": store,
            "prioritylevelconfigurations/status": status_rest(store)}
