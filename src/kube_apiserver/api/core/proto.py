"""Protobuf descriptions of the core/v1 kinds served here (field numbers of k8s.io/api core/v1
generated.proto; notation in apimachinery/protobuf.py)."""

from ...apimachinery import protobuf

protobuf.define("""
ConfigMap: metadata=1:ObjectMeta immutable=4:bool? data=2:map<string> binaryData=3:map<bytes>
Secret: metadata=1:ObjectMeta immutable=5:bool? data=2:map<bytes> stringData=4:map<string> type=3:string
Namespace: metadata=1:ObjectMeta spec=2:NamespaceSpec status=3:NamespaceStatus
NamespaceSpec: finalizers=1:string[]
NamespaceStatus: phase=1:string conditions=2:NamespaceCondition[]
NamespaceCondition: type=1:string status=2:string lastTransitionTime=4:Time reason=5:string message=6:string
Event: metadata=1:ObjectMeta involvedObject=2:ObjectReference reason=3:string message=4:string source=5:EventSource firstTimestamp=6:Time lastTimestamp=7:Time count=8:int32 type=9:string eventTime=10:MicroTime series=11:EventSeries? action=12:string related=13:ObjectReference? reportingComponent=14:string reportingInstance=15:string
EventSeries: count=1:int32 lastObservedTime=2:MicroTime
EventSource: component=1:string host=2:string
ObjectReference: kind=1:string namespace=2:string name=3:string uid=4:string apiVersion=5:string resourceVersion=6:string fieldPath=7:string
""")
for _kind in ("ConfigMap", "Secret", "Namespace", "Event"):
    protobuf.register_kind("v1", _kind)
