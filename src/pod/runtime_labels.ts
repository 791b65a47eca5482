/**
 * The label and annotation keys the kubelet puts on CRI sandboxes and containers (upstream
 * `pkg/kubelet/types/labels.go` and kuberuntime's `labels.go`): written by the container
 * config, read back by status, logs, garbage collection and the runtime pod list.
 *
 * @module
 */

/** CRI label keys the kubelet puts on sandboxes and containers. */
export const POD_NAME_LABEL = "io.kubernetes.pod.name";
export const POD_NAMESPACE_LABEL = "io.kubernetes.pod.namespace";
export const POD_UID_LABEL = "io.kubernetes.pod.uid";
export const CONTAINER_NAME_LABEL = "io.kubernetes.container.name";
/** CRI annotation keys the kubelet puts on containers. */
export const CONTAINER_HASH_ANNOTATION = "io.kubernetes.container.hash";
export const CONTAINER_RESTART_COUNT_ANNOTATION =
  "io.kubernetes.container.restartCount";
export const TERMINATION_MESSAGE_PATH_ANNOTATION =
  "io.kubernetes.container.terminationMessagePath";
export const TERMINATION_MESSAGE_POLICY_ANNOTATION =
  "io.kubernetes.container.terminationMessagePolicy";
export const POD_DELETION_GRACE_ANNOTATION =
  "io.kubernetes.pod.deletionGracePeriod";
export const POD_TERMINATION_GRACE_ANNOTATION =
  "io.kubernetes.pod.terminationGracePeriod";
export const PRESTOP_HANDLER_ANNOTATION =
  "io.kubernetes.container.preStopHandler";
export const CONTAINER_PORTS_ANNOTATION = "io.kubernetes.container.ports";
/**
 * Written by kubelet.ts versions before the differential tests showed that the upstream v1.34
 * kubelet does not set it; still read from containers those versions created.
 */
export const CONTAINER_TYPE_ANNOTATION = "io.kubernetes.container.type";
