/**
 * `KubeletFlags`: the command-line-only settings (not part of
 * KubeletConfiguration), with their defaults.
 * @module
 */

/** The CLI-only kubelet settings. Durations are Go duration strings. */
export interface KubeletFlags {
  runtimeCgroups: string;
  /** Parsed and ignored upstream since v1.34 (the runtime owns the sandbox image). */
  podInfraContainerImage: string;
  imageCredentialProviderConfig: string;
  imageCredentialProviderBinDir: string;
  /** `--config` exactly as given (relative paths are resolved when loading). */
  config: string;
  configDir: string;
  kubeconfig: string;
  bootstrapKubeconfig: string;
  hostnameOverride: string;
  /** Comma-separated node IPs, checked when the kubelet starts. */
  nodeIP: string;
  certDir: string;
  cloudProvider: string;
  rootDir: string;
  seccompDefault: boolean;
  nodeLabels: Record<string, string>;
  lockFile: string;
  exitOnLockContention: boolean;
  minimumContainerTTLDuration: string;
  maxPerPodContainerCount: number;
  maxContainerCount: number;
  experimentalMounterPath: string;
  experimentalAllocatableIgnoreEviction: boolean;
  /** Ours: print the effective configuration and exit. */
  dryRun: boolean;
  /** The version string the kubelet reports (`--version=vX.Y.Z` overrides it). */
  reportedVersion: string;
  /** The cAdvisor flags, accepted for compatibility, keyed by flag name. */
  cadvisor: Record<string, string | number | boolean>;
}

/** The defaults of every CLI-only flag. */
export function defaultKubeletFlags(reportedVersion = ""): KubeletFlags {
  return {
    runtimeCgroups: "",
    podInfraContainerImage: "",
    imageCredentialProviderConfig: "",
    imageCredentialProviderBinDir: "",
    config: "",
    configDir: "",
    kubeconfig: "",
    bootstrapKubeconfig: "",
    hostnameOverride: "",
    nodeIP: "",
    certDir: "/var/lib/kubelet/pki",
    cloudProvider: "",
    rootDir: "/var/lib/kubelet",
    seccompDefault: false,
    nodeLabels: {},
    lockFile: "",
    exitOnLockContention: false,
    minimumContainerTTLDuration: "0s",
    maxPerPodContainerCount: 1,
    maxContainerCount: -1,
    experimentalMounterPath: "",
    experimentalAllocatableIgnoreEviction: false,
    dryRun: false,
    reportedVersion,
    cadvisor: {
      "housekeeping-interval": "10s",
      "max-housekeeping-interval": "1m0s",
      "application-metrics-count-limit": 100,
      "boot-id-file": "/proc/sys/kernel/random/boot_id",
      "container-hints": "/etc/cadvisor/container_hints.json",
      "containerd": "/run/containerd/containerd.sock",
      "containerd-namespace": "k8s.io",
      "enable-load-reader": false,
      "event-storage-age-limit": "default=0",
      "event-storage-event-limit": "default=0",
      "global-housekeeping-interval": "1m0s",
      "log-cadvisor-usage": false,
      "machine-id-file": "/etc/machine-id,/var/lib/dbus/machine-id",
      "storage-driver-buffer-duration": "1m0s",
      "storage-driver-db": "cadvisor",
      "storage-driver-host": "localhost:8086",
      "storage-driver-password": "root",
      "storage-driver-secure": false,
      "storage-driver-table": "stats",
      "storage-driver-user": "root",
    },
  };
}
