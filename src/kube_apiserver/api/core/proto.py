"""Protobuf descriptions of the core/v1 kinds served here (field numbers of k8s.io/api core/v1
generated.proto; notation in apimachinery/protobuf.py). Pod and PodTemplate reach every message of
the PodSpec tree (volumes, containers, probes, security contexts, affinity...) and PodStatus;
PersistentVolume reuses the volume sources a Pod may also name;
ReplicationController reuses PodTemplateSpec; Scale is autoscaling/v1's, TokenRequest (serviceaccounts/token)
authentication.k8s.io/v1's."""

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
protobuf.define("""
Pod: metadata=1:ObjectMeta spec=2:PodSpec status=3:PodStatus
PodSpec: volumes=1:Volume[] initContainers=20:Container[] containers=2:Container[] ephemeralContainers=34:EphemeralContainer[] restartPolicy=3:string terminationGracePeriodSeconds=4:int64? activeDeadlineSeconds=5:int64? dnsPolicy=6:string nodeSelector=7:map<string> serviceAccountName=8:string serviceAccount=9:string automountServiceAccountToken=21:bool? nodeName=10:string hostNetwork=11:bool hostPID=12:bool hostIPC=13:bool shareProcessNamespace=27:bool? securityContext=14:PodSecurityContext? imagePullSecrets=15:LocalObjectReference[] hostname=16:string subdomain=17:string affinity=18:Affinity? schedulerName=19:string tolerations=22:Toleration[] hostAliases=23:HostAlias[] priorityClassName=24:string priority=25:int32? dnsConfig=26:PodDNSConfig? readinessGates=28:PodReadinessGate[] runtimeClassName=29:string? enableServiceLinks=30:bool? preemptionPolicy=31:string? overhead=32:map<Quantity> topologySpreadConstraints=33:TopologySpreadConstraint[] setHostnameAsFQDN=35:bool? os=36:PodOS? hostUsers=37:bool? schedulingGates=38:PodSchedulingGate[] resourceClaims=39:PodResourceClaim[] resources=40:ResourceRequirements? hostnameOverride=41:string?
Volume: name=1:string volumeSource=2:VolumeSource^
VolumeSource: hostPath=1:HostPathVolumeSource? emptyDir=2:EmptyDirVolumeSource? gcePersistentDisk=3:GCEPersistentDiskVolumeSource? awsElasticBlockStore=4:AWSElasticBlockStoreVolumeSource? gitRepo=5:GitRepoVolumeSource? secret=6:SecretVolumeSource? nfs=7:NFSVolumeSource? iscsi=8:ISCSIVolumeSource? glusterfs=9:GlusterfsVolumeSource? persistentVolumeClaim=10:PersistentVolumeClaimVolumeSource? rbd=11:RBDVolumeSource? flexVolume=12:FlexVolumeSource? cinder=13:CinderVolumeSource? cephfs=14:CephFSVolumeSource? flocker=15:FlockerVolumeSource? downwardAPI=16:DownwardAPIVolumeSource? fc=17:FCVolumeSource? azureFile=18:AzureFileVolumeSource? configMap=19:ConfigMapVolumeSource? vsphereVolume=20:VsphereVirtualDiskVolumeSource? quobyte=21:QuobyteVolumeSource? azureDisk=22:AzureDiskVolumeSource? photonPersistentDisk=23:PhotonPersistentDiskVolumeSource? projected=26:ProjectedVolumeSource? portworxVolume=24:PortworxVolumeSource? scaleIO=25:ScaleIOVolumeSource? storageos=27:StorageOSVolumeSource? csi=28:CSIVolumeSource? ephemeral=29:EphemeralVolumeSource? image=30:ImageVolumeSource?
HostPathVolumeSource: path=1:string type=2:string?
EmptyDirVolumeSource: medium=1:string sizeLimit=2:Quantity? mode=3:int32?
GCEPersistentDiskVolumeSource: pdName=1:string fsType=2:string partition=3:int32 readOnly=4:bool
AWSElasticBlockStoreVolumeSource: volumeID=1:string fsType=2:string partition=3:int32 readOnly=4:bool
GitRepoVolumeSource: repository=1:string revision=2:string directory=3:string
SecretVolumeSource: secretName=1:string items=2:KeyToPath[] defaultMode=3:int32? optional=4:bool? defaultUser=5:int64?
KeyToPath: key=1:string path=2:string mode=3:int32? user=4:int64?
NFSVolumeSource: server=1:string path=2:string readOnly=3:bool
ISCSIVolumeSource: targetPortal=1:string iqn=2:string lun=3:int32 iscsiInterface=4:string fsType=5:string readOnly=6:bool portals=7:string[] chapAuthDiscovery=8:bool chapAuthSession=11:bool secretRef=10:LocalObjectReference? initiatorName=12:string?
LocalObjectReference: name=1:string
GlusterfsVolumeSource: endpoints=1:string path=2:string readOnly=3:bool
PersistentVolumeClaimVolumeSource: claimName=1:string readOnly=2:bool
RBDVolumeSource: monitors=1:string[] image=2:string fsType=3:string pool=4:string user=5:string keyring=6:string secretRef=7:LocalObjectReference? readOnly=8:bool
FlexVolumeSource: driver=1:string fsType=2:string secretRef=3:LocalObjectReference? readOnly=4:bool options=5:map<string>
CinderVolumeSource: volumeID=1:string fsType=2:string readOnly=3:bool secretRef=4:LocalObjectReference?
CephFSVolumeSource: monitors=1:string[] path=2:string user=3:string secretFile=4:string secretRef=5:LocalObjectReference? readOnly=6:bool
FlockerVolumeSource: datasetName=1:string datasetUUID=2:string
DownwardAPIVolumeSource: items=1:DownwardAPIVolumeFile[] defaultMode=2:int32? defaultUser=3:int64?
DownwardAPIVolumeFile: path=1:string fieldRef=2:ObjectFieldSelector? resourceFieldRef=3:ResourceFieldSelector? mode=4:int32? user=5:int64?
ObjectFieldSelector: apiVersion=1:string fieldPath=2:string
ResourceFieldSelector: containerName=1:string resource=2:string divisor=3:Quantity
FCVolumeSource: targetWWNs=1:string[] lun=2:int32? fsType=3:string readOnly=4:bool wwids=5:string[]
AzureFileVolumeSource: secretName=1:string shareName=2:string readOnly=3:bool
ConfigMapVolumeSource: localObjectReference=1:LocalObjectReference^ items=2:KeyToPath[] defaultMode=3:int32? optional=4:bool? defaultUser=5:int64?
VsphereVirtualDiskVolumeSource: volumePath=1:string fsType=2:string storagePolicyName=3:string storagePolicyID=4:string
QuobyteVolumeSource: registry=1:string volume=2:string readOnly=3:bool user=4:string group=5:string tenant=6:string
AzureDiskVolumeSource: diskName=1:string diskURI=2:string cachingMode=3:string? fsType=4:string? readOnly=5:bool? kind=6:string?
PhotonPersistentDiskVolumeSource: pdID=1:string fsType=2:string
ProjectedVolumeSource: sources=1:VolumeProjection[] defaultMode=2:int32? defaultUser=3:int64?
VolumeProjection: secret=1:SecretProjection? downwardAPI=2:DownwardAPIProjection? configMap=3:ConfigMapProjection? serviceAccountToken=4:ServiceAccountTokenProjection? clusterTrustBundle=5:ClusterTrustBundleProjection? podCertificate=6:PodCertificateProjection?
SecretProjection: localObjectReference=1:LocalObjectReference^ items=2:KeyToPath[] optional=4:bool?
DownwardAPIProjection: items=1:DownwardAPIVolumeFile[]
ConfigMapProjection: localObjectReference=1:LocalObjectReference^ items=2:KeyToPath[] optional=4:bool?
ServiceAccountTokenProjection: audience=1:string expirationSeconds=2:int64? path=3:string user=4:int64?
ClusterTrustBundleProjection: name=1:string? signerName=2:string? labelSelector=3:LabelSelector? optional=5:bool? path=4:string user=6:int64?
PodCertificateProjection: signerName=1:string keyType=2:string maxExpirationSeconds=3:int32? credentialBundlePath=4:string keyPath=5:string certificateChainPath=6:string userAnnotations=7:map<string> user=8:int64?
PortworxVolumeSource: volumeID=1:string fsType=2:string readOnly=3:bool
ScaleIOVolumeSource: gateway=1:string system=2:string secretRef=3:LocalObjectReference? sslEnabled=4:bool protectionDomain=5:string storagePool=6:string storageMode=7:string volumeName=8:string fsType=9:string readOnly=10:bool
StorageOSVolumeSource: volumeName=1:string volumeNamespace=2:string fsType=3:string readOnly=4:bool secretRef=5:LocalObjectReference?
CSIVolumeSource: driver=1:string readOnly=2:bool? fsType=3:string? volumeAttributes=4:map<string> nodePublishSecretRef=5:LocalObjectReference?
EphemeralVolumeSource: volumeClaimTemplate=1:PersistentVolumeClaimTemplate?
PersistentVolumeClaimTemplate: metadata=1:ObjectMeta spec=2:PersistentVolumeClaimSpec
PersistentVolumeClaimSpec: accessModes=1:string[] selector=4:LabelSelector? resources=2:VolumeResourceRequirements volumeName=3:string storageClassName=5:string? volumeMode=6:string? dataSource=7:TypedLocalObjectReference? dataSourceRef=8:TypedObjectReference? volumeAttributesClassName=9:string?
VolumeResourceRequirements: limits=1:map<Quantity> requests=2:map<Quantity>
TypedLocalObjectReference: apiGroup=1:string? kind=2:string name=3:string
TypedObjectReference: apiGroup=1:string? kind=2:string name=3:string namespace=4:string?
ImageVolumeSource: reference=1:string pullPolicy=2:string
Container: name=1:string image=2:string command=3:string[] args=4:string[] workingDir=5:string ports=6:ContainerPort[] envFrom=19:EnvFromSource[] env=7:EnvVar[] resources=8:ResourceRequirements resizePolicy=23:ContainerResizePolicy[] restartPolicy=24:string? restartPolicyRules=25:ContainerRestartRule[] volumeMounts=9:VolumeMount[] volumeDevices=21:VolumeDevice[] livenessProbe=10:Probe? readinessProbe=11:Probe? startupProbe=22:Probe? lifecycle=12:Lifecycle? terminationMessagePath=13:string terminationMessagePolicy=20:string imagePullPolicy=14:string securityContext=15:SecurityContext? stdin=16:bool stdinOnce=17:bool tty=18:bool
ContainerPort: name=1:string hostPort=2:int32 containerPort=3:int32 protocol=4:string hostIP=5:string
EnvFromSource: prefix=1:string configMapRef=2:ConfigMapEnvSource? secretRef=3:SecretEnvSource?
ConfigMapEnvSource: localObjectReference=1:LocalObjectReference^ optional=2:bool?
SecretEnvSource: localObjectReference=1:LocalObjectReference^ optional=2:bool?
EnvVar: name=1:string value=2:string valueFrom=3:EnvVarSource?
EnvVarSource: fieldRef=1:ObjectFieldSelector? resourceFieldRef=2:ResourceFieldSelector? configMapKeyRef=3:ConfigMapKeySelector? secretKeyRef=4:SecretKeySelector? fileKeyRef=5:FileKeySelector?
ConfigMapKeySelector: localObjectReference=1:LocalObjectReference^ key=2:string optional=3:bool?
SecretKeySelector: localObjectReference=1:LocalObjectReference^ key=2:string optional=3:bool?
FileKeySelector: volumeName=1:string path=2:string key=3:string optional=4:bool?
ResourceRequirements: limits=1:map<Quantity> requests=2:map<Quantity> claims=3:ResourceClaim[]
ResourceClaim: name=1:string request=2:string
ContainerResizePolicy: resourceName=1:string restartPolicy=2:string
ContainerRestartRule: action=1:string exitCodes=2:ContainerRestartRuleOnExitCodes?
ContainerRestartRuleOnExitCodes: operator=1:string values=2:int32[]
VolumeMount: name=1:string readOnly=2:bool recursiveReadOnly=7:string? mountPath=3:string subPath=4:string mountPropagation=5:string? subPathExpr=6:string bindMountOptions=8:string[]
VolumeDevice: name=1:string devicePath=2:string
Probe: handler=1:ProbeHandler^ initialDelaySeconds=2:int32 timeoutSeconds=3:int32 periodSeconds=4:int32 successThreshold=5:int32 failureThreshold=6:int32 terminationGracePeriodSeconds=7:int64?
ProbeHandler: exec=1:ExecAction? httpGet=2:HTTPGetAction? tcpSocket=3:TCPSocketAction? grpc=4:GRPCAction?
ExecAction: command=1:string[]
HTTPGetAction: path=1:string port=2:IntOrString host=3:string scheme=4:string httpHeaders=5:HTTPHeader[] protocol=6:string?
HTTPHeader: name=1:string value=2:string
TCPSocketAction: port=1:IntOrString host=2:string
GRPCAction: port=1:int32 service=2:string? mode=3:string?
Lifecycle: postStart=1:LifecycleHandler? preStop=2:LifecycleHandler? stopSignal=3:string?
LifecycleHandler: exec=1:ExecAction? httpGet=2:HTTPGetAction? tcpSocket=3:TCPSocketAction? sleep=4:SleepAction?
SleepAction: seconds=1:int64
SecurityContext: capabilities=1:Capabilities? privileged=2:bool? seLinuxOptions=3:SELinuxOptions? windowsOptions=10:WindowsSecurityContextOptions? runAsUser=4:int64? runAsGroup=8:int64? runAsNonRoot=5:bool? readOnlyRootFilesystem=6:bool? allowPrivilegeEscalation=7:bool? procMount=9:string? seccompProfile=11:SeccompProfile? appArmorProfile=12:AppArmorProfile?
Capabilities: add=1:string[] drop=2:string[]
SELinuxOptions: user=1:string role=2:string type=3:string level=4:string
WindowsSecurityContextOptions: gmsaCredentialSpecName=1:string? gmsaCredentialSpec=2:string? runAsUserName=3:string? hostProcess=4:bool?
SeccompProfile: type=1:string localhostProfile=2:string?
AppArmorProfile: type=1:string localhostProfile=2:string?
EphemeralContainer: ephemeralContainerCommon=1:EphemeralContainerCommon^ targetContainerName=2:string
EphemeralContainerCommon: name=1:string image=2:string command=3:string[] args=4:string[] workingDir=5:string ports=6:ContainerPort[] envFrom=19:EnvFromSource[] env=7:EnvVar[] resources=8:ResourceRequirements resizePolicy=23:ContainerResizePolicy[] restartPolicy=24:string? restartPolicyRules=25:ContainerRestartRule[] volumeMounts=9:VolumeMount[] volumeDevices=21:VolumeDevice[] livenessProbe=10:Probe? readinessProbe=11:Probe? startupProbe=22:Probe? lifecycle=12:Lifecycle? terminationMessagePath=13:string terminationMessagePolicy=20:string imagePullPolicy=14:string securityContext=15:SecurityContext? stdin=16:bool stdinOnce=17:bool tty=18:bool
PodSecurityContext: seLinuxOptions=1:SELinuxOptions? windowsOptions=8:WindowsSecurityContextOptions? runAsUser=2:int64? runAsGroup=6:int64? runAsNonRoot=3:bool? supplementalGroups=4:int64[] supplementalGroupsPolicy=12:string? fsGroup=5:int64? sysctls=7:Sysctl[] fsGroupChangePolicy=9:string? seccompProfile=10:SeccompProfile? appArmorProfile=11:AppArmorProfile? seLinuxChangePolicy=13:string?
Sysctl: name=1:string value=2:string
Affinity: nodeAffinity=1:NodeAffinity? podAffinity=2:PodAffinity? podAntiAffinity=3:PodAntiAffinity?
NodeAffinity: requiredDuringSchedulingIgnoredDuringExecution=1:NodeSelector? preferredDuringSchedulingIgnoredDuringExecution=2:PreferredSchedulingTerm[]
NodeSelector: nodeSelectorTerms=1:NodeSelectorTerm[]
NodeSelectorTerm: matchExpressions=1:NodeSelectorRequirement[] matchFields=2:NodeSelectorRequirement[]
NodeSelectorRequirement: key=1:string operator=2:string values=3:string[]
PreferredSchedulingTerm: weight=1:int32 preference=2:NodeSelectorTerm
PodAffinity: requiredDuringSchedulingIgnoredDuringExecution=1:PodAffinityTerm[] preferredDuringSchedulingIgnoredDuringExecution=2:WeightedPodAffinityTerm[]
PodAffinityTerm: labelSelector=1:LabelSelector? namespaces=2:string[] topologyKey=3:string namespaceSelector=4:LabelSelector? matchLabelKeys=5:string[] mismatchLabelKeys=6:string[]
WeightedPodAffinityTerm: weight=1:int32 podAffinityTerm=2:PodAffinityTerm
PodAntiAffinity: requiredDuringSchedulingIgnoredDuringExecution=1:PodAffinityTerm[] preferredDuringSchedulingIgnoredDuringExecution=2:WeightedPodAffinityTerm[]
Toleration: key=1:string operator=2:string value=3:string effect=4:string tolerationSeconds=5:int64?
HostAlias: ip=1:string hostnames=2:string[]
PodDNSConfig: nameservers=1:string[] searches=2:string[] options=3:PodDNSConfigOption[]
PodDNSConfigOption: name=1:string value=2:string?
PodReadinessGate: conditionType=1:string
TopologySpreadConstraint: maxSkew=1:int32 topologyKey=2:string whenUnsatisfiable=3:string labelSelector=4:LabelSelector? minDomains=5:int32? nodeAffinityPolicy=6:string? nodeTaintsPolicy=7:string? matchLabelKeys=8:string[]
PodOS: name=1:string
PodSchedulingGate: name=1:string
PodResourceClaim: name=1:string resourceClaimName=3:string? resourceClaimTemplateName=4:string?
PodStatus: observedGeneration=17:int64 phase=1:string conditions=2:PodCondition[] message=3:string reason=4:string nominatedNodeName=11:string hostIP=5:string hostIPs=16:HostIP[] podIP=6:string podIPs=12:PodIP[] startTime=7:Time? initContainerStatuses=10:ContainerStatus[] containerStatuses=8:ContainerStatus[] qosClass=9:string ephemeralContainerStatuses=13:ContainerStatus[] resize=14:string resourceClaimStatuses=15:PodResourceClaimStatus[] extendedResourceClaimStatus=18:PodExtendedResourceClaimStatus? allocatedResources=19:map<Quantity> resources=20:ResourceRequirements?
PodCondition: type=1:string observedGeneration=7:int64 status=2:string lastProbeTime=3:Time lastTransitionTime=4:Time reason=5:string message=6:string
HostIP: ip=1:string
PodIP: ip=1:string
ContainerStatus: name=1:string state=2:ContainerState lastState=3:ContainerState ready=4:bool restartCount=5:int32 image=6:string imageID=7:string containerID=8:string started=9:bool? allocatedResources=10:map<Quantity> resources=11:ResourceRequirements? volumeMounts=12:VolumeMountStatus[] user=13:ContainerUser? allocatedResourcesStatus=14:ResourceStatus[] stopSignal=15:string?
ContainerState: waiting=1:ContainerStateWaiting? running=2:ContainerStateRunning? terminated=3:ContainerStateTerminated?
ContainerStateWaiting: reason=1:string message=2:string
ContainerStateRunning: startedAt=1:Time
ContainerStateTerminated: exitCode=1:int32 signal=2:int32 reason=3:string message=4:string startedAt=5:Time finishedAt=6:Time containerID=7:string
VolumeMountStatus: name=1:string mountPath=2:string readOnly=3:bool recursiveReadOnly=4:string? volumeStatus=5:VolumeStatus?
VolumeStatus: image=1:ImageVolumeStatus?
ImageVolumeStatus: imageRef=1:string
ContainerUser: linux=1:LinuxContainerUser?
LinuxContainerUser: uid=1:int64 gid=2:int64 supplementalGroups=3:int64[]
ResourceStatus: name=1:string resources=2:ResourceHealth[]
ResourceHealth: resourceID=1:string health=2:string message=6:string?
PodResourceClaimStatus: name=1:string resourceClaimName=2:string?
PodExtendedResourceClaimStatus: requestMappings=1:ContainerExtendedResourceRequest[] resourceClaimName=2:string
ContainerExtendedResourceRequest: containerName=1:string resourceName=2:string requestName=3:string
PodTemplate: metadata=1:ObjectMeta template=2:PodTemplateSpec
PodTemplateSpec: metadata=1:ObjectMeta spec=2:PodSpec
Binding: metadata=1:ObjectMeta target=2:ObjectReference
Eviction: metadata=1:ObjectMeta deleteOptions=2:DeleteOptions?
""")
protobuf.define("""
ServiceAccount: metadata=1:ObjectMeta secrets=2:ObjectReference[] imagePullSecrets=3:LocalObjectReference[] automountServiceAccountToken=4:bool?
AuthenticationTokenRequest: metadata=1:ObjectMeta spec=2:TokenRequestSpec status=3:TokenRequestStatus
TokenRequestSpec: audiences=1:string[] expirationSeconds=4:int64? boundObjectRef=3:BoundObjectReference?
TokenRequestStatus: token=1:string expirationTimestamp=2:Time
BoundObjectReference: kind=1:string apiVersion=2:string name=3:string uid=4:string
""")
protobuf.define("""
Service: metadata=1:ObjectMeta spec=2:ServiceSpec status=3:ServiceStatus
ServiceSpec: ports=1:ServicePort[] selector=2:map<string> clusterIP=3:string clusterIPs=18:string[] type=4:string externalIPs=5:string[] sessionAffinity=7:string loadBalancerIP=8:string loadBalancerSourceRanges=9:string[] externalName=10:string externalTrafficPolicy=11:string healthCheckNodePort=12:int32 publishNotReadyAddresses=13:bool sessionAffinityConfig=14:SessionAffinityConfig? ipFamilies=19:string[] ipFamilyPolicy=17:string? allocateLoadBalancerNodePorts=20:bool? loadBalancerClass=21:string? internalTrafficPolicy=22:string? trafficDistribution=23:string?
ServicePort: name=1:string protocol=2:string appProtocol=6:string? port=3:int32 targetPort=4:IntOrString nodePort=5:int32
SessionAffinityConfig: clientIP=1:ClientIPConfig?
ClientIPConfig: timeoutSeconds=1:int32?
ServiceStatus: loadBalancer=1:LoadBalancerStatus conditions=2:Condition[]
LoadBalancerStatus: ingress=1:LoadBalancerIngress[]
LoadBalancerIngress: ip=1:string hostname=2:string ipMode=3:string? ports=4:PortStatus[]
PortStatus: port=1:int32 protocol=2:string error=3:string?
Condition: type=1:string status=2:string observedGeneration=3:int64 lastTransitionTime=4:Time reason=5:string message=6:string
Endpoints: metadata=1:ObjectMeta subsets=2:EndpointSubset[]
EndpointSubset: addresses=1:EndpointAddress[] notReadyAddresses=2:EndpointAddress[] ports=3:EndpointPort[]
EndpointAddress: ip=1:string hostname=3:string nodeName=4:string? targetRef=2:ObjectReference?
EndpointPort: name=1:string port=2:int32 protocol=3:string appProtocol=4:string?
ReplicationController: metadata=1:ObjectMeta spec=2:ReplicationControllerSpec status=3:ReplicationControllerStatus
ReplicationControllerSpec: replicas=1:int32? minReadySeconds=4:int32 selector=2:map<string> template=3:PodTemplateSpec?
ReplicationControllerStatus: replicas=1:int32 fullyLabeledReplicas=2:int32 readyReplicas=4:int32 availableReplicas=5:int32 observedGeneration=3:int64 conditions=6:ReplicationControllerCondition[]
ReplicationControllerCondition: type=1:string status=2:string lastTransitionTime=3:Time reason=4:string message=5:string
Scale: metadata=1:ObjectMeta spec=2:ScaleSpec status=3:ScaleStatus
ScaleSpec: replicas=1:int32
ScaleStatus: replicas=1:int32? selector=2:string
ResourceQuota: metadata=1:ObjectMeta spec=2:ResourceQuotaSpec status=3:ResourceQuotaStatus
ResourceQuotaSpec: hard=1:map<Quantity> scopes=2:string[] scopeSelector=3:ScopeSelector?
ScopeSelector: matchExpressions=1:ScopedResourceSelectorRequirement[]
ScopedResourceSelectorRequirement: scopeName=1:string operator=2:string values=3:string[]
ResourceQuotaStatus: hard=1:map<Quantity> used=2:map<Quantity>
LimitRange: metadata=1:ObjectMeta spec=2:LimitRangeSpec
LimitRangeSpec: limits=1:LimitRangeItem[]
LimitRangeItem: type=1:string max=2:map<Quantity> min=3:map<Quantity> default=4:map<Quantity> defaultRequest=5:map<Quantity> maxLimitRequestRatio=6:map<Quantity>
""")
protobuf.define("""
Node: metadata=1:ObjectMeta spec=2:NodeSpec status=3:NodeStatus
NodeSpec: podCIDR=1:string podCIDRs=7:string[] providerID=3:string unschedulable=4:bool taints=5:Taint[] configSource=6:NodeConfigSource? externalID=2:string
Taint: key=1:string value=2:string effect=3:string timeAdded=4:Time?
NodeConfigSource: configMap=2:ConfigMapNodeConfigSource?
ConfigMapNodeConfigSource: namespace=1:string name=2:string uid=3:string resourceVersion=4:string kubeletConfigKey=5:string
NodeStatus: capacity=1:map<Quantity> allocatable=2:map<Quantity> phase=3:string conditions=4:NodeCondition[] addresses=5:NodeAddress[] daemonEndpoints=6:NodeDaemonEndpoints nodeInfo=7:NodeSystemInfo images=8:ContainerImage[] volumesInUse=9:string[] volumesAttached=10:AttachedVolume[] config=11:NodeConfigStatus? runtimeHandlers=12:NodeRuntimeHandler[] features=13:NodeFeatures?
NodeCondition: type=1:string status=2:string lastHeartbeatTime=3:Time lastTransitionTime=4:Time reason=5:string message=6:string
NodeAddress: type=1:string address=2:string
NodeDaemonEndpoints: kubeletEndpoint=1:DaemonEndpoint
DaemonEndpoint: Port=1:int32
NodeSystemInfo: machineID=1:string systemUUID=2:string bootID=3:string kernelVersion=4:string osImage=5:string containerRuntimeVersion=6:string kubeletVersion=7:string kubeProxyVersion=8:string operatingSystem=9:string architecture=10:string swap=11:NodeSwapStatus?
NodeSwapStatus: capacity=1:int64?
ContainerImage: names=1:string[] sizeBytes=2:int64
AttachedVolume: name=1:string devicePath=2:string
NodeConfigStatus: assigned=1:NodeConfigSource? active=2:NodeConfigSource? lastKnownGood=3:NodeConfigSource? error=4:string
NodeRuntimeHandler: name=1:string features=2:NodeRuntimeHandlerFeatures?
NodeRuntimeHandlerFeatures: recursiveReadOnlyMounts=1:bool? userNamespaces=2:bool?
NodeFeatures: supplementalGroupsPolicy=1:bool?
PersistentVolume: metadata=1:ObjectMeta spec=2:PersistentVolumeSpec status=3:PersistentVolumeStatus
PersistentVolumeSpec: capacity=1:map<Quantity> persistentVolumeSource=2:PersistentVolumeSource^ accessModes=3:string[] claimRef=4:ObjectReference? persistentVolumeReclaimPolicy=5:string storageClassName=6:string mountOptions=7:string[] volumeMode=8:string? nodeAffinity=9:VolumeNodeAffinity? volumeAttributesClassName=10:string?
PersistentVolumeSource: gcePersistentDisk=1:GCEPersistentDiskVolumeSource? awsElasticBlockStore=2:AWSElasticBlockStoreVolumeSource? hostPath=3:HostPathVolumeSource? glusterfs=4:GlusterfsPersistentVolumeSource? nfs=5:NFSVolumeSource? rbd=6:RBDPersistentVolumeSource? iscsi=7:ISCSIPersistentVolumeSource? cinder=8:CinderPersistentVolumeSource? cephfs=9:CephFSPersistentVolumeSource? fc=10:FCVolumeSource? flocker=11:FlockerVolumeSource? flexVolume=12:FlexPersistentVolumeSource? azureFile=13:AzureFilePersistentVolumeSource? vsphereVolume=14:VsphereVirtualDiskVolumeSource? quobyte=15:QuobyteVolumeSource? azureDisk=16:AzureDiskVolumeSource? photonPersistentDisk=17:PhotonPersistentDiskVolumeSource? portworxVolume=18:PortworxVolumeSource? scaleIO=19:ScaleIOPersistentVolumeSource? local=20:LocalVolumeSource? storageos=21:StorageOSPersistentVolumeSource? csi=22:CSIPersistentVolumeSource?
GlusterfsPersistentVolumeSource: endpoints=1:string path=2:string readOnly=3:bool endpointsNamespace=4:string?
RBDPersistentVolumeSource: monitors=1:string[] image=2:string fsType=3:string pool=4:string user=5:string keyring=6:string secretRef=7:SecretReference? readOnly=8:bool
ISCSIPersistentVolumeSource: targetPortal=1:string iqn=2:string lun=3:int32 iscsiInterface=4:string fsType=5:string readOnly=6:bool portals=7:string[] chapAuthDiscovery=8:bool chapAuthSession=11:bool secretRef=10:SecretReference? initiatorName=12:string?
CinderPersistentVolumeSource: volumeID=1:string fsType=2:string readOnly=3:bool secretRef=4:SecretReference?
CephFSPersistentVolumeSource: monitors=1:string[] path=2:string user=3:string secretFile=4:string secretRef=5:SecretReference? readOnly=6:bool
FlexPersistentVolumeSource: driver=1:string fsType=2:string secretRef=3:SecretReference? readOnly=4:bool options=5:map<string>
AzureFilePersistentVolumeSource: secretName=1:string shareName=2:string readOnly=3:bool secretNamespace=4:string?
ScaleIOPersistentVolumeSource: gateway=1:string system=2:string secretRef=3:SecretReference? sslEnabled=4:bool protectionDomain=5:string storagePool=6:string storageMode=7:string volumeName=8:string fsType=9:string readOnly=10:bool
LocalVolumeSource: path=1:string fsType=2:string?
StorageOSPersistentVolumeSource: volumeName=1:string volumeNamespace=2:string fsType=3:string readOnly=4:bool secretRef=5:ObjectReference?
CSIPersistentVolumeSource: driver=1:string volumeHandle=2:string readOnly=3:bool fsType=4:string volumeAttributes=5:map<string> controllerPublishSecretRef=6:SecretReference? nodeStageSecretRef=7:SecretReference? nodePublishSecretRef=8:SecretReference? controllerExpandSecretRef=9:SecretReference? nodeExpandSecretRef=10:SecretReference?
SecretReference: name=1:string namespace=2:string
VolumeNodeAffinity: required=1:NodeSelector?
PersistentVolumeStatus: phase=1:string message=2:string reason=3:string lastPhaseTransitionTime=4:Time?
PersistentVolumeClaim: metadata=1:ObjectMeta spec=2:PersistentVolumeClaimSpec status=3:PersistentVolumeClaimStatus
PersistentVolumeClaimStatus: phase=1:string accessModes=2:string[] capacity=3:map<Quantity> conditions=4:PersistentVolumeClaimCondition[] allocatedResources=5:map<Quantity> allocatedResourceStatuses=7:map<string> currentVolumeAttributesClassName=8:string? modifyVolumeStatus=9:ModifyVolumeStatus?
PersistentVolumeClaimCondition: type=1:string status=2:string lastProbeTime=3:Time lastTransitionTime=4:Time reason=5:string message=6:string
ModifyVolumeStatus: targetVolumeAttributesClassName=1:string status=2:string
ComponentStatus: metadata=1:ObjectMeta conditions=2:ComponentCondition[]
ComponentCondition: type=1:string status=2:string message=3:string error=4:string
""")
for _kind in ("Node", "PersistentVolume", "PersistentVolumeClaim", "ComponentStatus"):
    protobuf.register_kind("v1", _kind)
protobuf.register_kind("policy/v1", "Eviction")
protobuf.register_kind("autoscaling/v1", "Scale")
# storage.k8s.io's CSIDriver has a TokenRequest message of its own
protobuf.register_kind("authentication.k8s.io/v1", "TokenRequest", "AuthenticationTokenRequest")
for _kind in ("ConfigMap", "Secret", "Namespace", "Event", "Pod", "PodTemplate", "Binding", "Service", "Endpoints",
              "ReplicationController", "ServiceAccount", "ResourceQuota", "LimitRange"):
    protobuf.register_kind("v1", _kind)
