"""Protobuf descriptions of apps/v1 and autoscaling/v1 Scale (field numbers of k8s.io/api v0.34
apps/v1 and autoscaling/v1 generated.proto; notation in apimachinery/protobuf.py). Fields whose JSON
tag has no omitempty are marked `?` so that a zero sent on the wire stays in the object.
PodTemplateSpec and the PersistentVolumeClaimSpec tree come from api/core/proto.py."""

from ...apimachinery import protobuf
from ..core import proto as _core  # noqa: F401 - PodTemplateSpec, PersistentVolumeClaimSpec...

GROUP_VERSION = "apps/v1"

protobuf.define("""
Deployment: metadata=1:ObjectMeta spec=2:DeploymentSpec status=3:DeploymentStatus
DeploymentSpec: replicas=1:int32? selector=2:LabelSelector? template=3:PodTemplateSpec strategy=4:DeploymentStrategy minReadySeconds=5:int32 revisionHistoryLimit=6:int32? paused=7:bool progressDeadlineSeconds=9:int32?
DeploymentStrategy: type=1:string rollingUpdate=2:RollingUpdateDeployment?
RollingUpdateDeployment: maxUnavailable=1:IntOrString? maxSurge=2:IntOrString?
DeploymentStatus: observedGeneration=1:int64 replicas=2:int32 updatedReplicas=3:int32 readyReplicas=7:int32 availableReplicas=4:int32 unavailableReplicas=5:int32 terminatingReplicas=9:int32? conditions=6:DeploymentCondition[] collisionCount=8:int32?
DeploymentCondition: type=1:string? status=2:string? lastUpdateTime=6:Time lastTransitionTime=7:Time reason=4:string message=5:string
ReplicaSet: metadata=1:ObjectMeta spec=2:ReplicaSetSpec status=3:ReplicaSetStatus
ReplicaSetSpec: replicas=1:int32? minReadySeconds=4:int32 selector=2:LabelSelector? template=3:PodTemplateSpec
ReplicaSetStatus: replicas=1:int32? fullyLabeledReplicas=2:int32 readyReplicas=4:int32 availableReplicas=5:int32 terminatingReplicas=7:int32? observedGeneration=3:int64 conditions=6:ReplicaSetCondition[]
ReplicaSetCondition: type=1:string? status=2:string? lastTransitionTime=3:Time reason=4:string message=5:string
""")
protobuf.define("""
StatefulSet: metadata=1:ObjectMeta spec=2:StatefulSetSpec status=3:StatefulSetStatus
StatefulSetSpec: replicas=1:int32? selector=2:LabelSelector? template=3:PodTemplateSpec volumeClaimTemplates=4:PersistentVolumeClaim[] serviceName=5:string? podManagementPolicy=6:string updateStrategy=7:StatefulSetUpdateStrategy revisionHistoryLimit=8:int32? minReadySeconds=9:int32 persistentVolumeClaimRetentionPolicy=10:StatefulSetPersistentVolumeClaimRetentionPolicy? ordinals=11:StatefulSetOrdinals?
StatefulSetUpdateStrategy: type=1:string rollingUpdate=2:RollingUpdateStatefulSetStrategy?
RollingUpdateStatefulSetStrategy: partition=1:int32? maxUnavailable=2:IntOrString?
StatefulSetPersistentVolumeClaimRetentionPolicy: whenDeleted=1:string whenScaled=2:string
StatefulSetOrdinals: start=1:int32?
StatefulSetStatus: observedGeneration=1:int64 replicas=2:int32? readyReplicas=3:int32 currentReplicas=4:int32 updatedReplicas=5:int32 currentRevision=6:string updateRevision=7:string collisionCount=9:int32? conditions=10:StatefulSetCondition[] availableReplicas=11:int32?
StatefulSetCondition: type=1:string? status=2:string? lastTransitionTime=3:Time reason=4:string message=5:string
PersistentVolumeClaim: metadata=1:ObjectMeta spec=2:PersistentVolumeClaimSpec status=3:PersistentVolumeClaimStatus
PersistentVolumeClaimStatus: phase=1:string accessModes=2:string[] capacity=3:map<Quantity> conditions=4:PersistentVolumeClaimCondition[] allocatedResources=5:map<Quantity> allocatedResourceStatuses=7:map<string> currentVolumeAttributesClassName=8:string? modifyVolumeStatus=9:ModifyVolumeStatus?
PersistentVolumeClaimCondition: type=1:string status=2:string lastProbeTime=3:Time lastTransitionTime=4:Time reason=5:string message=6:string
ModifyVolumeStatus: targetVolumeAttributesClassName=1:string status=2:string
""")
protobuf.define("""
DaemonSet: metadata=1:ObjectMeta spec=2:DaemonSetSpec status=3:DaemonSetStatus
DaemonSetSpec: selector=1:LabelSelector? template=2:PodTemplateSpec updateStrategy=3:DaemonSetUpdateStrategy minReadySeconds=4:int32 revisionHistoryLimit=6:int32?
DaemonSetUpdateStrategy: type=1:string rollingUpdate=2:RollingUpdateDaemonSet?
RollingUpdateDaemonSet: maxUnavailable=1:IntOrString? maxSurge=2:IntOrString?
DaemonSetStatus: currentNumberScheduled=1:int32? numberMisscheduled=2:int32? desiredNumberScheduled=3:int32? numberReady=4:int32? observedGeneration=5:int64 updatedNumberScheduled=6:int32 numberAvailable=7:int32 numberUnavailable=8:int32 collisionCount=9:int32? conditions=10:DaemonSetCondition[]
DaemonSetCondition: type=1:string? status=2:string? lastTransitionTime=3:Time reason=4:string message=5:string
ControllerRevision: metadata=1:ObjectMeta data=2:RawExtension revision=3:int64?
Scale: metadata=1:ObjectMeta spec=2:ScaleSpec status=3:ScaleStatus
ScaleSpec: replicas=1:int32
ScaleStatus: replicas=1:int32? selector=2:string
""")
for _kind in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "ControllerRevision"):
    protobuf.register_kind(GROUP_VERSION, _kind)
protobuf.register_kind("autoscaling/v1", "Scale")
