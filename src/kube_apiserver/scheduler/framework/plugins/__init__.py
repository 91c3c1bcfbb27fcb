"""The in-tree plugins of the default profile, in its filter order (pkg/scheduler/apis/config/v1
getDefaultPlugins). Not here: VolumeRestrictions, NodeVolumeLimits, VolumeBinding and VolumeZone (no
volume scheduling), ImageLocality (no images on simulated nodes), DynamicResources, DefaultPreemption."""

from __future__ import annotations

from ..interface import Plugin
from .interpod_affinity import InterPodAffinity
from .node_affinity import NodeAffinity
from .node_name import NodeName
from .node_ports import NodePorts
from .node_unschedulable import NodeUnschedulable
from .noderesources import BalancedAllocation, Fit
from .pod_topology_spread import PodTopologySpread
from .taint_toleration import TaintToleration


def default_plugins() -> list[Plugin]:
    return [
        NodeUnschedulable(),
        NodeName(),
        TaintToleration(),
        NodeAffinity(),
        NodePorts(),
        Fit(),
        PodTopologySpread(),
        InterPodAffinity(),
        BalancedAllocation(),
    ]


__all__ = [
    "BalancedAllocation",
    "Fit",
    "InterPodAffinity",
    "NodeAffinity",
    "NodeName",
    "NodePorts",
    "NodeUnschedulable",
    "PodTopologySpread",
    "TaintToleration",
    "default_plugins",
]
