/**
 * PersistentVolume and PersistentVolumeClaim objects for the cluster tests: a claim pre-bound
 * to a named PV (no StorageClass), and a PV pre-bound to the claim, 16 MiB, ReadWriteOnce.
 */

/** A claim of `pv`, pre-bound by `volumeName`. */
export function claimObject(
  ns: string,
  name: string,
  pv: string,
  volumeMode = "Filesystem",
): Record<string, unknown> {
  return {
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    metadata: { name, namespace: ns },
    spec: {
      storageClassName: "",
      volumeName: pv,
      volumeMode,
      accessModes: ["ReadWriteOnce"],
      resources: { requests: { storage: "16Mi" } },
    },
  };
}

/** A PV with `spec` (its source, volume mode, node affinity) bound to claim `ns/claimName`. */
export function volumeObject(
  name: string,
  ns: string,
  claimName: string,
  spec: Record<string, unknown>,
): Record<string, unknown> {
  return {
    apiVersion: "v1",
    kind: "PersistentVolume",
    metadata: { name },
    spec: {
      storageClassName: "",
      capacity: { storage: "16Mi" },
      accessModes: ["ReadWriteOnce"],
      claimRef: { namespace: ns, name: claimName },
      ...spec,
    },
  };
}

/** A `nodeAffinity` that pins a local PV to the node named `node`. */
export function onNode(node: string): Record<string, unknown> {
  return {
    required: {
      nodeSelectorTerms: [{
        matchExpressions: [{
          key: "kubernetes.io/hostname",
          operator: "In",
          values: [node],
        }],
      }],
    },
  };
}
