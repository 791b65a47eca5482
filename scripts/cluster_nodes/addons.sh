#!/usr/bin/env bash
# What scripts/cluster_nodes.sh adds to the control plane (sourced; uses its MN_* vars): the
# kube-proxy credentials, the `kubernetes` Service's endpoint, and CoreDNS as a local image
# with its Deployment and the kube-dns Service.

# mn_kubeconfig <file> <name>: a kubeconfig with the client pair <name>.crt/.key of the
# cluster's PKI, for the apiserver as every node sees it (its loopback forwarder).
mn_kubeconfig() {
  local file=$1 name=$2 pki=$MN_ROOT/cluster/pki
  cat >"$file" <<YAML
apiVersion: v1
kind: Config
clusters:
- name: kts
  cluster:
    server: https://127.0.0.1:$MN_API_PORT
    certificate-authority-data: $(base64 -w0 <"$pki/ca.crt")
users:
- name: $name
  user:
    client-certificate-data: $(base64 -w0 <"$pki/$name.crt")
    client-key-data: $(base64 -w0 <"$pki/$name.key")
contexts:
- name: kts
  context:
    cluster: kts
    user: $name
current-context: kts
YAML
  chmod 600 "$file"
}

# kube-proxy's client certificate: the user system:kube-proxy, which the default RBAC policy
# binds to system:node-proxier.
mn_kube_proxy_cert() {
  local pki=$MN_ROOT/cluster/pki
  [ -s "$pki/kube-proxy.crt" ] && return 0
  openssl req -newkey rsa:2048 -nodes -keyout "$pki/kube-proxy.key" -out "$pki/kube-proxy.csr" \
    -subj /CN=system:kube-proxy 2>/dev/null
  printf 'keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n' \
    >"$pki/kube-proxy.ext"
  openssl x509 -req -in "$pki/kube-proxy.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" \
    -CAcreateserial -days 7 -out "$pki/kube-proxy.crt" -extfile "$pki/kube-proxy.ext" 2>/dev/null
  rm -f "$pki/kube-proxy.csr" "$pki/kube-proxy.ext"
}

# CoreDNS as a one-layer image (the static binary alone), pushed to the local registry from
# the shared containerd, in a namespace of its own there, as scripts/conformance/images.sh does.
mn_push_coredns_image() {
  local binary=$1 registry=127.0.0.1:$MN_REGISTRY_PORT
  local sock=${KTS_CRI_ROOT:-/tmp/kts-cri}/containerd.sock work=$MN_ROOT/coredns-image
  local repo=${MN_COREDNS_IMAGE#"$registry"/}
  if curl -sf -o /dev/null -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
    "http://$registry/v2/${repo%:*}/manifests/${repo##*:}"; then
    return 0
  fi
  # kts_pack_image and the kts_die it calls
  kts_die() { mn_die "$@"; }
  # shellcheck source=../cri_env/build_image.sh
  . "$MN_LIB_DIR/cri_env/build_image.sh"
  rm -rf "$work" && mkdir -p "$work/rootfs/etc/coredns"
  cp "$binary" "$work/rootfs/coredns"
  kts_pack_image "$work" "$MN_COREDNS_IMAGE" "$MN_ROOT/coredns.tar" '["/coredns"]' null
  ctr -a "$sock" -n kts-mn images import --all-platforms "$MN_ROOT/coredns.tar" >/dev/null
  ctr -a "$sock" -n kts-mn images push --plain-http "$MN_COREDNS_IMAGE" >/dev/null
  ctr -a "$sock" -n kts-mn images rm "$MN_COREDNS_IMAGE" >/dev/null
  rm -f "$MN_ROOT/coredns.tar"
  mn_log "pushed $MN_COREDNS_IMAGE"
}

# The objects the nodes need before they start: kube-proxy's certificate, and the endpoint of
# the `kubernetes` Service (the apiserver runs with --endpoint-reconciler-type none, and pods
# reach it at the host bridge's forwarder).
mn_cluster_objects() {
  mn_kube_proxy_cert
  # (the Endpoints too, for readers that still look there; kubectl warns it is deprecated)
  mn_kubectl apply -f - 2>&1 >/dev/null <<YAML | { grep -v '^Warning: v1 Endpoints is deprecated' >&2 || true; }
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: kubernetes
  namespace: default
  labels:
    kubernetes.io/service-name: kubernetes
    endpointslice.kubernetes.io/managed-by: kts-cluster-nodes
addressType: IPv4
endpoints:
- addresses: [$MN_HOST_IP]
  conditions: {ready: true}
ports:
- name: https
  port: $MN_API_PORT
  protocol: TCP
---
apiVersion: v1
kind: Endpoints
metadata:
  name: kubernetes
  namespace: default
  labels:
    endpointslice.kubernetes.io/skip-mirror: "true"
subsets:
- addresses:
  - ip: $MN_HOST_IP
  ports:
  - name: https
    port: $MN_API_PORT
    protocol: TCP
YAML
}

# CoreDNS as kubeadm deploys it, one replica, answering for the cluster domain only (the
# cluster has no way out, so there is no forwarder).
mn_coredns_up() {
  mn_kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: ServiceAccount
metadata:
  name: coredns
  namespace: kube-system
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: system:coredns
rules:
- apiGroups: [""]
  resources: [endpoints, services, pods, namespaces]
  verbs: [list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: system:coredns
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: system:coredns
subjects:
- kind: ServiceAccount
  name: coredns
  namespace: kube-system
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: coredns
  namespace: kube-system
data:
  Corefile: |
    .:53 {
        errors
        health {
            lameduck 5s
        }
        ready
        kubernetes $MN_DOMAIN in-addr.arpa ip6.arpa {
            pods insecure
            fallthrough in-addr.arpa ip6.arpa
            ttl 30
        }
        cache 30
        reload
        loadbalance
    }
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: coredns
  namespace: kube-system
  labels:
    k8s-app: kube-dns
spec:
  replicas: 1
  selector:
    matchLabels:
      k8s-app: kube-dns
  template:
    metadata:
      labels:
        k8s-app: kube-dns
    spec:
      serviceAccountName: coredns
      priorityClassName: system-cluster-critical
      dnsPolicy: Default
      tolerations:
      - key: CriticalAddonsOnly
        operator: Exists
      containers:
      - name: coredns
        image: $MN_COREDNS_IMAGE
        imagePullPolicy: IfNotPresent
        args: ["-conf", "/etc/coredns/Corefile"]
        ports:
        - {name: dns, containerPort: 53, protocol: UDP}
        - {name: dns-tcp, containerPort: 53, protocol: TCP}
        - {name: metrics, containerPort: 9153, protocol: TCP}
        volumeMounts:
        - name: config
          mountPath: /etc/coredns
          readOnly: true
        livenessProbe:
          httpGet: {path: /health, port: 8080}
          initialDelaySeconds: 60
          timeoutSeconds: 5
          failureThreshold: 5
        readinessProbe:
          httpGet: {path: /ready, port: 8181}
          periodSeconds: 2
        resources:
          requests: {cpu: 100m, memory: 70Mi}
          limits: {memory: 170Mi}
      volumes:
      - name: config
        configMap:
          name: coredns
---
apiVersion: v1
kind: Service
metadata:
  name: kube-dns
  namespace: kube-system
  labels:
    k8s-app: kube-dns
spec:
  selector:
    k8s-app: kube-dns
  clusterIP: $MN_DNS_IP
  ports:
  - {name: dns, port: 53, protocol: UDP}
  - {name: dns-tcp, port: 53, protocol: TCP}
  - {name: metrics, port: 9153, protocol: TCP}
YAML
}

mn_coredns_ready() {
  [ "$(mn_kubectl -n kube-system get deployment coredns -o jsonpath='{.status.readyReplicas}')" = 1 ]
}
