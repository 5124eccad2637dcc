#!/usr/bin/env bash
# Container smoke check for Roofline Explorer (no Docker engine needed: podman + runc).
#
#  1. makes the local Debian Python base image (ci/make_base_image.sh; skipped if present),
#  2. builds the Dockerfile with podman FROM that base (--build-arg BASE=...), and checks that
#     the image's CMD hides error details from users (client.showErrorDetails none),
#  3. starts the image with deploy/team-catalog.example.toml mounted read-only and
#     ROOFLINE_CATALOG pointing at it, on a free loopback port, read-only root filesystem,
#  4. waits for the image's HEALTHCHECK (podman healthcheck run) and /_stcore/health,
#  5. runs ci/smoke_browser.py: a deep link to /solve as the first request must show the
#     team accelerator ("Team Chip X1") and a "Latency" metric,
#  6. prints the image size, build time and seconds from start to healthy,
# and ALWAYS stops and removes the container it started (trap on EXIT), pass or fail.
#
# Usage: bash ci/container_smoke.sh         (run as root, from anywhere)
# Env (all optional):
#   ROOFLINE_BASE_IMAGE   base image to build FROM (default localhost/roofline-base:bookworm)
#   ROOFLINE_IMAGE        tag of the built image  (default localhost/roofline-explorer:smoke)
#   SMOKE_PYTHON          python with playwright   (default: .venv/bin/python, else python3)
#   SMOKE_BASE_URL_PATH   serve under this sub-path (STREAMLIT_SERVER_BASE_URL_PATH), e.g. roofline
#   SMOKE_SCREENSHOT      PNG path for the page    (default /tmp/roofline-container-smoke.png)
#   SMOKE_SUMMARY         also append the one-line result to this file
#   SMOKE_HEALTH_TIMEOUT  seconds to wait for healthy (default 120)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BASE_IMAGE="${ROOFLINE_BASE_IMAGE:-localhost/roofline-base:bookworm}"
IMAGE="${ROOFLINE_IMAGE:-localhost/roofline-explorer:smoke}"
CATALOG="$ROOT/deploy/team-catalog.example.toml"
BASE_PATH="${SMOKE_BASE_URL_PATH:-}"
BASE_PATH="${BASE_PATH#/}"; BASE_PATH="${BASE_PATH%/}"
SCREENSHOT="${SMOKE_SCREENSHOT:-/tmp/roofline-container-smoke.png}"
HEALTH_TIMEOUT="${SMOKE_HEALTH_TIMEOUT:-120}"
NAME="roofline-smoke-$$-$(date +%s)"
RUN_OPTS=(--runtime runc)          # podman's default runtime fails on these machines' cgroups
STARTED=0

log()  { printf '[container_smoke] %s\n' "$*"; }
fail() { printf '[container_smoke] FAIL: %s\n' "$*" >&2; exit 1; }
now()  { date +%s.%N; }
secs() { python3 -c 'import sys; print(f"{float(sys.argv[2]) - float(sys.argv[1]):.1f}")' "$1" "$2"; }

cleanup() {
    local rc=$?
    if [[ "$STARTED" == 1 ]]; then
        if [[ $rc -ne 0 ]]; then
            log "container logs (last 60 lines):"
            podman logs --tail 60 "$NAME" 2>&1 | sed 's/^/    /' || true
        fi
        log "stopping and removing container $NAME"
        podman "${RUN_OPTS[@]}" stop --time 5 "$NAME" >/dev/null 2>&1 || true
        podman "${RUN_OPTS[@]}" rm --force "$NAME" >/dev/null 2>&1 || true
        if podman container exists "$NAME" 2>/dev/null; then
            log "WARNING: container $NAME still exists"; rc=1
        fi
    fi
    if [[ $rc -eq 0 ]]; then log "PASSED"; else log "FAILED (exit $rc)"; fi
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for tool in podman runc python3; do
    command -v "$tool" >/dev/null || fail "missing tool: $tool"
done
[[ -x /usr/bin/chromium ]] || fail "missing /usr/bin/chromium (apt-get install chromium)"
[[ -f "$CATALOG" ]] || fail "missing $CATALOG"

if [[ -n "${SMOKE_PYTHON:-}" ]]; then PY="$SMOKE_PYTHON"
elif [[ -x "$ROOT/.venv/bin/python" ]]; then PY="$ROOT/.venv/bin/python"
else PY="python3"; fi
"$PY" -c 'import playwright' 2>/dev/null || fail "$PY cannot import playwright (set SMOKE_PYTHON)"

# 1. Base image ----------------------------------------------------------------------------
log "step 1/5: base image $BASE_IMAGE"
bash "$ROOT/ci/make_base_image.sh" "$BASE_IMAGE"

# 2. Build ---------------------------------------------------------------------------------
# pip inside the build reaches the package index the way this machine's pip does: the host's
# CA bundle and pip configuration (which may name a constraints file under /etc/xdg/pip) are
# mounted read-only for the RUN steps only; they are not part of the image.
BUILD_MOUNTS=()
for f in /etc/ssl/certs/ca-certificates.crt /etc/pip.conf /etc/xdg/pip; do
    [[ -e "$f" ]] && BUILD_MOUNTS+=(--volume "$f:$f:ro")
done
old_id="$(podman image inspect --format '{{.Id}}' "$IMAGE" 2>/dev/null || true)"
log "step 2/5: podman build -> $IMAGE (BASE=$BASE_IMAGE)"
t_build=$(now)
timeout 1200 podman build \
    --isolation chroot --network host --format docker --pull=never \
    "${BUILD_MOUNTS[@]}" \
    --build-arg "BASE=$BASE_IMAGE" \
    --tag "$IMAGE" \
    --file "$ROOT/Dockerfile" "$ROOT" 2>&1 | sed 's/^/    /'
build_secs=$(secs "$t_build" "$(now)")
new_id="$(podman image inspect --format '{{.Id}}' "$IMAGE")"
if [[ -n "$old_id" && "$old_id" != "$new_id" ]]; then
    podman rmi "$old_id" >/dev/null 2>&1 || true     # drop our own superseded image
fi
size_bytes="$(podman image inspect --format '{{.Size}}' "$IMAGE")"
size_mb=$(( size_bytes / 1000000 ))
log "built in ${build_secs} s; image size ${size_mb} MB"
[[ -n "$(podman image inspect --format '{{.Config.Healthcheck}}' "$IMAGE" 2>/dev/null | grep -v '^<nil>$' || true)" ]] \
    || fail "the image has no HEALTHCHECK (was it built with --format docker?)"
# Users of the container see no traceback or server path (tests/test_browser_errors.py shows
# what the flag does in a browser; here: the built image carries it).
podman image inspect --format '{{json .Config.Cmd}}' "$IMAGE" | grep -q -- '--client.showErrorDetails=none' \
    || fail "the image's CMD does not hide error details from users (--client.showErrorDetails=none)"
log "the image's CMD hides error details from users"

# 3. Run -------------------------------------------------------------------------------------
PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
URL="http://127.0.0.1:$PORT${BASE_PATH:+/$BASE_PATH}"
log "step 3/5: podman run $NAME on 127.0.0.1:$PORT (catalogue mounted read-only at /catalog/team.toml)"
run_err="$(mktemp)"
t_start=$(now)
STARTED=1
# --health-interval=disable: no systemd here to schedule the HEALTHCHECK; this script runs it
# itself with `podman healthcheck run` (the image's HEALTHCHECK command is unchanged).
podman "${RUN_OPTS[@]}" run -d --name "$NAME" \
    --ulimit nofile=20000:20000 --ulimit nproc=4096:4096 \
    --read-only \
    --health-interval=disable \
    -p "127.0.0.1:$PORT:8501" \
    --volume "$CATALOG:/catalog/team.toml:ro" \
    --env ROOFLINE_CATALOG=/catalog/team.toml \
    --env "STREAMLIT_SERVER_BASE_URL_PATH=$BASE_PATH" \
    "$IMAGE" >/dev/null 2>"$run_err" || { cat "$run_err" >&2; fail "podman run failed"; }
grep -v 'unable to get systemd connection' "$run_err" >&2 || true   # no systemd here: harmless
rm -f "$run_err"

# 4. Wait for healthy ------------------------------------------------------------------------
log "step 4/5: waiting for the HEALTHCHECK and $URL/_stcore/health (max ${HEALTH_TIMEOUT} s)"
healthy=0
while :; do
    running="$(podman inspect --format '{{.State.Running}}' "$NAME" 2>/dev/null || echo false)"
    [[ "$running" == true ]] || fail "container exited before becoming healthy"
    if podman healthcheck run "$NAME" >/dev/null 2>&1 \
        && python3 - "$URL/_stcore/health" <<'PY' 2>/dev/null
import sys, urllib.request
sys.exit(0 if urllib.request.urlopen(sys.argv[1], timeout=3).read().strip() == b"ok" else 1)
PY
    then healthy=1; break; fi
    [[ "$(secs "$t_start" "$(now)" | cut -d. -f1)" -lt "$HEALTH_TIMEOUT" ]] || break
    sleep 0.5
done
healthy_secs=$(secs "$t_start" "$(now)")
[[ "$healthy" == 1 ]] || fail "not healthy after ${healthy_secs} s"
log "healthy ${healthy_secs} s after start (image HEALTHCHECK passed, host port answers ok)"
uid="$(podman exec "$NAME" python -c 'import os; print(os.getuid())')"
[[ "$uid" != 0 ]] || fail "the app runs as root"
log "app runs as uid $uid"

# 5. Browser -----------------------------------------------------------------------------------
log "step 5/5: headless Chromium deep link on a fresh server"
"$PY" "$ROOT/ci/smoke_browser.py" --url "$URL" --screenshot "$SCREENSHOT" \
    || fail "browser check failed"

summary="container smoke: image ${size_mb} MB, healthy ${healthy_secs} s after start, build ${build_secs} s"
log "$summary"
[[ -z "${SMOKE_SUMMARY:-}" ]] || echo "$summary" >> "$SMOKE_SUMMARY"
