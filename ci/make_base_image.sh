#!/usr/bin/env bash
# Build a local Debian Python stand-in for the python:3.11-slim base image.
#
# No image registry is reachable from these machines, so the container smoke
# check (ci/container_smoke.sh) builds the Dockerfile FROM a base image made
# here with mmdebstrap: Debian minbase + python3 + python3-venv + ca-certificates.
# mmdebstrap is fed the machine's OWN apt sources (/etc/apt/sources.list and
# /etc/apt/sources.list.d/*.list|*.sources), so no mirror host is written in
# this repository.
#
# Usage: ci/make_base_image.sh [IMAGE]      (default localhost/roofline-base:bookworm)
# Env:   SUITE (default bookworm), FORCE=1 to rebuild an existing image.
# Needs: root, mmdebstrap, podman, python3 (host).
set -euo pipefail

IMAGE="${1:-${ROOFLINE_BASE_IMAGE:-localhost/roofline-base:bookworm}}"
SUITE="${SUITE:-bookworm}"

log() { printf '[make_base_image] %s\n' "$*"; }

if [[ "${FORCE:-0}" != "1" ]] && podman image exists "$IMAGE"; then
    log "base image $IMAGE already exists; skipping (FORCE=1 rebuilds it)"
    exit 0
fi

for tool in mmdebstrap podman python3; do
    command -v "$tool" >/dev/null || { log "missing tool: $tool"; exit 1; }
done

workdir="$(mktemp -d /tmp/roofline-base.XXXXXX)"
trap 'rm -rf "$workdir"' EXIT

# Turn the machine's apt configuration into one-line sources for $SUITE
# (deb entries whose suite is $SUITE or $SUITE-<something>); third-party
# repositories and other releases are dropped.
python3 - "$SUITE" > "$workdir/sources.list" <<'PY'
import glob, os, re, sys

suite = sys.argv[1]
suite_re = re.compile(r"^%s(-[a-z]+)?$" % re.escape(suite))
files = []
if os.path.isfile("/etc/apt/sources.list"):
    files.append("/etc/apt/sources.list")
files += sorted(glob.glob("/etc/apt/sources.list.d/*.list"))
files += sorted(glob.glob("/etc/apt/sources.list.d/*.sources"))

out = []

def emit(uri, suites, comps, signed_by):
    opts = ""
    if signed_by and os.path.isabs(signed_by) and os.path.exists(signed_by):
        opts = "[signed-by=%s] " % signed_by
    for s in suites:
        if suite_re.match(s):
            line = "deb %s%s %s %s" % (opts, uri, s, " ".join(comps))
            if line not in out:
                out.append(line)

for path in files:
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    if path.endswith(".sources"):
        for stanza in re.split(r"\n\s*\n", text):
            fields, key = {}, None
            for raw in stanza.splitlines():
                if raw.startswith("#") or not raw.strip():
                    continue
                if raw[0] in " \t" and key:
                    fields[key] += " " + raw.strip()
                    continue
                key, _, value = raw.partition(":")
                key = key.strip().lower()
                fields[key] = value.strip()
            if fields.get("enabled", "yes").lower() == "no":
                continue
            if "deb" not in fields.get("types", "").split():
                continue
            sb = fields.get("signed-by", "")
            sb = sb if "\n" not in sb and " " not in sb.strip() else ""
            for uri in fields.get("uris", "").split():
                emit(uri, fields.get("suites", "").split(),
                     fields.get("components", "main").split(), sb)
    else:
        for raw in text.splitlines():
            line = raw.split("#", 1)[0].strip()
            if not line.startswith("deb "):
                continue
            signed_by = ""
            m = re.match(r"deb\s+\[([^\]]*)\]\s+(.*)", line)
            if m:
                for opt in m.group(1).split():
                    k, _, v = opt.partition("=")
                    if k == "signed-by":
                        signed_by = v
                rest = m.group(2).split()
            else:
                rest = line.split()[1:]
            if len(rest) >= 2:
                emit(rest[0], [rest[1]], rest[2:] or ["main"], signed_by)

if not out:
    sys.exit("no deb sources for suite %r in this machine's apt configuration" % suite)
print("\n".join(out))
PY

log "using $(wc -l < "$workdir/sources.list") apt source line(s) from this machine's apt configuration for $SUITE"

start=$(date +%s)
log "mmdebstrap --variant=minbase $SUITE (python3, python3-venv, ca-certificates)"
mmdebstrap --quiet --variant=minbase \
    --include=python3,python3-venv,ca-certificates \
    "$SUITE" "$workdir/base.tar" - < "$workdir/sources.list"

log "podman import -> $IMAGE"
podman import \
    --change 'ENV=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV=LANG=C.UTF-8' \
    --change 'CMD=["python3"]' \
    --quiet "$workdir/base.tar" "$IMAGE" >/dev/null
log "base image $IMAGE ready in $(( $(date +%s) - start )) s ($(podman image inspect --format '{{.Size}}' "$IMAGE") bytes)"
