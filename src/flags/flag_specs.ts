// deno-fmt-ignore-file
/**
 * The kubelet's command line as data: every upstream v1.34 Linux flag (as
 * registered by `KubeletFlags.AddFlags`, `AddKubeletConfigFlags` and
 * `AddGlobalFlags` in cmd/kubelet/app/options) plus our own `--dry-run`. Help
 * texts are our own words. `def` is the default `--help` prints in flags-only
 * mode; for config-backed flags the real default comes from the flags-mode
 * config and a test keeps the two in step.
 * @module
 */
import type { ValueKind } from "./values.ts";

/** Which object a flag writes. */
export type FlagGroup = "cli" | "config" | "global";

/** One row of the flag table. */
export interface FlagSpec {
  name: string;
  /** The value kind; `version` and `help` are handled by the command. */
  kind: ValueKind | "version";
  group: FlagGroup;
  /** cli: KubeletFlags key; config: v1beta1 JSON path; global: flag name. */
  field: string;
  /** pflag DefValue in flags-only mode. */
  def: string;
  usage: string;
  shorthand?: string;
  deprecated?: string;
  /** Not an upstream flag (ours). */
  extension?: true;
}

/** Deprecation text of config-backed flags. */
export const CONFIG_FLAG_DEPRECATION =
  "This parameter should be set via the config file specified by the Kubelet's --config flag. See https://kubernetes.io/docs/tasks/administer-cluster/kubelet-config-file/ for more information.";

/** Deprecation text of the cAdvisor flags. */
export const CADVISOR_FLAG_DEPRECATION =
  "This is a cadvisor flag that was mistakenly registered with the Kubelet. Due to legacy concerns, it will follow the standard CLI deprecation timeline before being removed.";

const GC_DEPRECATION =
  "Use --eviction-hard or --eviction-soft instead. Will be removed in a future version.";

/** Config-backed flags that upstream leaves undeprecated. */
export const UNDEPRECATED_CONFIG_FLAGS: ReadonlySet<string> = new Set([
  "v",
  "vmodule",
  "log-flush-frequency",
  "provider-id",
  "fail-cgroupv1",
]);

type Row = [
  name: string,
  kind: ValueKind | "version",
  field: string,
  def: string,
  usage: string,
];

function rows(
  group: FlagGroup,
  list: Row[],
  extra: Partial<FlagSpec> = {},
): FlagSpec[] {
  return list.map(([name, kind, field, def, usage]) => {
    const spec: FlagSpec = { name, kind, group, field, def, usage, ...extra };
    if (group === "config" && !UNDEPRECATED_CONFIG_FLAGS.has(name)) {
      spec.deprecated = CONFIG_FLAG_DEPRECATION;
    }
    return spec;
  });
}

const CLI_FLAGS: FlagSpec[] = [
  ...rows("cli", [
    ["runtime-cgroups", "string", "runtimeCgroups", "", "Cgroup in which to create and run the container runtime."],
  ]),
  ...rows("cli", [
    ["pod-infra-container-image", "string", "podInfraContainerImage", "", "Specified image will not be pruned by the image garbage collector. CRI implementations have their own configuration to set this image."],
  ], {
    deprecated:
      "will be removed in 1.35. Image garbage collector will get sandbox image information from CRI.",
  }),
  ...rows("cli", [
    ["image-credential-provider-config", "string", "imageCredentialProviderConfig", "", "Path of a CredentialProviderConfig file, or of a directory whose .json, .yaml and .yml files are merged in name order, that configures the image credential plugins."],
    ["image-credential-provider-bin-dir", "string", "imageCredentialProviderBinDir", "", "Directory that holds the image credential plugin executables."],
    ["config", "string", "config", "", "Path of a KubeletConfiguration file. Values in it override the built-in defaults, and command-line flags override the file. Without it, built-in defaults and flags decide everything."],
    ["config-dir", "string", "configDir", "", "Directory of *.conf KubeletConfiguration drop-in files, merged in name order on top of --config (later files win); command-line flags still win over them. Empty (the default) disables drop-ins."],
    ["kubeconfig", "string", "kubeconfig", "", "Path of the kubeconfig that tells the kubelet how to reach the API server. When empty the kubelet runs standalone with no API server."],
    ["bootstrap-kubeconfig", "string", "bootstrapKubeconfig", "", "Path of a kubeconfig used only to obtain a client certificate when --kubeconfig does not exist yet; the resulting kubeconfig is written to the --kubeconfig path and its key and certificate to --cert-dir."],
    ["hostname-override", "string", "hostnameOverride", "", "Use this string as the node name instead of the machine's hostname."],
    ["node-ip", "string", "nodeIP", "", "Node IP address(es): one address, or a comma-separated IPv4 and IPv6 pair for dual-stack. '::' prefers the default IPv6 address, '0.0.0.0' the default IPv4 address."],
    ["cert-dir", "string", "certDir", "/var/lib/kubelet/pki", "Directory for TLS certificates and keys. Not used for the serving pair when --tls-cert-file and --tls-private-key-file are given."],
    ["cloud-provider", "string", "cloudProvider", "", "Cloud provider mode: empty for none, or 'external' when an external cloud controller manager initializes the node."],
    ["root-dir", "string", "rootDir", "/var/lib/kubelet", "Directory for the kubelet's own files such as volume mounts and plugin state."],
    ["seccomp-default", "bool", "seccompDefault", "false", "Run every workload with the `RuntimeDefault` seccomp profile unless the pod asks for another one."],
    ["node-labels", "configurationMap", "nodeLabels", "", "<Warning: Alpha feature> Labels to put on the Node object when it is registered, as key=value pairs separated by commas. Labels in the 'kubernetes.io' namespace need an allowed prefix (kubelet.kubernetes.io, node.kubernetes.io) or must be one of the well-known labels (beta.kubernetes.io/arch, beta.kubernetes.io/instance-type, beta.kubernetes.io/os, failure-domain.beta.kubernetes.io/region, failure-domain.beta.kubernetes.io/zone, kubernetes.io/arch, kubernetes.io/hostname, kubernetes.io/os, node.kubernetes.io/instance-type, topology.kubernetes.io/region, topology.kubernetes.io/zone)"],
    ["lock-file", "string", "lockFile", "", "<Warning: Alpha feature> Path of a file the kubelet locks while it runs."],
    ["exit-on-lock-contention", "bool", "exitOnLockContention", "false", "Exit as soon as another process contends for the --lock-file."],
  ]),
  ...rows("cli", [
    ["minimum-container-ttl-duration", "duration", "minimumContainerTTLDuration", "0s", "How long a finished container is kept before garbage collection, e.g. '300ms', '10s' or '2h45m'."],
    ["maximum-dead-containers-per-container", "int32", "maxPerPodContainerCount", "1", "How many old instances of each container to keep."],
    ["maximum-dead-containers", "int32", "maxContainerCount", "-1", "How many old containers to keep in total on the node; a negative value means no limit."],
  ], { deprecated: GC_DEPRECATION }),
  ...rows("cli", [
    ["experimental-mounter-path", "string", "experimentalMounterPath", "", "Path of a mount binary to use instead of the system one. Leave empty for the default mount."],
  ], {
    deprecated: "will be removed in 1.25 or later. in favor of using CSI.",
  }),
  ...rows("cli", [
    ["experimental-allocatable-ignore-eviction", "bool", "experimentalAllocatableIgnoreEviction", "false", "Leave hard eviction thresholds out when computing node allocatable."],
  ], { deprecated: "will be removed in 1.25 or later." }),
  ...rows("cli", [
    ["dry-run", "bool", "dryRun", "false", "(kubelet.ts only) Resolve defaults, --config, --config-dir and flags, validate the result, print the effective KubeletConfiguration as YAML on stdout and exit without starting the kubelet. Exit status 1 and every problem on stderr when the configuration is invalid."],
  ], { extension: true }),
];

const CONFIG_FLAGS: FlagSpec[] = rows("config", [
  ["enable-server", "bool", "enableServer", "true", "Serve the kubelet's HTTPS API."],
  ["fail-swap-on", "bool", "failSwapOn", "true", "Refuse to start when swap is enabled on the node."],
  ["pod-manifest-path", "string", "staticPodPath", "", "File or directory of static pod manifests to run. Dot files are ignored."],
  ["sync-frequency", "duration", "syncFrequency", "1m0s", "Longest time between two syncs of running containers with their desired state."],
  ["file-check-frequency", "duration", "fileCheckFrequency", "20s", "How often to re-read the static pod manifests."],
  ["http-check-frequency", "duration", "httpCheckFrequency", "20s", "How often to fetch the static pod manifest URL."],
  ["manifest-url", "string", "staticPodURL", "", "URL to fetch static pod manifests from."],
  ["manifest-url-header", "colonMultimap", "staticPodURLHeader", "", "HTTP headers sent with every --manifest-url request, as 'key:value' pairs separated by commas; repeat a key to send several values, e.g. --manifest-url-header 'a:hello,b:again,c:world' --manifest-url-header 'b:beautiful'"],
  ["address", "ip", "address", "0.0.0.0", "IP address to serve the kubelet API on ('0.0.0.0' for all IPv4 interfaces, '::' for all IPv6 interfaces)."],
  ["port", "int32", "port", "10250", "Port of the kubelet API."],
  ["read-only-port", "int32", "readOnlyPort", "10255", "Port of the unauthenticated read-only API; 0 turns it off."],
  ["fail-cgroupv1", "bool", "failCgroupV1", "false", "Refuse to start on a host that uses cgroup v1."],
  ["container-runtime-endpoint", "string", "containerRuntimeEndpoint", "unix:///run/containerd/containerd.sock", "CRI endpoint of the container runtime: a unix socket on Linux, a named pipe or TCP address on Windows, e.g. 'unix:///path/to/runtime.sock'."],
  ["image-service-endpoint", "string", "imageServiceEndpoint", "", "CRI endpoint of the image service, when it differs from --container-runtime-endpoint."],
  ["anonymous-auth", "bool", "authentication.anonymous.enabled", "true", "Let requests that no authenticator accepts through as user 'system:anonymous' in group 'system:unauthenticated'."],
  ["authentication-token-webhook", "bool", "authentication.webhook.enabled", "false", "Check bearer tokens with the API server's TokenReview API."],
  ["authentication-token-webhook-cache-ttl", "duration", "authentication.webhook.cacheTTL", "2m0s", "How long token review answers are cached."],
  ["client-ca-file", "string", "authentication.x509.clientCAFile", "", "Accept client certificates signed by a CA in this bundle; the certificate's common name becomes the user name."],
  ["authorization-mode", "string", "authorization.mode", "AlwaysAllow", "How API requests are authorized: AlwaysAllow or Webhook (which asks the API server through SubjectAccessReview)."],
  ["authorization-webhook-cache-authorized-ttl", "duration", "authorization.webhook.cacheAuthorizedTTL", "5m0s", "How long an 'allowed' answer from the authorization webhook is cached."],
  ["authorization-webhook-cache-unauthorized-ttl", "duration", "authorization.webhook.cacheUnauthorizedTTL", "30s", "How long a 'denied' answer from the authorization webhook is cached."],
  ["tls-cert-file", "string", "tlsCertFile", "", "Serving certificate (with any intermediates after it) for HTTPS. Without this and --tls-private-key-file, a self-signed pair is created in --cert-dir."],
  ["tls-private-key-file", "string", "tlsPrivateKeyFile", "", "Private key matching --tls-cert-file."],
  ["rotate-server-certificates", "bool", "serverTLSBootstrap", "false", "Obtain the serving certificate from the API server (certificate signing requests) and renew it before it expires. Needs the RotateKubeletServerCertificate feature gate and an approver for the requests."],
  ["tls-cipher-suites", "stringSlice", "tlsCipherSuites", "[]", "Comma-separated TLS cipher suites for the server; empty uses Go's default list. Accepted names: the Go crypto/tls suite names, such as TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256."],
  ["tls-min-version", "string", "tlsMinVersion", "", "Lowest TLS version accepted: VersionTLS10, VersionTLS11, VersionTLS12 or VersionTLS13."],
  ["rotate-certificates", "bool", "rotateCertificates", "false", "Renew the client certificate through the API server when it nears expiry."],
  ["registry-qps", "int32", "registryPullQPS", "5", "Image pulls allowed per second when positive; 0 means no limit."],
  ["registry-burst", "int32", "registryBurst", "10", "Image pulls allowed in a burst, up to this count, while staying within --registry-qps. Used only when --registry-qps > 0."],
  ["event-qps", "int32", "eventRecordQPS", "50", "Events created per second when positive; 0 means no limit."],
  ["event-burst", "int32", "eventBurst", "100", "Events allowed in a burst while staying within --event-qps. Used only when --event-qps > 0."],
  ["enable-debugging-handlers", "bool", "enableDebuggingHandlers", "true", "Serve the log and exec/attach/port-forward endpoints."],
  ["contention-profiling", "bool", "enableContentionProfiling", "false", "Turn on block profiling when profiling is on."],
  ["healthz-port", "int32", "healthzPort", "10248", "Port of the local healthz endpoint; 0 turns it off."],
  ["healthz-bind-address", "ip", "healthzBindAddress", "127.0.0.1", "IP address the healthz server listens on ('0.0.0.0' or '::' for all interfaces)."],
  ["oom-score-adj", "int32", "oomScoreAdj", "-999", "OOM score adjustment of the kubelet process, between -1000 and 1000."],
  ["cluster-domain", "string", "clusterDomain", "", "Cluster DNS domain. Containers search it in addition to the host's search domains."],
  ["volume-plugin-dir", "string", "volumePluginDir", "/usr/libexec/kubernetes/kubelet-plugins/volume/exec/", "Directory searched for third-party (flexvolume) volume plugins."],
  ["cluster-dns", "stringSlice", "clusterDNS", "[]", "Comma-separated DNS server IPs given to containers that use the cluster DNS policy. Every listed server must serve the same records, or name resolution becomes unpredictable."],
  ["streaming-connection-idle-timeout", "duration", "streamingConnectionIdleTimeout", "4h0m0s", "Idle time after which a streaming connection is closed. No longer has any effect."],
  ["node-status-update-frequency", "duration", "nodeStatusUpdateFrequency", "10s", "How often the node status is computed and, with a lease, how often it is reported to the API server when it changed. Keep it in step with the controller manager's node monitor grace period."],
  ["minimum-image-ttl-duration", "duration", "imageMinimumGCAge", "2m0s", "Youngest age at which an unused image may be garbage collected, e.g. '300ms', '10s' or '2h45m'."],
  ["image-gc-high-threshold", "int32", "imageGCHighThresholdPercent", "85", "Disk usage percentage that always triggers image garbage collection; 0-100, and 100 turns it off."],
  ["image-gc-low-threshold", "int32", "imageGCLowThresholdPercent", "80", "Disk usage percentage below which image garbage collection never runs and down to which it frees; 0-100, not above --image-gc-high-threshold."],
  ["volume-stats-agg-period", "duration", "volumeStatsAggPeriod", "1m0s", "How often disk usage of all pod volumes is recomputed; 0 or less turns it off."],
  ["feature-gates", "mapStringBool", "featureGates", "", "Comma-separated Name=true|false pairs that switch alpha, beta and other staged features on or off. Known gates:"],
  ["kubelet-cgroups", "string", "kubeletCgroups", "", "Absolute name of the cgroup the kubelet itself runs in."],
  ["system-cgroups", "string", "systemCgroups", "", "Absolute name of the cgroup for non-kernel processes that are not in a container. Needs --cgroup-root."],
  ["provider-id", "string", "providerID", "", "Identifier of this machine in the cloud provider's inventory."],
  ["cgroups-per-qos", "bool", "cgroupsPerQOS", "true", "Build the QoS and pod cgroup tree; only pods are enforced through it."],
  ["cgroup-driver", "string", "cgroupDriver", "cgroupfs", "How the kubelet manages cgroups on the host: 'cgroupfs' or 'systemd'."],
  ["cgroup-root", "string", "cgroupRoot", "", "Parent cgroup for pods, enforced on a best-effort basis. Empty means the container runtime's default."],
  ["cpu-manager-policy", "string", "cpuManagerPolicy", "none", "CPU manager policy: 'none' or 'static'."],
  ["cpu-manager-policy-options", "mapStringStringNoSplit", "cpuManagerPolicyOptions", "", "One key=value option for the CPU manager policy per use of the flag; repeat the flag for more options."],
  ["cpu-manager-reconcile-period", "duration", "cpuManagerReconcilePeriod", "10s", "<Warning: Alpha feature> How often the CPU manager reconciles; defaults to --node-status-update-frequency."],
  ["qos-reserved", "mapStringString", "qosReserved", "", "<Warning: Alpha feature> Per-resource percentage of requests reserved for higher QoS classes, e.g. memory=50%. Only memory is supported. Needs the QOSReserved feature gate."],
  ["topology-manager-policy", "string", "topologyManagerPolicy", "none", "Topology manager policy: 'none', 'best-effort', 'restricted' or 'single-numa-node'."],
  ["runtime-request-timeout", "duration", "runtimeRequestTimeout", "2m0s", "Deadline of every runtime request except the long-running pull, logs, exec and attach calls; a request that runs out is cancelled and retried later."],
  ["hairpin-mode", "string", "hairpinMode", "promiscuous-bridge", "How a service can reach its own endpoints through the service IP: 'promiscuous-bridge', 'hairpin-veth' or 'none'."],
  ["max-pods", "int32", "maxPods", "110", "Most pods this kubelet may run."],
  ["pod-cidr", "string", "podCIDR", "", "CIDR for pod IPs in standalone mode; in cluster mode the control plane assigns it."],
  ["pod-max-pids", "int64", "podPidsLimit", "-1", "Most processes in one pod; -1 means no limit."],
  ["resolv-conf", "string", "resolvConf", "/etc/resolv.conf", "Resolver configuration file used as the base of container DNS settings."],
  ["runonce", "bool", "runOnce", "false", "Start the static pods once and exit. Rejected by validation in this version."],
  ["cpu-cfs-quota", "bool", "cpuCFSQuota", "true", "Enforce container CPU limits through CFS quota."],
  ["cpu-cfs-quota-period", "duration", "cpuCFSQuotaPeriod", "100ms", "CFS quota period of CPU limits (cpu.cfs_period_us)."],
  ["enable-controller-attach-detach", "bool", "enableControllerAttachDetach", "true", "Leave volume attach and detach to the attach/detach controller instead of doing it here."],
  ["make-iptables-util-chains", "bool", "makeIPTablesUtilChains", "true", "Make sure the iptables utility chains exist on the host."],
  ["container-log-max-size", "string", "containerLogMaxSize", "10Mi", "Size, such as 10Mi, at which a container log file is rotated."],
  ["container-log-max-files", "int32", "containerLogMaxFiles", "5", "Most log files kept per container; at least 2."],
  ["allowed-unsafe-sysctls", "stringSlice", "allowedUnsafeSysctls", "[]", "Comma-separated unsafe sysctls or patterns ending in '*' that pods may set. Use at your own risk."],
  ["node-status-max-images", "int32", "nodeStatusMaxImages", "50", "Most images listed in Node.Status.Images; -1 lists all."],
  ["kernel-memcg-notification", "bool", "kernelMemcgNotification", "false", "Use kernel memcg notifications to notice crossed memory eviction thresholds instead of polling."],
  ["local-storage-capacity-isolation", "bool", "localStorageCapacityIsolation", "true", "Track and limit local ephemeral storage. Turn off when the root filesystem is not supported (e.g. tmpfs); ephemeral-storage is then neither reported nor evicted on."],
  ["max-open-files", "int64", "maxOpenFiles", "1000000", "Most files the kubelet process may open."],
  ["kube-api-content-type", "string", "contentType", "application/vnd.kubernetes.protobuf", "Content type of requests sent to the API server."],
  ["kube-api-qps", "int32", "kubeAPIQPS", "50", "Requests per second to the API server; 0 means the client default."],
  ["kube-api-burst", "int32", "kubeAPIBurst", "100", "Requests allowed in a burst to the API server; 0 means the client default."],
  ["serialize-image-pulls", "bool", "serializeImagePulls", "true", "Pull one image at a time. Keep it on for old docker daemons or aufs storage."],
  ["eviction-hard", "langleMap", "evictionHard", "", "Hard eviction thresholds as signal<value pairs (e.g. memory.available<1Gi); crossing one evicts pods at once."],
  ["eviction-soft", "langleMap", "evictionSoft", "", "Soft eviction thresholds as signal<value pairs (e.g. memory.available<1.5Gi); a pod is evicted only once the matching grace period has passed."],
  ["eviction-soft-grace-period", "mapStringString", "evictionSoftGracePeriod", "", "Grace period per soft eviction signal (e.g. memory.available=1m30s)."],
  ["eviction-pressure-transition-period", "duration", "evictionPressureTransitionPeriod", "5m0s", "How long the node stays in an eviction pressure condition after the pressure is gone."],
  ["eviction-max-pod-grace-period", "int32", "evictionMaxPodGracePeriod", "0", "Longest termination grace period in seconds given to a pod on soft eviction. A negative value means the pod's own period."],
  ["eviction-minimum-reclaim", "mapStringString", "evictionMinimumReclaim", "", "Least amount of a resource to reclaim once eviction starts (e.g. imagefs.available=2Gi)."],
  ["pods-per-core", "int32", "podsPerCore", "0", "Pods allowed per core; --max-pods still caps the total. 0 means no per-core limit."],
  ["protect-kernel-defaults", "bool", "protectKernelDefaults", "false", "Fail when kernel tunables differ from the kubelet's expectations instead of changing them."],
  ["reserved-cpus", "string", "reservedSystemCPUs", "", "CPU list or ranges (e.g. '0-3' or '0,2,4-5') kept for the system and kubernetes daemons. Overrides the CPU part of --system-reserved and --kube-reserved."],
  ["topology-manager-scope", "string", "topologyManagerScope", "container", "Scope of topology hints: 'container' or 'pod'."],
  ["topology-manager-policy-options", "mapStringString", "topologyManagerPolicyOptions", "", "key=value options for the topology manager policy, separated by commas."],
  ["system-reserved", "mapStringString", "systemReserved", "", "Resources kept for non-kubernetes system processes, as resource=quantity pairs (e.g. cpu=200m,memory=500Mi,ephemeral-storage=1Gi,pid=1000)."],
  ["kube-reserved", "mapStringString", "kubeReserved", "", "Resources kept for kubernetes system components, as resource=quantity pairs (e.g. cpu=200m,memory=500Mi,ephemeral-storage=1Gi,pid=1000)."],
  ["enforce-node-allocatable", "stringSlice", "enforceNodeAllocatable", "[pods]", "Comma-separated list of levels at which node allocatable is enforced: 'none', 'pods', 'system-reserved' and 'kube-reserved'. The last two need --system-reserved-cgroup or --kube-reserved-cgroup; with 'none' nothing else may be listed."],
  ["system-reserved-cgroup", "string", "systemReservedCgroup", "", "Absolute name of the top-level cgroup of the system daemons that --system-reserved accounts for."],
  ["kube-reserved-cgroup", "string", "kubeReservedCgroup", "", "Absolute name of the top-level cgroup of the kubernetes daemons that --kube-reserved accounts for."],
  ["logging-format", "string", "logging.format", "text", 'Log output format. Permitted formats: "json" (needs the LoggingBetaOptions gate), "text".'],
  ["log-flush-frequency", "duration", "logging.flushFrequency", "5s", "Longest time buffered log lines may wait before being written."],
  ["v", "level", "logging.verbosity", "0", "Log verbosity: a number, higher is more detailed."],
  ["vmodule", "vmodule", "logging.vmodule", "", "pattern=N pairs, comma separated, that set the verbosity per source file (text format only)."],
  ["log-text-split-stream", "bool", "logging.options.text.splitStream", "false", "[Alpha] Text format: send error lines to stderr and info lines to stdout (the latter buffered). Needs the LoggingAlphaOptions gate."],
  ["log-text-info-buffer-size", "quantity", "logging.options.text.infoBufferSize", "0", "[Alpha] Text format with split streams: buffer size for info lines, 0 for none. Needs the LoggingAlphaOptions gate."],
  ["log-json-split-stream", "bool", "logging.options.json.splitStream", "false", "[Alpha] JSON format: send error lines to stderr and info lines to stdout (the latter buffered). Needs the LoggingAlphaOptions gate."],
  ["log-json-info-buffer-size", "quantity", "logging.options.json.infoBufferSize", "0", "[Alpha] JSON format with split streams: buffer size for info lines, 0 for none. Needs the LoggingAlphaOptions gate."],
  ["memory-manager-policy", "string", "memoryManagerPolicy", "None", "Memory manager policy: 'None' or 'Static'."],
  ["reserved-memory", "reservedMemory", "reservedMemory", "", "Memory kept per NUMA node, as numa-node:type=quantity entries separated by ';' (e.g. '0:memory=1Gi,hugepages-1M=2Gi;1:memory=2Gi'). Only the Static memory manager policy uses it."],
  ["register-node", "bool", "registerNode", "true", "Register this node with the API server; without --kubeconfig there is nothing to register with."],
  ["register-with-taints", "taints", "registerWithTaints", "", 'Taints to put on the node at registration, as "<key>=<value>:<effect>" entries separated by commas. Ignored when --register-node is false.'],
]);

function cadvisor(
  name: string,
  kind: ValueKind,
  def: string,
  usage: string,
  keep = false,
): FlagSpec {
  const spec: FlagSpec = {
    name,
    kind,
    group: "global",
    field: name,
    def,
    usage,
  };
  if (!keep) spec.deprecated = CADVISOR_FLAG_DEPRECATION;
  return spec;
}

const GLOBAL_FLAGS: FlagSpec[] = [
  cadvisor("housekeeping-interval", "goDuration", "10s", "Period of cAdvisor container housekeeping (accepted, not used by kubelet.ts).", true),
  cadvisor("max-housekeeping-interval", "goDuration", "1m0s", "Longest allowed cAdvisor housekeeping period (accepted, not used by kubelet.ts).", true),
  cadvisor("application-metrics-count-limit", "goInt", "100", "cAdvisor: most application metrics kept per container (accepted, not used)."),
  cadvisor("boot-id-file", "goString", "/proc/sys/kernel/random/boot_id", "cAdvisor: comma-separated files tried in order for the boot ID (accepted, not used)."),
  cadvisor("container-hints", "goString", "/etc/cadvisor/container_hints.json", "cAdvisor: container hints file (accepted, not used)."),
  cadvisor("containerd", "goString", "/run/containerd/containerd.sock", "cAdvisor: containerd endpoint (accepted, not used)."),
  cadvisor("containerd-namespace", "goString", "k8s.io", "cAdvisor: containerd namespace (accepted, not used)."),
  cadvisor("enable-load-reader", "goBool", "false", "cAdvisor: read CPU load (accepted, not used)."),
  cadvisor("event-storage-age-limit", "goString", "default=0", "cAdvisor: how long events are kept, per event type as type=duration pairs (accepted, not used)."),
  cadvisor("event-storage-event-limit", "goString", "default=0", "cAdvisor: how many events are kept, per event type as type=count pairs (accepted, not used)."),
  cadvisor("global-housekeeping-interval", "goDuration", "1m0s", "cAdvisor: period of global housekeeping (accepted, not used)."),
  cadvisor("log-cadvisor-usage", "goBool", "false", "cAdvisor: log the usage of the cAdvisor container (accepted, not used)."),
  cadvisor("machine-id-file", "goString", "/etc/machine-id,/var/lib/dbus/machine-id", "cAdvisor: comma-separated files tried in order for the machine ID (accepted, not used)."),
  cadvisor("storage-driver-buffer-duration", "goDuration", "1m0s", "cAdvisor: how long storage writes are buffered (accepted, not used)."),
  cadvisor("storage-driver-db", "goString", "cadvisor", "cAdvisor: storage database name (accepted, not used)."),
  cadvisor("storage-driver-host", "goString", "localhost:8086", "cAdvisor: storage database host:port (accepted, not used)."),
  cadvisor("storage-driver-password", "goString", "root", "cAdvisor: storage database password (accepted, not used)."),
  cadvisor("storage-driver-secure", "goBool", "false", "cAdvisor: use TLS to the storage database (accepted, not used)."),
  cadvisor("storage-driver-table", "goString", "stats", "cAdvisor: storage table name (accepted, not used)."),
  cadvisor("storage-driver-user", "goString", "root", "cAdvisor: storage database user name (accepted, not used)."),
  {
    name: "version",
    kind: "version",
    group: "global",
    field: "version",
    def: "false",
    usage:
      "--version or --version=raw prints the version and exits; --version=vX.Y.Z... changes the version the kubelet reports.",
  },
  {
    name: "help",
    shorthand: "h",
    kind: "bool",
    group: "global",
    field: "help",
    def: "false",
    usage: "help for kubelet",
  },
];

/** Every flag, in upstream registration order (help sorts by name). */
export const FLAG_SPECS: readonly FlagSpec[] = [
  ...CLI_FLAGS.map((spec) =>
    spec.name === "v" ? { ...spec, shorthand: "v" } : spec
  ),
  ...CONFIG_FLAGS.map((spec) =>
    spec.name === "v" ? { ...spec, shorthand: "v" } : spec
  ),
  ...GLOBAL_FLAGS,
];
