#!/usr/bin/env bash
# One node of scripts/cluster_nodes.sh (sourced; uses its MN_* vars): a network namespace
# joined to the host bridge by a veth, and in it the node's runtime-only containerd, its
# kubelet (kubelet.ts or the upstream kubelet, one configuration for both) and kube-proxy.
# Every daemon enters only the node's network namespace (nsenter --net): they share the host's
# mounts, so the kubelet's volume mounts are the ones containerd gives the containers, and the
# teardown sees them.

mn_node_ip() { printf '10.159.0.%d' $((10 + $1)); }
mn_pod_cidr() { printf '10.160.%d.0/24' "$1"; }
mn_in() { # <node index> <command...>: the command in the node's network namespace
  local i=$1
  shift
  nsenter "--net=/run/netns/ktsmn$i" -- "$@"
}

# mn_node_cri_env <node index> up|down: the node's containerd (scripts/cri_env.sh's
# runtime-only instance) run inside its namespace, or on the host once the namespace is gone.
mn_node_cri_env() {
  local i=$1 enter=()
  [ -e "/run/netns/ktsmn$i" ] && enter=(nsenter "--net=/run/netns/ktsmn$i" --)
  env KTS_CRI_ROOT="$MN_ROOT/cri-$i" KTS_CRI_RUNTIME_ONLY=1 KTS_CRI_BRIDGE="ktsmnb$i" \
    KTS_CRI_SUBNET="$(mn_pod_cidr "$i")" "${enter[@]}" bash "$MN_LIB_DIR/cri_env.sh" "$2"
}

# The node's namespace, its veth on the host bridge, its address, the service CIDR routed to
# the host (the node's own processes need a route before kube-proxy's DNAT in OUTPUT applies),
# and forwarders of the apiserver and the registry on its loopback.
mn_node_network() {
  local i=$1 ip port
  local ns=ktsmn$i veth=ktsmnv$i
  ip=$(mn_node_ip "$i")
  [ -e "/run/netns/$ns" ] || ip netns add "$ns"
  ip link show "$veth" >/dev/null 2>&1 || ip link add "$veth" type veth peer name eth0 netns "$ns"
  ip link set "$veth" master "$MN_BRIDGE" up
  mn_in "$i" ip link set lo up
  mn_in "$i" ip link set eth0 up
  mn_in "$i" ip -4 addr show dev eth0 | grep -qF "inet $ip/" ||
    mn_in "$i" ip addr add "$ip/24" dev eth0
  mn_in "$i" ip route replace "$MN_SERVICE_CIDR" via "$MN_HOST_IP" dev eth0
  mn_in "$i" sysctl -qw net.ipv4.ip_forward=1
  for port in "$MN_API_PORT" "$MN_REGISTRY_PORT"; do
    mn_start "$MN_ROOT/node-$i/run/forward-$port.pid" "$MN_ROOT/node-$i/logs/forward-$port.log" \
      "TCP:$MN_HOST_IP:$port" nsenter "--net=/run/netns/$ns" -- \
      socat "TCP-LISTEN:$port,bind=127.0.0.1,fork,reuseaddr" "TCP:$MN_HOST_IP:$port"
  done
}

# The same KubeletConfiguration for both kubelets (kubelet.ts reads upstream's format).
mn_kubelet_config() {
  local i=$1
  local dir=$MN_ROOT/node-$i
  cat >"$dir/config.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
containerRuntimeEndpoint: unix://$MN_ROOT/cri-$i/containerd.sock
cgroupDriver: cgroupfs
cgroupRoot: /ktsmn$i
failSwapOn: false
address: $(mn_node_ip "$i")
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
podLogsDir: $dir/pod-logs
resolvConf: /etc/resolv.conf
clusterDNS:
- $MN_DNS_IP
clusterDomain: $MN_DOMAIN
syncFrequency: 10s
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: "100Mi"
  nodefs.available: "1%"
  imagefs.available: "1%"
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: $MN_ROOT/cluster/pki/ca.crt
authorization:
  mode: Webhook
YAML
}

mn_kube_proxy_config() {
  local i=$1
  local dir=$MN_ROOT/node-$i
  mn_kubeconfig "$dir/kube-proxy.kubeconfig" kube-proxy
  cat >"$dir/kube-proxy.yaml" <<YAML
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: $dir/kube-proxy.kubeconfig
hostnameOverride: ktsmn$i
mode: iptables
clusterCIDR: $MN_CLUSTER_CIDR
healthzBindAddress: $(mn_node_ip "$i"):10256
metricsBindAddress: 127.0.0.1:10249
nodePortAddresses:
- $MN_NODE_NET
iptables:
  localhostNodePorts: false
conntrack:
  # the conntrack table size and timeouts are the host's: leave them alone
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
YAML
}

mn_kubelet_healthy() { mn_in "$1" curl -sf http://127.0.0.1:10248/healthz | grep -qx ok; }

# The deno that runs kubelet.ts: KTS_DENO, else the pinned version through npx.
mn_deno() {
  if [ -n "${KTS_DENO:-}" ]; then
    printf '%s\n' "$KTS_DENO"
    return 0
  fi
  [ -s "$MN_ROOT/deno" ] ||
    npx -y deno@2.9.6 eval 'console.log(Deno.execPath())' >"$MN_ROOT/deno" ||
    mn_die "no deno: set KTS_DENO or make npx able to fetch deno@2.9.6"
  cat "$MN_ROOT/deno"
}

mn_node_up() { # <index> <kind> <peers bin> <addons bin>
  local i=$1 kind=$2 bin=$3 addons=$4 h
  local dir=$MN_ROOT/node-$i
  mkdir -p "$dir/root" "$dir/pki" "$dir/pod-logs" "$dir/logs" "$dir/run"
  mn_node_network "$i"
  mn_node_cri_env "$i" up >/dev/null ||
    mn_die "node $i: its containerd did not come up (log $MN_ROOT/cri-$i/logs)"
  # The kubelet wants its cgroup root in every hierarchy (cgroup v1) already.
  for h in /sys/fs/cgroup/*/; do
    [ -d "$h" ] && mkdir -p "${h}ktsmn$i" 2>/dev/null || true
  done
  mn_kubelet_config "$i"
  local args=(--config="$dir/config.yaml" --root-dir="$dir/root" --cert-dir="$dir/pki"
    --bootstrap-kubeconfig="$MN_ROOT/cluster/bootstrap.kubeconfig"
    --kubeconfig="$dir/kubelet.kubeconfig" --hostname-override="ktsmn$i"
    --node-ip="$(mn_node_ip "$i")" --node-labels="kts.test/kubelet=$kind" --v=2)
  local cmd=("$bin/kubelet")
  if [ "$kind" = ours ]; then
    cmd=("$(mn_deno)" run -A "--v8-flags=$(mn_v8_flags)" "$MN_LIB_DIR/../main.ts")
  fi
  mn_start "$dir/run/kubelet.pid" "$dir/logs/kubelet.log" "$dir/config.yaml" \
    nsenter "--net=/run/netns/ktsmn$i" -- "${cmd[@]}" "${args[@]}"
  mn_kube_proxy_config "$i"
  mn_start "$dir/run/kube-proxy.pid" "$dir/logs/kube-proxy.log" "$dir/kube-proxy.yaml" \
    nsenter "--net=/run/netns/ktsmn$i" -- "$addons/kube-proxy" --config="$dir/kube-proxy.yaml" --v=2
  # The kubelet serves healthz once its client certificate is signed; on a loaded machine the
  # controller-manager that approves it can take minutes to settle.
  local t
  for ((t = 0; t < 360; t++)); do
    mn_kubelet_healthy "$i" && break
    mn_pid_alive "$dir/run/kubelet.pid" "$dir/config.yaml" || break
    sleep 0.5
  done
  mn_kubelet_healthy "$i" || {
    tail -n 30 "$dir/logs/kubelet.log" >&2
    mn_kubectl get csr >&2 || true
    mn_die "node $i ($kind): the kubelet did not answer its healthz within 180 s (log $dir/logs/kubelet.log)"
  }
  mn_log "node ktsmn$i ($kind) at $(mn_node_ip "$i"), pods $(mn_pod_cidr "$i")"
}

# The V8 flags kubelet.ts ships with (scripts/v8_flags.ts), read from there.
mn_v8_flags() {
  sed -n 's/^ *"\(--[^"]*\)";$/\1/p' "$MN_LIB_DIR/v8_flags.ts" | head -n 1
}

# Every pod CIDR through its node's address, on the host and in every other node; and the
# service CIDR from the host through the last node, whose kube-proxy masquerades what comes
# from outside the cluster CIDR so that the answer returns the same way.
mn_routes() {
  local n i j
  n=$(wc -w <"$MN_ROOT/kinds")
  ip route replace "$MN_SERVICE_CIDR" via "$(mn_node_ip "$n")" dev "$MN_BRIDGE"
  for ((i = 1; i <= n; i++)); do
    ip route replace "$(mn_pod_cidr "$i")" via "$(mn_node_ip "$i")" dev "$MN_BRIDGE"
    for ((j = 1; j <= n; j++)); do
      [ "$i" = "$j" ] && continue
      mn_in "$j" ip route replace "$(mn_pod_cidr "$i")" via "$(mn_node_ip "$i")" dev eth0
    done
  done
}

mn_nodes_ready() {
  local ready
  ready=$(mn_kubectl get nodes -o \
    jsonpath='{range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' |
    grep -c '^ktsmn[0-9]*=True$')
  [ "$ready" = "$(wc -w <"$MN_ROOT/kinds")" ]
}

mn_node_down() { # <index>
  local i=$1 crictl tasks mnt n
  local dir=$MN_ROOT/node-$i cri=$MN_ROOT/cri-$i
  mn_stop "$dir/run/kube-proxy.pid"
  mn_stop "$dir/run/kubelet.pid"
  crictl="$(bash "$MN_LIB_DIR/peers.sh" dir 2>/dev/null)/crictl"
  if [ -x "$crictl" ] && [ -S "$cri/containerd.sock" ]; then
    timeout 60 "$crictl" --runtime-endpoint "unix://$cri/containerd.sock" rmp --all --force \
      >/dev/null 2>&1 || true
  fi
  mn_node_cri_env "$i" down >/dev/null 2>&1 || true
  # container processes outlive a killed shim: whatever is left in the node's cgroups
  for tasks in /sys/fs/cgroup/pids/ktsmn"$i"/*/*/*/tasks /sys/fs/cgroup/pids/ktsmn"$i"/*/*/*/*/tasks; do
    [ -f "$tasks" ] && xargs -r kill -KILL <"$tasks" 2>/dev/null || true
  done
  # the kubelet's pod volumes (tmpfs for tokens and secrets, bind mounts) under its root dir
  while read -r mnt; do
    umount "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null || true
  done < <(awk -v root="$dir/" 'index($2, root) == 1 { print $2 }' /proc/self/mounts | sort -r)
  for ((n = 0; n < 5; n++)); do
    find /sys/fs/cgroup -depth -type d \( -path "*/ktsmn$i/*" -o -name "ktsmn$i" \) \
      -exec rmdir {} \; 2>/dev/null || true
    compgen -G "/sys/fs/cgroup/*/ktsmn$i" >/dev/null || break
    sleep 0.5
  done
  mn_stop "$dir/run/forward-$MN_API_PORT.pid"
  mn_stop "$dir/run/forward-$MN_REGISTRY_PORT.pid"
  ip route delete "$(mn_pod_cidr "$i")" 2>/dev/null || true
  [ -e "/run/netns/ktsmn$i" ] && ip netns delete "ktsmn$i"
  ip link delete "ktsmnv$i" 2>/dev/null || true
  rm -rf --one-file-system "$dir"
}
