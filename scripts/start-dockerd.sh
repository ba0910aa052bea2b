#!/usr/bin/env bash
# Start dockerd in the background the way this kind of host needs it: no docker0 bridge, no iptables
# rules, no forwarding or masquerading. gVisor is registered as the runtime "runsc".
# Returns at once when the daemon already answers.
set -euo pipefail
log() { printf '[dockerd] %s\n' "$*" >&2; }
DOCKERD=$(command -v dockerd || echo /usr/sbin/dockerd)
RUNSC=$(command -v runsc || echo /usr/bin/runsc)
LOG=/var/log/mcp-code-exec-dockerd.log
CONF=/etc/mcp-code-exec/dockerd.json
mkdir -p "$(dirname "$CONF")"
# runsc gets --network=none (the sandbox has no network, and runsc's own network setup fails on some
# hosts: "cannot run with network enabled in root network namespace") and --oci-seccomp (apply the
# bridge's seccomp profile inside gVisor too).
if [ -x "$RUNSC" ]; then
  want=$(printf '{"runtimes": {"runsc": {"path": "%s", "runtimeArgs": ["--network=none", "--oci-seccomp"]}}}' "$RUNSC")
else
  want='{}'
fi
changed=0
[ "$(cat "$CONF" 2>/dev/null)" = "$want" ] || { printf '%s\n' "$want" > "$CONF"; changed=1; }
if docker info >/dev/null 2>&1; then
  # runtimes are reloadable: a running daemon picks up a changed file on SIGHUP.
  if [ "$changed" = 1 ] && pid=$(pidof dockerd); then log "reloading runtimes"; kill -HUP $pid; sleep 1; fi
  exit 0
fi
log "starting $DOCKERD (log: $LOG)"
args=(--config-file "$CONF" --bridge=none --iptables=false --ip6tables=false --ip-forward=false --ip-masq=false
      -H unix:///var/run/docker.sock --data-root /var/lib/docker --exec-root /var/run/docker)
# dockerd 20.10 has no --ip6tables flag; drop it when the daemon rejects it.
"$DOCKERD" --help 2>&1 | grep -q -- '--ip6tables' || args=("${args[@]/--ip6tables=false}")
args=($(printf '%s\n' "${args[@]}" | grep -v '^$'))
# A restart after a crash first ends the containers the old daemon left running (their stop grace).
# A daemon that exits while starting is started once more: dockerd gives up on its own containerd when
# that does not answer in time, which a restart right after a crash under load has met.
for attempt in 1 2; do
  setsid nohup "$DOCKERD" "${args[@]}" >"$LOG" 2>&1 < /dev/null &
  pid=$!
  for _ in $(seq 1 180); do
    if docker info >/dev/null 2>&1; then log "up"; exit 0; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  if kill -0 "$pid" 2>/dev/null; then
    log "dockerd did not answer within 90 s; last lines of $LOG:"; tail -20 "$LOG" >&2; exit 1
  fi
  log "dockerd exited while starting (attempt $attempt); last lines of $LOG:"; tail -5 "$LOG" >&2
done
exit 1
