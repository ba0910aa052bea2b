#!/usr/bin/env bash
# A single-node Kubernetes cluster on this machine, as root, for the `kubernetes` engine's tests:
# etcd, kube-apiserver, kube-controller-manager, kube-scheduler, containerd (runc and gVisor's runsc),
# kubelet, a CNI bridge from Debian's plugins, the agent-sandbox controller and a NetworkPolicy
# enforcer. Everything it runs has its own ports, folders and sockets, apart from the machine's
# dockerd (which runs its own containerd) and podman: the two are never touched.
#
# Idempotent: a component already running is left alone, so a second run takes seconds. The binaries
# are built once per machine (scripts/kube-build.sh, cached under /var/cache/mcp-code-exec/kube).
# Prints the admin kubeconfig's path on its last line.
#
#   bash scripts/kube-up.sh          # bring it up (or check it is up)
#   bash scripts/kube-up.sh down     # stop every component (state is kept: the next up is quick)
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"

STATE=/var/lib/mcp-code-exec/kube
RUN=/run/mcp-code-exec-kube
LOGS=/var/log/mcp-code-exec-kube
PKI="$STATE/pki"
KUBECONFIG_ADMIN="$STATE/admin.kubeconfig"
NODE=mcp-code-exec-node
# The pods' bridge. Its address is the node's: pods reach the API server and kubelet on it.
BRIDGE=mcpkube0
BRIDGE_IP=10.244.0.1
POD_SUBNET=10.244.0.0/24
SERVICE_RANGE=10.96.0.0/24
ETCD_PORT=42379
ETCD_PEER_PORT=42380
API_PORT=46443
KCM_PORT=47721
SCHED_PORT=47722
KUBELET_HEALTHZ_PORT=47723
AGENT_SANDBOX_METRICS_PORT=47724
AGENT_SANDBOX_PROBE_PORT=47725
NETWORK_POLICIES_METRICS_PORT=47726
CONTAINERD_SOCK="$RUN/containerd/containerd.sock"
# The sandbox images pods run: the bridge's default (this release's batteries image, which
# scripts/setup.sh builds into podman), plus any named in KUBE_UP_SANDBOX_IMAGES (space-separated).
SANDBOX_IMAGES=("$(bun -e 'import { DEFAULT_IMAGE } from "./src/config/env-vars.ts"; console.log(DEFAULT_IMAGE)')")
read -r -a extra_images <<< "${KUBE_UP_SANDBOX_IMAGES:-}"
SANDBOX_IMAGES+=("${extra_images[@]}")
PAUSE_IMAGE=registry.k8s.io/pause:3.10

log() { echo "[kube-up] $*" >&2; }
die() { log "$*"; exit 1; }
[ "$(id -u)" = 0 ] || die "run as root: the cluster's kubelet and containerd need it"

# --- stop ---------------------------------------------------------------------------------------
COMPONENTS=(network-policies agent-sandbox kubelet scheduler controller-manager apiserver containerd etcd)
# A pid file holds "pid start-time": after the machine restarts its processes a bare pid may name
# another process by then (pids are reused), which must neither count as ours nor be killed.
starttime() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | awk '{print $20}'; }
ours() { # name -> its pid, when the process in its pid file is still the one we started
  local pidfile="$RUN/$1.pid" pid st
  [ -f "$pidfile" ] || return 1
  read -r pid st < "$pidfile" || true
  [ -n "$pid" ] && [ -n "$st" ] && [ "$(starttime "$pid")" = "$st" ] && echo "$pid"
}
stop_one() {
  local pid
  if pid="$(ours "$1")"; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$RUN/$1.pid"
}
if [ "${1:-up}" = down ]; then
  for c in "${COMPONENTS[@]}"; do stop_one "$c"; done
  log "stopped (state kept in $STATE; pods' containers end with containerd's shims below)"
  # The pods' shims outlive containerd: end the ones under our containerd's state folder only.
  for pid in $(pgrep -f "containerd-shim-run(c-v2|sc-v1) .*-address $CONTAINERD_SOCK" || true); do kill -9 "$pid" 2>/dev/null || true; done
  exit 0
fi

mkdir -p "$STATE" "$RUN" "$LOGS" "$PKI"

# --- packages and binaries ------------------------------------------------------------------------
# iptables: the kubelet sets up its own chains at start ("Initialized iptables rules" in its log); conntrack
# beside it, as on the machine the cluster was first brought up on, so a fresh one matches it.
APT=(etcd-server containerd runc runsc containernetworking-plugins iproute2 openssl nftables iptables conntrack curl gcc libc6-dev)
missing=()
for p in "${APT[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing Debian packages: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
BIN="$(bash scripts/kube-build.sh | tail -1)"
export PATH="$BIN:$PATH"
KUBECTL=("$BIN/kubectl" --kubeconfig "$KUBECONFIG_ADMIN")

# --- certificates -----------------------------------------------------------------------------------
# One CA for everything; etcd listens on loopback only, without TLS.
cert() { # name subject [sans]
  local name=$1 subj=$2 sans=${3:-}
  [ -f "$PKI/$name.crt" ] && return 0
  openssl genrsa -out "$PKI/$name.key" 2048 2>/dev/null
  openssl req -new -key "$PKI/$name.key" -subj "$subj" -out "$PKI/$name.csr" 2>/dev/null
  local ext="$PKI/$name.ext"
  echo "basicConstraints=CA:FALSE" > "$ext"
  echo "keyUsage=critical,digitalSignature,keyEncipherment" >> "$ext"
  if [ -n "$sans" ]; then
    echo "extendedKeyUsage=serverAuth,clientAuth" >> "$ext"
    echo "subjectAltName=$sans" >> "$ext"
  else
    echo "extendedKeyUsage=clientAuth" >> "$ext"
  fi
  openssl x509 -req -in "$PKI/$name.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
    -days 3650 -extfile "$ext" -out "$PKI/$name.crt" 2>/dev/null
}
if [ ! -f "$PKI/ca.crt" ]; then
  log "making certificates in $PKI"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$PKI/ca.key" -out "$PKI/ca.crt" -days 3650 \
    -subj "/CN=mcp-code-exec-kube-ca" 2>/dev/null
  openssl genrsa -out "$PKI/sa.key" 2048 2>/dev/null
  openssl rsa -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
fi
cert apiserver "/CN=kube-apiserver" \
  "DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost,IP:127.0.0.1,IP:$BRIDGE_IP,IP:10.96.0.1"
cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client"
cert admin "/O=system:masters/CN=mcp-code-exec-admin"
cert controller-manager "/CN=system:kube-controller-manager"
cert scheduler "/CN=system:kube-scheduler"
cert kubelet "/O=system:nodes/CN=system:node:$NODE" "DNS:$NODE,IP:$BRIDGE_IP,IP:127.0.0.1"

kubeconfig() { # file user
  local file="$STATE/$1.kubeconfig" user=$2
  [ -f "$file" ] && return 0
  cat > "$file" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: mcp-code-exec
  cluster:
    server: https://127.0.0.1:$API_PORT
    certificate-authority: $PKI/ca.crt
users:
- name: $user
  user:
    client-certificate: $PKI/$user.crt
    client-key: $PKI/$user.key
contexts:
- name: mcp-code-exec
  context: {cluster: mcp-code-exec, user: $user}
current-context: mcp-code-exec
EOF
}
kubeconfig admin admin
kubeconfig controller-manager controller-manager
kubeconfig scheduler scheduler
kubeconfig kubelet kubelet

# --- processes ----------------------------------------------------------------------------------------
running() { ours "$1" >/dev/null; }
start() { # name command...
  local name=$1; shift
  running "$name" && return 0
  log "starting $name (log: $LOGS/$name.log)"
  setsid nohup "$@" >>"$LOGS/$name.log" 2>&1 < /dev/null &
  local pid=$!
  echo "$pid $(starttime "$pid")" > "$RUN/$name.pid"
}
wait_for() { # what seconds command...
  local what=$1 secs=$2; shift 2
  local deadline=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    if [ $SECONDS -ge $deadline ]; then
      [ -f "$LOGS/$what.log" ] && tail -n 15 "$LOGS/$what.log" | sed "s/^/[kube-up]   $what: /" >&2
      die "$what did not come up within ${secs}s: its log is $LOGS/$what.log (\`bash scripts/kube-up.sh down\` then again starts the cluster afresh)"
    fi
    sleep 0.5
  done
}

# The pods' bridge, made here (not by the CNI plugin at the first pod) so the API server can listen on it.
# (Its address is looked for in ip's whole output, not through `| grep -q`: under pipefail grep's early
# exit can fail the pipeline with SIGPIPE, and the address was then added twice: "Address already assigned".)
if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
  ip link add "$BRIDGE" type bridge
fi
[[ "$(ip addr show dev "$BRIDGE")" == *"inet $BRIDGE_IP/"* ]] || ip addr add "$BRIDGE_IP/24" dev "$BRIDGE"
ip link set "$BRIDGE" up

start etcd etcd --name mcp-kube --data-dir "$STATE/etcd" \
  --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
  --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-cluster "mcp-kube=http://127.0.0.1:$ETCD_PEER_PORT" --quota-backend-bytes 1073741824
wait_for etcd 60 curl -sf "http://127.0.0.1:$ETCD_PORT/health"

start apiserver "$BIN/kube-apiserver" \
  --etcd-servers "http://127.0.0.1:$ETCD_PORT" --bind-address 0.0.0.0 --secure-port "$API_PORT" \
  --advertise-address "$BRIDGE_IP" --service-cluster-ip-range "$SERVICE_RANGE" \
  --tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" --client-ca-file "$PKI/ca.crt" \
  --kubelet-client-certificate "$PKI/apiserver-kubelet-client.crt" --kubelet-client-key "$PKI/apiserver-kubelet-client.key" \
  --kubelet-preferred-address-types InternalIP \
  --service-account-issuer https://kubernetes.default.svc --service-account-key-file "$PKI/sa.pub" \
  --service-account-signing-key-file "$PKI/sa.key" --authorization-mode Node,RBAC \
  --enable-admission-plugins NodeRestriction --allow-privileged=false --profiling=false
wait_for apiserver 180 "${KUBECTL[@]}" get --raw /readyz

start controller-manager "$BIN/kube-controller-manager" \
  --kubeconfig "$STATE/controller-manager.kubeconfig" \
  --authentication-kubeconfig "$STATE/controller-manager.kubeconfig" --authorization-kubeconfig "$STATE/controller-manager.kubeconfig" \
  --bind-address 127.0.0.1 --secure-port "$KCM_PORT" --leader-elect=false --use-service-account-credentials \
  --service-account-private-key-file "$PKI/sa.key" --root-ca-file "$PKI/ca.crt" --cluster-name mcp-code-exec \
  --controllers '*,-nodeipam,-cloud-node-lifecycle,-service-lb-controller,-route' --profiling=false
start scheduler "$BIN/kube-scheduler" --kubeconfig "$STATE/scheduler.kubeconfig" \
  --authentication-kubeconfig "$STATE/scheduler.kubeconfig" --authorization-kubeconfig "$STATE/scheduler.kubeconfig" \
  --bind-address 127.0.0.1 --secure-port "$SCHED_PORT" --leader-elect=false --profiling=false

# --- containerd (its own root, state and socket: dockerd's containerd is another one) ---------------
mkdir -p "$STATE/bin" "$STATE/cni/net.d" "$RUN/containerd"
# A pod spec has no ulimits: runc is wrapped to set them in each container's OCI spec.
install -m 0755 scripts/kube/runc-limited "$STATE/bin/runc-limited"
# gVisor: its containerd shim (containerd-shim-runsc-v1) and runsc, built by kube-build.sh from the
# module proxy (Debian's runsc has no shim). runsc runs with --network=none (a sandbox pod under gVisor
# has no network at all, whatever the CNI gave its namespace) and --oci-seccomp (the pod's seccomp
# profile applies inside gVisor too, as podman and docker run it).
GVISOR_BIN="$(dirname "$BIN")/../gvisor"
GVISOR_BIN="$(readlink -f "$GVISOR_BIN" 2>/dev/null || true)"
if [ -n "$GVISOR_BIN" ] && [ -x "$GVISOR_BIN/containerd-shim-runsc-v1" ] && [ -x "$GVISOR_BIN/runsc" ]; then
  cat > "$STATE/runsc.toml" <<TOML
binary_name = "$STATE/bin/runsc-limited"
root = "$RUN/runsc"
[runsc_config]
  network = "none"
  oci-seccomp = "true"
TOML
  # The same ulimits as runc's pods (runc-limited), in each container's OCI spec, which runsc applies.
  sed "s#^exec /usr/sbin/runc #exec $GVISOR_BIN/runsc #" scripts/kube/runc-limited > "$STATE/bin/runsc-limited"
  chmod 0755 "$STATE/bin/runsc-limited"
  RUNSC_RUNTIME="runtime_type = \"io.containerd.runsc.v1\"
      [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runsc.options]
        TypeUrl = \"io.containerd.runsc.v1.options\"
        ConfigPath = \"$STATE/runsc.toml\""
  # containerd 1.6 cannot read the shim's JSON start output: a wrapper in front of it gives the address.
  mkdir -p "$STATE/gvisor"
  ln -sf "$GVISOR_BIN/containerd-shim-runsc-v1" "$STATE/gvisor/containerd-shim-runsc-v1.real"
  install -m 0755 scripts/kube/shim-address "$STATE/gvisor/containerd-shim-runsc-v1"
  CONTAINERD_PATH="$STATE/gvisor:$PATH"
else
  log "no gVisor shim in the cache (kube-build.sh could not build it): gVisor pods will not run"
  RUNSC_RUNTIME='runtime_type = "io.containerd.runsc.v1"'
  CONTAINERD_PATH="$PATH"
fi
cat > "$STATE/containerd.toml" <<TOML
version = 2
root = "$STATE/containerd"
state = "$RUN/containerd"
[grpc]
  address = "$CONTAINERD_SOCK"
[ttrpc]
  address = "$CONTAINERD_SOCK.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  enable_selinux = false
  disable_apparmor = true
  # The kubelet asks for negative oom_score_adj (-998 for the pause container), which needs
  # CAP_SYS_RESOURCE; root here lacks it, and runc's create then fails ("can't get final child's PID").
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    snapshotter = "overlayfs"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        BinaryName = "$STATE/bin/runc-limited"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runsc]
      $RUNSC_RUNTIME
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$STATE/cni/net.d"
TOML
# A changed config (a gVisor shim built since, a new version of this script) needs containerd restarted;
# the pods' shims outlive it.
containerd_sum="$( (cat "$STATE/containerd.toml"; echo "$CONTAINERD_PATH") | sha256sum | cut -c1-16)"
if running containerd && [ "$(cat "$RUN/containerd.config-sum" 2>/dev/null)" != "$containerd_sum" ]; then
  log "containerd's config changed: restarting it"
  stop_one containerd
fi
start containerd env PATH="$CONTAINERD_PATH" containerd --config "$STATE/containerd.toml"
echo "$containerd_sum" > "$RUN/containerd.config-sum"
CTR=(ctr --address "$CONTAINERD_SOCK" --namespace k8s.io)
# Whether containerd has image $1. (Not `ctr ... | grep -q`: under pipefail, grep leaving at the first
# match can end ctr with SIGPIPE and the pipeline then fails, as `ip addr show | grep -q` did.)
has_image() { local all; all="$("${CTR[@]}" images ls -q)" && grep -qxF "$1" <<<"$all"; }
wait_for containerd 60 "${CTR[@]}" version

# --- images (no registry: built here and imported) ---------------------------------------------------
if ! has_image "$PAUSE_IMAGE"; then
  log "building and importing $PAUSE_IMAGE"
  tmp="$(mktemp -d)"
  gcc -static -Os -o "$tmp/pause" scripts/kube/pause.c && strip "$tmp/pause"
  python3 scripts/kube/oci-archive.py "$tmp/pause.tar" "$PAUSE_IMAGE" /pause "$tmp/pause:/pause"
  "${CTR[@]}" images import "$tmp/pause.tar" >/dev/null
  rm -rf "$tmp"
fi
# The sandbox images come from podman's store (scripts/setup.sh builds them there); each is imported
# again only when podman's image changed (its ID is kept beside).
import_image() { # name as podman knows it
  local name=$1 ref want_id idfile
  # containerd names an image as its registry would: a bare name is docker.io/library's.
  case "${name%%/*}" in
    *.*|*:*|localhost) [[ "$name" == */* ]] && ref="$name" || ref="docker.io/library/$name" ;;
    *) ref="docker.io/library/$name" ;;
  esac
  want_id="$(podman image inspect --format '{{.Id}}' "$name" 2>/dev/null)" ||
    die "podman has no image $name: run \`bash scripts/setup.sh\` (it builds the sandbox images), or set KUBE_UP_SANDBOX_IMAGES to images podman has"
  idfile="$STATE/image-$(echo "$ref" | tr '/:' '__').id"
  if [ "$(cat "$idfile" 2>/dev/null)" != "$want_id" ] || ! has_image "$ref"; then
    log "importing $name into the cluster's containerd as $ref"
    local tmp; tmp="$(mktemp -d)"
    podman save -q --format oci-archive -o "$tmp/image.tar" "$name" >/dev/null
    "${CTR[@]}" images import --index-name "$ref" "$tmp/image.tar" >/dev/null
    rm -rf "$tmp"
    echo "$want_id" > "$idfile"
  fi
}
for image in "${SANDBOX_IMAGES[@]}"; do import_image "$image"; done

# --- network ------------------------------------------------------------------------------------------
# The bridge plugin with no routes beyond the pods' own subnet: a pod reaches other pods and the node's
# bridge address, nothing else; NetworkPolicy (enforced by kube-network-policies below) narrows that.
cat > "$STATE/cni/net.d/10-mcp-code-exec.conflist" <<JSON
{
  "cniVersion": "1.0.0",
  "name": "mcp-code-exec",
  "plugins": [
    {
      "type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": false, "hairpinMode": true,
      "ipam": { "type": "host-local", "ranges": [[{ "subnet": "$POD_SUBNET", "gateway": "$BRIDGE_IP" }]], "dataDir": "$STATE/cni/ipam" }
    }
  ]
}
JSON

# --- kubelet ------------------------------------------------------------------------------------------
cat > "$STATE/kubelet.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $BRIDGE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $PKI/ca.crt}
authorization: {mode: AlwaysAllow}
tlsCertFile: $PKI/kubelet.crt
tlsPrivateKeyFile: $PKI/kubelet.key
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://$CONTAINERD_SOCK
failSwapOn: false
resolvConf: /etc/resolv.conf
clusterDomain: cluster.local
# Our images are imported, not pulled: never collect them.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 200Mi, nodefs.available: 2Gi, imagefs.available: 2Gi}
# The sandbox protocol's frames pass through the container's stdout, which CRI also writes to the
# pod's log on the node: keep little of it.
containerLogMaxSize: 1Mi
containerLogMaxFiles: 2
serializeImagePulls: false
maxPods: 110
# Kubernetes has no per-pod pids field: the node's limit is every sandbox's (MCP_BRIDGE_PIDS elsewhere).
podPidsLimit: 256
YAML
start kubelet "$BIN/kubelet" --config "$STATE/kubelet.yaml" --kubeconfig "$STATE/kubelet.kubeconfig" \
  --hostname-override "$NODE" --node-ip "$BRIDGE_IP" --root-dir "$STATE/kubelet"
node_ready() {
  [ "$("${KUBECTL[@]}" get node "$NODE" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]
}
wait_for "node $NODE" 180 node_ready

# --- cluster objects ------------------------------------------------------------------------------------
"${KUBECTL[@]}" apply -f - >/dev/null <<YAML
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: gvisor}
handler: runsc
YAML
# The sandbox's seccomp profiles, where the kubelet finds Localhost profiles (MCP_BRIDGE_KUBE_SECCOMP).
bun scripts/kube/seccomp-profiles.ts "$STATE/kubelet/seccomp/mcp-code-exec"

# --- agent-sandbox: CRDs (from the Go module the controller was built from) and its controller -------
# Served as v1beta1 only: the CRDs also serve v1alpha1 through a conversion webhook, which would need
# the controller's webhook server, its certificates and a Service routed to it (no kube-proxy here).
AS_CRDS="$(go env GOMODCACHE)/sigs.k8s.io/agent-sandbox@${AGENT_SANDBOX_VERSION:-v0.5.6}/k8s/crds"
for crd in "$AS_CRDS"/*.yaml; do
  "${KUBECTL[@]}" create --dry-run=client -o json -f "$crd" | python3 -c '
import json, sys
crd = json.load(sys.stdin)
crd["spec"]["versions"] = [v for v in crd["spec"]["versions"] if v["name"] == "v1beta1"]
crd["spec"].pop("conversion", None)
json.dump(crd, sys.stdout)
' | "${KUBECTL[@]}" apply --server-side --force-conflicts -f - >/dev/null
done
for crd in sandboxes.agents.x-k8s.io sandboxclaims.extensions.agents.x-k8s.io sandboxtemplates.extensions.agents.x-k8s.io sandboxwarmpools.extensions.agents.x-k8s.io; do
  "${KUBECTL[@]}" wait --for condition=Established --timeout 60s "crd/$crd" >/dev/null
done
start agent-sandbox env KUBECONFIG="$KUBECONFIG_ADMIN" "$BIN/agent-sandbox-controller" --extensions \
  --enable-webhook=false --manage-webhook-certs=false --leader-elect=false \
  --metrics-bind-address "127.0.0.1:$AGENT_SANDBOX_METRICS_PORT" --health-probe-bind-address "127.0.0.1:$AGENT_SANDBOX_PROBE_PORT"
wait_for agent-sandbox 60 curl -sf "http://127.0.0.1:$AGENT_SANDBOX_PROBE_PORT/readyz"

# --- NetworkPolicy enforcement: kube-network-policies (nftables + nfqueue) ------------------------
# It reads only in-cluster credentials (/var/run/secrets/kubernetes.io/serviceaccount): it runs in a
# mount namespace of its own whose /run is a private tmpfs holding its service account's token, so
# nothing on the host changes.
"${KUBECTL[@]}" apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: ServiceAccount
metadata: {name: kube-network-policies, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: kube-network-policies}
rules:
- apiGroups: [""]
  resources: [pods, namespaces, nodes]
  verbs: [list, watch, get]
- apiGroups: [networking.k8s.io]
  resources: [networkpolicies]
  verbs: [list, watch, get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: kube-network-policies}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: kube-network-policies}
subjects:
- {kind: ServiceAccount, name: kube-network-policies, namespace: kube-system}
YAML
if ! running network-policies; then
  token="$("${KUBECTL[@]}" -n kube-system create token kube-network-policies --duration 8760h)"
  printf '%s' "$token" > "$STATE/network-policies.token"
  chmod 0600 "$STATE/network-policies.token"
fi
start network-policies unshare --mount --propagation private bash -c '
  set -e
  mount -t tmpfs -o mode=0755 tmpfs /run
  mkdir -p /run/secrets/kubernetes.io/serviceaccount
  cp "$1" /run/secrets/kubernetes.io/serviceaccount/token
  cp "$2" /run/secrets/kubernetes.io/serviceaccount/ca.crt
  echo kube-system > /run/secrets/kubernetes.io/serviceaccount/namespace
  exec env KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT="$3" "$4" \
    --hostname-override "$5" --disable-nri --metrics-bind-address "127.0.0.1:$6" --v 2
' _ "$STATE/network-policies.token" "$PKI/ca.crt" "$API_PORT" "$BIN/kube-network-policies" "$NODE" "$NETWORK_POLICIES_METRICS_PORT"

# --- namespaces the tests and deploy/ use ----------------------------------------------------------
for ns in mcp-code-exec mcp-code-exec-test; do
  "${KUBECTL[@]}" create namespace "$ns" --dry-run=client -o yaml | "${KUBECTL[@]}" apply -f - >/dev/null
done

# --- deploy/: the bridge as a team runs it, two replicas, with the test cluster's overlay ----------
# Its image is the compiled binary and the C libraries it links, nothing else (no shell, no Python).
BRIDGE_REF=docker.io/library/mcp-code-exec-bridge:latest
if [ ! -x dist/mcp-code-exec ] || [ -n "$(find src adapters entrypoint package.json -newer dist/mcp-code-exec -print -quit)" ]; then
  log "building dist/mcp-code-exec for the bridge image"
  bun run build >/dev/null
fi
bridge_sum="$(sha256sum dist/mcp-code-exec | cut -c1-16)"
if [ "$(cat "$STATE/bridge-image.sum" 2>/dev/null)" != "$bridge_sum" ] || ! has_image "$BRIDGE_REF"; then
  log "importing the bridge image ($BRIDGE_REF)"
  tmp="$(mktemp -d)"
  files=("dist/mcp-code-exec:/usr/local/bin/mcp-code-exec")
  for lib in $(ldd dist/mcp-code-exec | grep -o '/[^ ]*'); do files+=("$(readlink -f "$lib"):$lib"); done
  python3 scripts/kube/oci-archive.py "$tmp/bridge.tar" "$BRIDGE_REF" /usr/local/bin/mcp-code-exec "${files[@]}"
  "${CTR[@]}" images import "$tmp/bridge.tar" >/dev/null
  rm -rf "$tmp"
  echo "$bridge_sum" > "$STATE/bridge-image.sum"
  # A new image: the replicas restart on it below.
  "${KUBECTL[@]}" -n mcp-code-exec delete pods -l app.kubernetes.io/name=mcp-code-exec-bridge --wait=false >/dev/null 2>&1 || true
fi
# The tests' sign-in to the deployed bridge (MCP_BRIDGE_HTTP_TOKENS), made once.
[ -f "$STATE/bridge-token" ] || (umask 077; head -c 24 /dev/urandom | base64 | tr -d '/+=' > "$STATE/bridge-token")
"${KUBECTL[@]}" -n mcp-code-exec create secret generic mcp-code-exec-tokens \
  --from-literal=tokens="ci=$(cat "$STATE/bridge-token")" --dry-run=client -o yaml | "${KUBECTL[@]}" apply -f - >/dev/null
"${KUBECTL[@]}" apply -k scripts/kube/test-cluster >/dev/null
"${KUBECTL[@]}" -n mcp-code-exec wait --for condition=Available --timeout 300s deployment/mcp-code-exec-bridge >/dev/null \
  || die "the bridge Deployment did not become ready: kubectl --kubeconfig $KUBECONFIG_ADMIN -n mcp-code-exec describe pods"

log "up: kubectl --kubeconfig $KUBECONFIG_ADMIN get nodes"
echo "$KUBECONFIG_ADMIN"
