/**
 * metrics-server as upstream's release manifest (components.yaml of v0.8) deploys it: its
 * ServiceAccount, the aggregated reader and scraper ClusterRoles and their bindings, the
 * auth-delegator and authentication-reader bindings, the Service, the Deployment and the
 * `v1beta1.metrics.k8s.io` APIService. Changed for the local control plane: the pod runs on
 * the host network on a node of the test (the API server listens on 127.0.0.1 only and no
 * service proxy runs here) and binds the node's IP on a port of the test, and it trusts the
 * kubelets without checking their serving certificates (`--kubelet-insecure-tls`).
 */

/** Where and how metrics-server runs. */
export interface MetricsServerOptions {
  image: string;
  /** The node it runs on. */
  node: string;
  /** Its HTTPS port on the node's IP. */
  port: number;
  /** The API server's port on 127.0.0.1. */
  apiServerPort: number;
}

const NS = "kube-system";
const LABELS = { "k8s-app": "metrics-server" };

/** The objects to `kubectl apply`, as one JSON List. */
export function metricsServerManifest(o: MetricsServerOptions): string {
  const items: unknown[] = [
    {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "metrics-server", namespace: NS, labels: LABELS },
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: {
        name: "system:aggregated-metrics-reader",
        labels: {
          ...LABELS,
          "rbac.authorization.k8s.io/aggregate-to-admin": "true",
          "rbac.authorization.k8s.io/aggregate-to-edit": "true",
          "rbac.authorization.k8s.io/aggregate-to-view": "true",
        },
      },
      rules: [{
        apiGroups: ["metrics.k8s.io"],
        resources: ["pods", "nodes"],
        verbs: ["get", "list", "watch"],
      }],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "system:metrics-server", labels: LABELS },
      rules: [
        { apiGroups: [""], resources: ["nodes/metrics"], verbs: ["get"] },
        {
          apiGroups: [""],
          resources: ["pods", "nodes"],
          verbs: ["get", "list", "watch"],
        },
      ],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: {
        name: "metrics-server-auth-reader",
        namespace: NS,
        labels: LABELS,
      },
      roleRef: {
        apiGroup: "rbac.authorization.k8s.io",
        kind: "Role",
        name: "extension-apiserver-authentication-reader",
      },
      subjects: [{
        kind: "ServiceAccount",
        name: "metrics-server",
        namespace: NS,
      }],
    },
    ...[
      ["metrics-server:system:auth-delegator", "system:auth-delegator"],
      ["system:metrics-server", "system:metrics-server"],
    ].map(([name, role]) => ({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name, labels: LABELS },
      roleRef: {
        apiGroup: "rbac.authorization.k8s.io",
        kind: "ClusterRole",
        name: role,
      },
      subjects: [{
        kind: "ServiceAccount",
        name: "metrics-server",
        namespace: NS,
      }],
    })),
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "metrics-server", namespace: NS, labels: LABELS },
      spec: {
        selector: LABELS,
        ports: [{
          name: "https",
          port: 443,
          protocol: "TCP",
          targetPort: "https",
        }],
      },
    },
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "metrics-server", namespace: NS, labels: LABELS },
      spec: {
        selector: { matchLabels: LABELS },
        strategy: { rollingUpdate: { maxUnavailable: 0 } },
        template: {
          metadata: { labels: LABELS },
          spec: {
            nodeName: o.node,
            hostNetwork: true,
            serviceAccountName: "metrics-server",
            priorityClassName: "system-cluster-critical",
            containers: [{
              name: "metrics-server",
              image: o.image,
              imagePullPolicy: "IfNotPresent",
              args: [
                "--cert-dir=/tmp",
                `--secure-port=${o.port}`,
                "--bind-address=$(NODE_IP)",
                "--kubelet-preferred-address-types=InternalIP",
                "--kubelet-use-node-status-port",
                "--kubelet-insecure-tls",
                "--metric-resolution=15s",
              ],
              env: [
                {
                  name: "NODE_IP",
                  valueFrom: { fieldRef: { fieldPath: "status.hostIP" } },
                },
                { name: "KUBERNETES_SERVICE_HOST", value: "127.0.0.1" },
                {
                  name: "KUBERNETES_SERVICE_PORT",
                  value: String(o.apiServerPort),
                },
              ],
              ports: [{
                containerPort: o.port,
                name: "https",
                protocol: "TCP",
              }],
              readinessProbe: {
                httpGet: { path: "/readyz", port: "https", scheme: "HTTPS" },
                periodSeconds: 10,
                failureThreshold: 3,
                initialDelaySeconds: 20,
              },
              livenessProbe: {
                httpGet: { path: "/livez", port: "https", scheme: "HTTPS" },
                periodSeconds: 10,
                failureThreshold: 3,
              },
              resources: { requests: { cpu: "100m", memory: "200Mi" } },
              securityContext: {
                allowPrivilegeEscalation: false,
                capabilities: { drop: ["ALL"] },
                readOnlyRootFilesystem: true,
                runAsNonRoot: true,
                runAsUser: 65534,
                seccompProfile: { type: "RuntimeDefault" },
              },
              volumeMounts: [{ name: "tmp-dir", mountPath: "/tmp" }],
            }],
            volumes: [{ name: "tmp-dir", emptyDir: {} }],
          },
        },
      },
    },
    {
      apiVersion: "apiregistration.k8s.io/v1",
      kind: "APIService",
      metadata: { name: "v1beta1.metrics.k8s.io", labels: LABELS },
      spec: {
        service: { name: "metrics-server", namespace: NS },
        group: "metrics.k8s.io",
        version: "v1beta1",
        insecureSkipTLSVerify: true,
        groupPriorityMinimum: 100,
        versionPriority: 100,
      },
    },
  ];
  return JSON.stringify({ apiVersion: "v1", kind: "List", items }, null, 1);
}
