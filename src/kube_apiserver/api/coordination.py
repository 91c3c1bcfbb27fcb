"""coordination.k8s.io/v1: Lease (pkg/apis/coordination, pkg/registry/coordination/lease)."""

from __future__ import annotations

from typing import Any

from ..apimachinery import field, validation
from ..registry.context import Context
from ..registry.rest import ResourceInfo, TableColumn
from ..registry.store import Store
from ..registry.strategy import Strategy
from ..registry.table import AGE, NAME, TableConvertor, age, name
from ..server.api_group_info import APIGroupInfo
from ..storage.factory import StorageFactory

Object = dict[str, Any]
GROUP = "coordination.k8s.io"
INFO = ResourceInfo(GROUP, "v1", "leases", "Lease", "lease", True)
LEASE_STRATEGIES = ("OldestEmulationVersion",)
# Fields of the CoordinatedLeaderElection feature (beta, off by default in v1.34): dropped unless in use.
GATED_FIELDS = ("strategy", "preferredHolder")
HOLDER_DESCRIPTION = ("holderIdentity contains the identity of the holder of a current lease. If Coordinated "
                      "Leader Election is used, the holder identity must be equal to the elected "
                      "LeaseCandidate.metadata.name field.")


def validate_strategy(strategy: str, path: field.Path) -> field.ErrorList:
    """ValidateCoordinatedLeaseStrategy (which, as in Kubernetes, names the field twice)."""
    path = path.child("strategy")
    if "/" not in strategy:
        return [] if strategy in LEASE_STRATEGIES else [field.not_supported(path, strategy, LEASE_STRATEGIES)]
    return [field.invalid(path, strategy, m) for m in validation.is_qualified_name(strategy)]


def validate_lease_spec(spec: Object, path: field.Path) -> field.ErrorList:
    errs: field.ErrorList = []
    duration = spec.get("leaseDurationSeconds")
    if isinstance(duration, int) and duration <= 0:
        errs.append(field.invalid(path.child("leaseDurationSeconds"), duration, "must be greater than 0"))
    transitions = spec.get("leaseTransitions")
    if isinstance(transitions, int) and transitions < 0:
        errs.append(field.invalid(path.child("leaseTransitions"), transitions,
                                  "must be greater than or equal to 0"))
    if spec.get("strategy") is not None:
        errs += validate_strategy(spec["strategy"], path.child("strategy"))
    if spec.get("preferredHolder") and not spec.get("strategy"):
        errs.append(field.forbidden(path.child("preferredHolder"), "may only be specified if `strategy` is defined"))
    return errs


def _spec(obj: Object) -> Object:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


class LeaseStrategy(Strategy):
    allow_create_on_update = True
    allow_unconditional_update = False

    def prepare_for_create(self, ctx: Context, obj: Object) -> None:
        super().prepare_for_create(ctx, obj)
        for key in GATED_FIELDS:
            _spec(obj).pop(key, None)

    def prepare_for_update(self, ctx: Context, obj: Object, old: Object) -> None:
        super().prepare_for_update(ctx, obj, old)
        for key in GATED_FIELDS:
            if _spec(old).get(key) is None:
                _spec(obj).pop(key, None)

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        return super().validate(ctx, obj) + validate_lease_spec(_spec(obj), field.Path("spec"))


TABLE = TableConvertor((NAME, TableColumn("Holder", "string", "", HOLDER_DESCRIPTION), AGE),
                       lambda o: [name(o), _spec(o).get("holderIdentity") or "", age(o)])


def new_api_group_info(storage: StorageFactory) -> APIGroupInfo:
    store = Store(INFO, LeaseStrategy(INFO), storage, "/registry/leases", TABLE)
    return APIGroupInfo(GROUP, {"v1": {"leases": store}})
