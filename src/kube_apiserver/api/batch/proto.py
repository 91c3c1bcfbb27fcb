"""batch/v1 messages (k8s.io/api/batch/v1/generated.proto, v1.34) in the notation of
apimachinery/protobuf.py: what kubectl and client-go send for Jobs and CronJobs."""

from __future__ import annotations

from ...apimachinery import protobuf
from ..core import proto as _core_proto  # noqa: F401 - PodTemplateSpec and ObjectReference

protobuf.define("""
Job: metadata=1:ObjectMeta spec=2:JobSpec status=3:JobStatus
JobSpec: parallelism=1:int32? completions=2:int32? activeDeadlineSeconds=3:int64? podFailurePolicy=11:PodFailurePolicy? successPolicy=16:SuccessPolicy? backoffLimit=7:int32? backoffLimitPerIndex=12:int32? maxFailedIndexes=13:int32? selector=4:LabelSelector? manualSelector=5:bool? template=6:PodTemplateSpec ttlSecondsAfterFinished=8:int32? completionMode=9:string? suspend=10:bool? podReplacementPolicy=14:string? managedBy=15:string?
JobStatus: conditions=1:JobCondition[] startTime=2:Time? completionTime=3:Time? active=4:int32 succeeded=5:int32 failed=6:int32 terminating=11:int32? completedIndexes=7:string failedIndexes=10:string? uncountedTerminatedPods=8:UncountedTerminatedPods? ready=9:int32?
JobCondition: type=1:string status=2:string lastProbeTime=3:Time lastTransitionTime=4:Time reason=5:string message=6:string
JobTemplateSpec: metadata=1:ObjectMeta spec=2:JobSpec
PodFailurePolicy: rules=1:PodFailurePolicyRule[]
PodFailurePolicyRule: action=1:string onExitCodes=2:PodFailurePolicyOnExitCodesRequirement? onPodConditions=3:PodFailurePolicyOnPodConditionsPattern[]
PodFailurePolicyOnExitCodesRequirement: containerName=1:string? operator=2:string values=3:int32[]
PodFailurePolicyOnPodConditionsPattern: type=1:string status=2:string
SuccessPolicy: rules=1:SuccessPolicyRule[]
SuccessPolicyRule: succeededIndexes=1:string? succeededCount=2:int32?
UncountedTerminatedPods: succeeded=1:string[] failed=2:string[]
CronJob: metadata=1:ObjectMeta spec=2:CronJobSpec status=3:CronJobStatus
CronJobSpec: schedule=1:string timeZone=8:string? startingDeadlineSeconds=2:int64? concurrencyPolicy=3:string suspend=4:bool? jobTemplate=5:JobTemplateSpec successfulJobsHistoryLimit=6:int32? failedJobsHistoryLimit=7:int32?
CronJobStatus: active=1:ObjectReference[] lastScheduleTime=4:Time? lastSuccessfulTime=5:Time?
""")
for _kind in ("Job", "CronJob"):
    protobuf.register_kind("batch/v1", _kind)
