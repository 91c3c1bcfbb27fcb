"""csidrivers (pkg/apis/storage, pkg/registry/storage/csidriver).

v1.34's feature gates: SELinuxMountReadWriteOncePod on (seLinuxMount defaulted), MutableCSINodeAllocatableCount
off (nodeAllocatableUpdatePeriodSeconds dropped unless already stored)."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field, validation
from ...registry.context import Context
from ...registry.rest import ResourceInfo, TableColumn
from ...registry.store import Store
from ...registry.strategy import Strategy
from ...registry.table import AGE, NAME, TableConvertor, age, name
from ...storage.factory import StorageFactory
from .common import GROUP, semantic_equal

Object = dict[str, Any]
INFO = ResourceInfo(GROUP, "v1", "csidrivers", "CSIDriver", "csidriver", False)
FS_GROUP_POLICIES = ("File", "None", "ReadWriteOnceWithFSType")
LIFECYCLE_MODES = ("Persistent", "Ephemeral")
MIN_TOKEN_SECONDS = 10 * 60
MAX_TOKEN_SECONDS = 1 << 32
GATED_FIELD = "nodeAllocatableUpdatePeriodSeconds"
# SetDefaults_CSIDriver, in the order it applies them.
FLAG_DEFAULTS = (("attachRequired", True), ("podInfoOnMount", False), ("storageCapacity", False))
LATE_DEFAULTS = (("requiresRepublish", False), ("seLinuxMount", False))


def set_defaults(spec: Object) -> None:
    for key, value in FLAG_DEFAULTS:
        if spec.get(key) is None:
            spec[key] = value
    if spec.get("fsGroupPolicy") is None:
        spec["fsGroupPolicy"] = "ReadWriteOnceWithFSType"
    if not spec.get("volumeLifecycleModes"):
        spec["volumeLifecycleModes"] = ["Persistent"]
    for key, value in LATE_DEFAULTS:
        if spec.get(key) is None:
            spec[key] = value


def validate_spec(spec: Object, path: field.Path) -> field.ErrorList:
    """validateCSIDriverSpec (the field path of attachRequired is spelled attachedRequired upstream)."""
    errs: field.ErrorList = []
    for key, child in (("attachRequired", "attachedRequired"), ("podInfoOnMount", "podInfoOnMount"),
                       ("storageCapacity", "storageCapacity")):
        if spec.get(key) is None:
            errs.append(field.required(path.child(child), ""))
    policy = spec.get("fsGroupPolicy")
    if policy is not None and policy not in FS_GROUP_POLICIES:
        errs.append(field.not_supported(path.child("fsGroupPolicy"), policy, FS_GROUP_POLICIES))
    errs += validate_token_requests(spec.get("tokenRequests") or [], path.child("tokenRequests"))
    errs += [field.not_supported(path.child("volumeLifecycleModes"), mode, LIFECYCLE_MODES)
             for mode in spec.get("volumeLifecycleModes") or [] if mode not in LIFECYCLE_MODES]
    if spec.get("seLinuxMount") is None:
        errs.append(field.required(path.child("seLinuxMount"), ""))
    period = spec.get(GATED_FIELD)
    if period is not None and period < 10:
        errs.append(field.invalid(path.child(GATED_FIELD), period, "must be greater than or equal to 10 seconds"))
    return errs


def validate_token_requests(requests: list[Object], path: field.Path) -> field.ErrorList:
    errs: field.ErrorList = []
    audiences: set[str] = set()
    for i, request in enumerate(requests):
        audience = request.get("audience") or ""
        if audience in audiences:
            errs.append(field.duplicate(path.index(i).child("audience"), audience))
            continue
        audiences.add(audience)
        seconds = request.get("expirationSeconds")
        if seconds is None:
            continue
        if seconds < MIN_TOKEN_SECONDS:
            errs.append(field.invalid(path.index(i).child("expirationSeconds"), seconds,
                                      "may not specify a duration less than 10 minutes"))
        if seconds > MAX_TOKEN_SECONDS:
            errs.append(field.invalid(path.index(i).child("expirationSeconds"), seconds,
                                      "may not specify a duration larger than 2^32 seconds"))
    return errs


class CSIDriverStrategy(Strategy):
    allow_unconditional_update = False

    def default(self, obj: Object) -> None:
        spec = obj.get("spec")
        obj["spec"] = spec if isinstance(spec, dict) else {}
        set_defaults(obj["spec"])

    def prepare_for_create(self, ctx: Context, obj: Object) -> None:
        super().prepare_for_create(ctx, obj)
        (obj.get("spec") or {}).pop(GATED_FIELD, None)

    def prepare_for_update(self, ctx: Context, obj: Object, old: Object) -> None:
        """Drops the gated field unless stored; any spec change bumps the generation (none is set on create)."""
        super().prepare_for_update(ctx, obj, old)
        spec, old_spec = obj.get("spec") or {}, old.get("spec") or {}
        if old_spec.get(GATED_FIELD) is None:
            spec.pop(GATED_FIELD, None)
        generation = old["metadata"].get("generation") or 0
        if not semantic_equal(spec, old_spec):
            generation += 1
        if generation:
            obj["metadata"]["generation"] = generation

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        return super().validate(ctx, obj) + validate_spec(obj.get("spec") or {}, field.Path("spec"))

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        """ValidateCSIDriverUpdate: attachRequired and volumeLifecycleModes are immutable."""
        errs = super().validate_update(ctx, obj, old)
        spec, old_spec = obj.get("spec") or {}, old.get("spec") or {}
        for key, child in (("attachRequired", "attachedRequired"), ("volumeLifecycleModes", "volumeLifecycleModes")):
            if not semantic_equal(spec.get(key), old_spec.get(key)):
                errs.append(field.invalid(field.Path("spec", child), spec.get(key),
                                          validation.FIELD_IMMUTABLE_ERROR_MSG))
        return errs


def _row(obj: Object) -> list[Any]:
    spec = obj.get("spec") or {}
    modes = ",".join(spec.get("volumeLifecycleModes") or []) or "<none>"
    requests = spec.get("tokenRequests")
    tokens = "<unset>" if requests is None else ",".join(r.get("audience") or "" for r in requests)
    return [name(obj), _flag(spec, "attachRequired", True), _flag(spec, "podInfoOnMount", False),
            _flag(spec, "storageCapacity", False), tokens, _flag(spec, "requiresRepublish", False), modes, age(obj)]


def _flag(spec: Object, key: str, unset: bool) -> bool:
    value = spec.get(key)
    return unset if value is None else bool(value)


def _column(title: str, kind: str, doc: str) -> TableColumn:
    return TableColumn(title, kind, "", doc)


TABLE = TableConvertor((
    NAME,
    _column("AttachRequired", "boolean", (
        "attachRequired indicates this CSI volume driver requires an attach operation (because it implements the "
        "CSI ControllerPublishVolume() method), and that the Kubernetes attach detach controller should call the "
        "attach volume interface which checks the volumeattachment status and waits until the volume is attached "
        "before proceeding to mounting. The CSI external-attacher coordinates with CSI volume driver and updates "
        "the volumeattachment status when the attach operation is complete. If the value is specified to false, "
        "the attach operation will be skipped. Otherwise the attach operation will be called.\n\nThis field is "
        "immutable.")),
    _column("PodInfoOnMount", "boolean", (
        "podInfoOnMount indicates this CSI volume driver requires additional pod information (like podName, "
        "podUID, etc.) during mount operations, if set to true. If set to false, pod information will not be "
        "passed on mount. Default is false.\n\nThe CSI driver specifies podInfoOnMount as part of driver "
        "deployment. If true, Kubelet will pass pod information as VolumeContext in the CSI NodePublishVolume() "
        "calls. The CSI driver is responsible for parsing and validating the information passed in as "
        "VolumeContext.\n\nThe following VolumeContext will be passed if podInfoOnMount is set to true. This list "
        "might grow, but the prefix will be used. \"csi.storage.k8s.io/pod.name\": pod.Name "
        "\"csi.storage.k8s.io/pod.namespace\": pod.Namespace \"csi.storage.k8s.io/pod.uid\": string(pod.UID) "
        "\"csi.storage.k8s.io/ephemeral\": \"true\" if the volume is an ephemeral inline volume\n"
        "                                defined by a CSIVolumeSource, otherwise \"false\"\n\n"
        "\"csi.storage.k8s.io/ephemeral\" is a new feature in Kubernetes 1.16. It is only required for drivers "
        "which support both the \"Persistent\" and \"Ephemeral\" VolumeLifecycleMode. Other drivers can leave pod "
        "info disabled and/or ignore this field. As Kubernetes 1.15 doesn't support this field, drivers can only "
        "support one mode when deployed on such a cluster and the deployment determines which mode that is, for "
        "example via a command line parameter of the driver.\n\nThis field was immutable in Kubernetes < 1.29 "
        "and now is mutable.")),
    _column("StorageCapacity", "boolean", (
        "storageCapacity indicates that the CSI volume driver wants pod scheduling to consider the storage "
        "capacity that the driver deployment will report by creating CSIStorageCapacity objects with capacity "
        "information, if set to true.\n\nThe check can be enabled immediately when deploying a driver. In that "
        "case, provisioning new volumes with late binding will pause until the driver deployment has published "
        "some suitable CSIStorageCapacity object.\n\nAlternatively, the driver can be deployed with the field "
        "unset or false and it can be flipped later when storage capacity information has been published.\n\n"
        "This field was immutable in Kubernetes <= 1.22 and now is mutable.")),
    _column("TokenRequests", "string", (
        "tokenRequests indicates the CSI driver needs pods' service account tokens it is mounting volume for to "
        "do necessary authentication. Kubelet will pass the tokens in VolumeContext in the CSI NodePublishVolume "
        "calls. The CSI driver should parse and validate the following VolumeContext: "
        "\"csi.storage.k8s.io/serviceAccount.tokens\": {\n  \"<audience>\": {\n    \"token\": <token>,\n"
        "    \"expirationTimestamp\": <expiration timestamp in RFC3339>,\n  },\n  ...\n}\n\nNote: Audience in "
        "each TokenRequest should be different and at most one token is empty string. To receive a new token "
        "after expiry, RequiresRepublish can be used to trigger NodePublishVolume periodically.")),
    _column("RequiresRepublish", "boolean", (
        "requiresRepublish indicates the CSI driver wants `NodePublishVolume` being periodically called to "
        "reflect any possible change in the mounted volume. This field defaults to false.\n\nNote: After a "
        "successful initial NodePublishVolume call, subsequent calls to NodePublishVolume should only update the "
        "contents of the volume. New mount points will not be seen by a running container.")),
    _column("Modes", "string", (
        "volumeLifecycleModes defines what kind of volumes this CSI volume driver supports. The default if the "
        "list is empty is \"Persistent\", which is the usage defined by the CSI specification and implemented in "
        "Kubernetes via the usual PV/PVC mechanism.\n\nThe other mode is \"Ephemeral\". In this mode, volumes are "
        "defined inline inside the pod spec with CSIVolumeSource and their lifecycle is tied to the lifecycle of "
        "that pod. A driver has to be aware of this because it is only going to get a NodePublishVolume call for "
        "such a volume.\n\nFor more information about implementing this mode, see "
        "https://kubernetes-csi.github.io/docs/ephemeral-local-volumes.html A driver can support one or more of "
        "these modes and more modes may be added in the future.\n\nThis field is beta. This field is immutable.")),
    AGE,
), _row)


def new_rest(storage: StorageFactory) -> dict[str, Any]:
    return {"csidrivers": Store(INFO, CSIDriverStrategy(INFO), storage, "/registry/csidrivers", TABLE)}
