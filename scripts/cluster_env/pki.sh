#!/usr/bin/env bash
# Certificates and kubeconfigs for scripts/cluster_env.sh (sourced; uses its KC_* vars).
# A throwaway test PKI made with openssl, shaped like kubeadm's: one cluster CA that signs
# every serving and client certificate, and a service-account key pair.

# kc_cert <name> <subject> <extensions>: a key and a certificate signed by the cluster CA.
kc_cert() {
  local name=$1 subject=$2 ext=$3 dir=$KC_ROOT/pki
  [ -s "$dir/$name.crt" ] && return 0
  openssl req -newkey rsa:2048 -nodes -keyout "$dir/$name.key" -out "$dir/$name.csr" \
    -subj "$subject" 2>/dev/null
  printf '%s\n' "$ext" >"$dir/$name.ext"
  openssl x509 -req -in "$dir/$name.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" \
    -CAcreateserial -days 7 -out "$dir/$name.crt" -extfile "$dir/$name.ext" 2>/dev/null
  rm -f "$dir/$name.csr" "$dir/$name.ext"
}

kc_make_pki() {
  local dir=$KC_ROOT/pki
  mkdir -p "$dir"
  chmod 700 "$dir"
  if [ ! -s "$dir/ca.crt" ]; then
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$dir/ca.key" -out "$dir/ca.crt" \
      -days 7 -subj /CN=kubernetes-ca 2>/dev/null
  fi
  kc_cert apiserver /CN=kube-apiserver "keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,IP:$(kc_service_ip),DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local${KC_EXTRA_SANS:+,$KC_EXTRA_SANS}"
  local client="keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth"
  kc_cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" "$client"
  kc_cert admin "/O=system:masters/CN=kubernetes-admin" "$client"
  kc_cert controller-manager /CN=system:kube-controller-manager "$client"
  kc_cert scheduler /CN=system:kube-scheduler "$client"
  # The aggregation layer's client (kubeadm's front-proxy-client), for APIServices such as
  # metrics-server's; the cluster CA stands in for kubeadm's separate front-proxy CA.
  kc_cert front-proxy-client /CN=front-proxy-client "$client"
  if [ ! -s "$dir/sa.key" ]; then
    openssl genrsa -out "$dir/sa.key" 2048 2>/dev/null
    openssl rsa -in "$dir/sa.key" -pubout -out "$dir/sa.pub" 2>/dev/null
  fi
  kc_log "PKI ready in $dir"
}

# kc_kubeconfig <file> <user yaml lines (indented 4)>
kc_kubeconfig() {
  local file=$1 user=$2
  cat >"$file" <<YAML
apiVersion: v1
kind: Config
clusters:
- name: kts
  cluster:
    server: $KC_SERVER
    certificate-authority-data: $(base64 -w0 <"$KC_ROOT/pki/ca.crt")
users:
- name: user
  user:
$user
contexts:
- name: kts
  context:
    cluster: kts
    user: user
current-context: kts
YAML
  chmod 600 "$file"
}

kc_cert_user() { # name
  printf '    client-certificate-data: %s\n    client-key-data: %s' \
    "$(base64 -w0 <"$KC_ROOT/pki/$1.crt")" "$(base64 -w0 <"$KC_ROOT/pki/$1.key")"
}

kc_make_kubeconfigs() {
  kc_kubeconfig "$KC_ROOT/admin.kubeconfig" "$(kc_cert_user admin)"
  kc_kubeconfig "$KC_ROOT/controller-manager.kubeconfig" "$(kc_cert_user controller-manager)"
  kc_kubeconfig "$KC_ROOT/scheduler.kubeconfig" "$(kc_cert_user scheduler)"
  kc_kubeconfig "$KC_ROOT/bootstrap.kubeconfig" "    token: $KC_TOKEN_ID.$KC_TOKEN_SECRET"
}

# kc_group_binding <name> <cluster role> <group>: a ClusterRoleBinding document (with its ---).
kc_group_binding() {
  cat <<YAML
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: $1
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: $2
subjects:
- apiGroup: rbac.authorization.k8s.io
  kind: Group
  name: $3
YAML
}

# The bootstrap token as kubeadm makes it (a Secret the apiserver's bootstrap-token
# authenticator reads) and the bindings kubeadm creates so that a joining kubelet may create
# its client CSR, the CSR is approved automatically, and later renewals are approved too.
kc_bootstrap_objects() {
  local group=system:bootstrappers:kubeadm:default-node-token
  local expires
  expires=$(date -u -d '+7 days' +%Y-%m-%dT%H:%M:%SZ)
  kc_kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Secret
metadata:
  name: bootstrap-token-$KC_TOKEN_ID
  namespace: kube-system
type: bootstrap.kubernetes.io/token
stringData:
  token-id: "$KC_TOKEN_ID"
  token-secret: "$KC_TOKEN_SECRET"
  expiration: "$expires"
  usage-bootstrap-authentication: "true"
  usage-bootstrap-signing: "true"
  auth-extra-groups: "$group"
$(kc_group_binding kubeadm:kubelet-bootstrap system:node-bootstrapper "$group")
$(kc_group_binding kubeadm:node-autoapprove-bootstrap \
    system:certificates.k8s.io:certificatesigningrequests:nodeclient "$group")
$(kc_group_binding kubeadm:node-autoapprove-certificate-rotation \
    system:certificates.k8s.io:certificatesigningrequests:selfnodeclient system:nodes)
YAML
  kc_log "bootstrap token $KC_TOKEN_ID and its bindings created"
}
