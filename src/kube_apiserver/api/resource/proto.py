"""The resource.k8s.io/v1 protobuf messages (k8s.io/api resource/v1 generated.proto, v1.34), in the
notation of apimachinery/protobuf.py. NodeSelector and Condition come with the core group."""

from __future__ import annotations

from ...apimachinery import protobuf

GROUP_VERSION = "resource.k8s.io/v1"
KINDS = ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice")

protobuf.define("""
DeviceClass: metadata=1:ObjectMeta spec=2:DeviceClassSpec
DeviceClassSpec: selectors=1:DeviceSelector[] config=2:DeviceClassConfiguration[] extendedResourceName=4:string?
DeviceClassConfiguration: deviceConfiguration=1:DeviceConfiguration^
DeviceSelector: cel=1:CELDeviceSelector?
CELDeviceSelector: expression=1:string
DeviceConfiguration: opaque=1:OpaqueDeviceConfiguration?
OpaqueDeviceConfiguration: driver=1:string parameters=2:RawExtension
ResourceClaim: metadata=1:ObjectMeta spec=2:ResourceClaimSpec status=3:ResourceClaimStatus
ResourceClaimSpec: devices=1:DeviceClaim
DeviceClaim: requests=1:DeviceRequest[] constraints=2:DeviceConstraint[] config=3:DeviceClaimConfiguration[]
DeviceRequest: name=1:string exactly=2:ExactDeviceRequest? firstAvailable=3:DeviceSubRequest[]
ExactDeviceRequest: deviceClassName=1:string selectors=2:DeviceSelector[] allocationMode=3:string count=4:int64 adminAccess=5:bool? tolerations=6:DeviceToleration[] capacity=7:CapacityRequirements?
DeviceSubRequest: name=1:string deviceClassName=2:string selectors=3:DeviceSelector[] allocationMode=4:string count=5:int64 tolerations=6:DeviceToleration[] capacity=7:CapacityRequirements?
CapacityRequirements: requests=1:map<Quantity>
DeviceToleration: key=1:string operator=2:string value=3:string effect=4:string tolerationSeconds=5:int64?
DeviceConstraint: requests=1:string[] matchAttribute=2:string? distinctAttribute=3:string?
DeviceClaimConfiguration: requests=1:string[] deviceConfiguration=2:DeviceConfiguration^
ResourceClaimStatus: allocation=1:AllocationResult? reservedFor=2:ResourceClaimConsumerReference[] devices=4:AllocatedDeviceStatus[]
AllocationResult: devices=1:DeviceAllocationResult nodeSelector=3:NodeSelector? allocationTimestamp=5:Time?
DeviceAllocationResult: results=1:DeviceRequestAllocationResult[] config=2:DeviceAllocationConfiguration[]
DeviceRequestAllocationResult: request=1:string driver=2:string pool=3:string device=4:string adminAccess=5:bool? tolerations=6:DeviceToleration[] bindingConditions=7:string[] bindingFailureConditions=8:string[] shareID=9:string? consumedCapacity=10:map<Quantity>
DeviceAllocationConfiguration: source=1:string requests=2:string[] deviceConfiguration=3:DeviceConfiguration^
ResourceClaimConsumerReference: apiGroup=1:string resource=3:string name=4:string uid=5:string
AllocatedDeviceStatus: driver=1:string pool=2:string device=3:string shareID=7:string? conditions=4:Condition[] data=5:RawExtension? networkData=6:NetworkDeviceData?
NetworkDeviceData: interfaceName=1:string ips=2:string[] hardwareAddress=3:string
ResourceClaimTemplate: metadata=1:ObjectMeta spec=2:ResourceClaimTemplateSpec
ResourceClaimTemplateSpec: metadata=1:ObjectMeta spec=2:ResourceClaimSpec
ResourceSlice: metadata=1:ObjectMeta spec=2:ResourceSliceSpec
ResourceSliceSpec: driver=1:string pool=2:ResourcePool nodeName=3:string? nodeSelector=4:NodeSelector? allNodes=5:bool? devices=6:Device[] perDeviceNodeSelection=7:bool? sharedCounters=8:CounterSet[]
ResourcePool: name=1:string generation=2:int64 resourceSliceCount=3:int64
CounterSet: name=1:string counters=2:map<Counter>
Counter: value=1:Quantity
Device: name=1:string attributes=2:map<DeviceAttribute> capacity=3:map<DeviceCapacity> consumesCounters=4:DeviceCounterConsumption[] nodeName=5:string? nodeSelector=6:NodeSelector? allNodes=7:bool? taints=8:DeviceTaint[] bindsToNode=9:bool? bindingConditions=10:string[] bindingFailureConditions=11:string[] allowMultipleAllocations=12:bool?
DeviceAttribute: int=2:int64? bool=3:bool? string=4:string? version=5:string?
DeviceCapacity: value=1:Quantity requestPolicy=2:CapacityRequestPolicy?
CapacityRequestPolicy: default=1:Quantity? validValues=3:Quantity[] validRange=4:CapacityRequestPolicyRange?
CapacityRequestPolicyRange: min=1:Quantity? max=2:Quantity? step=3:Quantity?
DeviceCounterConsumption: counterSet=1:string counters=2:map<Counter>
DeviceTaint: key=1:string value=2:string effect=3:string timeAdded=4:Time?
Condition: type=1:string status=2:string observedGeneration=3:int64 lastTransitionTime=4:Time reason=5:string message=6:string
""")
for _kind in KINDS:
    protobuf.register_kind(GROUP_VERSION, _kind)
