"""The DRA feature gates as kube-apiserver v1.34 defaults them (pkg/features/kube_features.go).

Fields behind a disabled gate are dropped on write unless the stored object already uses them
(the strategies' dropDisabled* functions). GATES may be changed by the server's --feature-gates
handling or by tests; nothing else reads the defaults."""

from __future__ import annotations

ADMIN_ACCESS = "DRAAdminAccess"
PRIORITIZED_LIST = "DRAPrioritizedList"
DEVICE_STATUS = "DRAResourceClaimDeviceStatus"
CONSUMABLE_CAPACITY = "DRAConsumableCapacity"
BINDING_CONDITIONS = "DRADeviceBindingConditions"
DEVICE_TAINTS = "DRADeviceTaints"
EXTENDED_RESOURCE = "DRAExtendedResource"
PARTITIONABLE_DEVICES = "DRAPartitionableDevices"

# Beta gates are on, alpha gates off, as in v1.34.
DEFAULTS: dict[str, bool] = {
    ADMIN_ACCESS: True,
    PRIORITIZED_LIST: True,
    DEVICE_STATUS: True,
    CONSUMABLE_CAPACITY: False,
    BINDING_CONDITIONS: False,
    DEVICE_TAINTS: False,
    EXTENDED_RESOURCE: False,
    PARTITIONABLE_DEVICES: False,
}
GATES: dict[str, bool] = dict(DEFAULTS)


def enabled(name: str) -> bool:
    return GATES.get(name, False)


def configure(overrides: dict[str, bool]) -> None:
    """The DRA gates as --feature-gates sets them (the others are not ours); unnamed ones keep their
    v1.34 defaults."""
    GATES.clear()
    GATES.update(DEFAULTS)
    GATES.update({name: value for name, value in overrides.items() if name in DEFAULTS})
