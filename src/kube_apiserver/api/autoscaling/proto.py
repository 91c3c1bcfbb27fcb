"""autoscaling/v1 and autoscaling/v2 messages (k8s.io/api/autoscaling/{v1,v2}/generated.proto, v1.34)
in the notation of apimachinery/protobuf.py. Both versions name their messages alike, so each is
registered under a version prefix."""

from __future__ import annotations

from ...apimachinery import protobuf

protobuf.define("""
HPAv1: metadata=1:ObjectMeta spec=2:HPAv1Spec status=3:HPAv1Status
HPAv1Spec: scaleTargetRef=1:HPAv1Reference minReplicas=2:int32? maxReplicas=3:int32 targetCPUUtilizationPercentage=4:int32?
HPAv1Status: observedGeneration=1:int64? lastScaleTime=2:Time? currentReplicas=3:int32 desiredReplicas=4:int32 currentCPUUtilizationPercentage=5:int32?
HPAv1Reference: kind=1:string name=2:string apiVersion=3:string
HPAv2: metadata=1:ObjectMeta spec=2:HPAv2Spec status=3:HPAv2Status
HPAv2Spec: scaleTargetRef=1:HPAv2Reference minReplicas=2:int32? maxReplicas=3:int32 metrics=4:HPAv2MetricSpec[] behavior=5:HPAv2Behavior?
HPAv2Reference: kind=1:string name=2:string apiVersion=3:string
HPAv2Behavior: scaleUp=1:HPAv2ScalingRules? scaleDown=2:HPAv2ScalingRules?
HPAv2ScalingRules: stabilizationWindowSeconds=3:int32? selectPolicy=1:string? policies=2:HPAv2ScalingPolicy[] tolerance=4:Quantity?
HPAv2ScalingPolicy: type=1:string value=2:int32 periodSeconds=3:int32
HPAv2MetricSpec: type=1:string object=2:HPAv2ObjectSource? pods=3:HPAv2PodsSource? resource=4:HPAv2ResourceSource? containerResource=7:HPAv2ContainerResourceSource? external=5:HPAv2ExternalSource?
HPAv2ObjectSource: describedObject=1:HPAv2Reference target=2:HPAv2MetricTarget metric=3:HPAv2MetricIdentifier
HPAv2PodsSource: metric=1:HPAv2MetricIdentifier target=2:HPAv2MetricTarget
HPAv2ResourceSource: name=1:string target=2:HPAv2MetricTarget
HPAv2ContainerResourceSource: name=1:string target=2:HPAv2MetricTarget container=3:string
HPAv2ExternalSource: metric=1:HPAv2MetricIdentifier target=2:HPAv2MetricTarget
HPAv2MetricIdentifier: name=1:string selector=2:LabelSelector?
HPAv2MetricTarget: type=1:string value=2:Quantity? averageValue=3:Quantity? averageUtilization=4:int32?
HPAv2Status: observedGeneration=1:int64? lastScaleTime=2:Time? currentReplicas=3:int32 desiredReplicas=4:int32 currentMetrics=5:HPAv2MetricStatus[] conditions=6:HPAv2Condition[]
HPAv2MetricStatus: type=1:string object=2:HPAv2ObjectStatus? pods=3:HPAv2PodsStatus? resource=4:HPAv2ResourceStatus? containerResource=7:HPAv2ContainerResourceStatus? external=5:HPAv2ExternalStatus?
HPAv2ObjectStatus: metric=1:HPAv2MetricIdentifier current=2:HPAv2MetricValueStatus describedObject=3:HPAv2Reference
HPAv2PodsStatus: metric=1:HPAv2MetricIdentifier current=2:HPAv2MetricValueStatus
HPAv2ResourceStatus: name=1:string current=2:HPAv2MetricValueStatus
HPAv2ContainerResourceStatus: name=1:string current=2:HPAv2MetricValueStatus container=3:string
HPAv2ExternalStatus: metric=1:HPAv2MetricIdentifier current=2:HPAv2MetricValueStatus
HPAv2MetricValueStatus: value=1:Quantity? averageValue=2:Quantity? averageUtilization=3:int32?
HPAv2Condition: type=1:string status=2:string lastTransitionTime=3:Time reason=4:string message=5:string
""")
protobuf.register_kind("autoscaling/v1", "HorizontalPodAutoscaler", "HPAv1")
protobuf.register_kind("autoscaling/v2", "HorizontalPodAutoscaler", "HPAv2")
