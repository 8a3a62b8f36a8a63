#!/usr/bin/env bash
# Build the image with podman and run the offline benchmark inside it, results on the host.
# Recipe: podman without a Docker engine or registry (see docs/container_image.md).
# Needs: root (run it as root; on a machine without sudo, as the root user itself), and the Debian packages
#   podman runc debootstrap     (apt-get install -y podman runc debootstrap)
# The build's output goes to OUT/build.log (the console shows where, and its tail if the build fails).
#
#   scripts/container_smoke.sh [--mount-certs] [--mount-pip-conf] [--mirror URL] [--out DIR] [--config PATH]
#
#   --mount-certs     give pip in the build the host's CA bundle (machines behind a private CA)
#   --mount-pip-conf  mount the host's /etc/pip.conf into the build (machines with a package-index mirror)
#   --mirror URL      Debian mirror for the cached base image (default: the one apt uses here)
#   --out DIR         host folder for the results (default: results/container-smoke)
#   --config PATH     config inside the image (default: /configs/offline.yaml)
#   --limit N         run a reproducible sample of N tasks (default: the whole suite)
#   --no-cache        rebuild every layer (what a fresh CI machine pays; the base image stays cached)
set -euo pipefail
cd "$(dirname "$0")/.."

IMAGE=localhost/sgr-agent
BASE=docker.io/library/debian:bookworm-slim
OUT=results/container-smoke
CONFIG=/configs/offline.yaml
MIRROR=""
LIMIT=()
BUILD_OPTS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --mount-certs)  # beside the image's own bundle (apt must still write /etc/ssl/certs), used by pip only
      BUILD_OPTS+=(-v /etc/ssl/certs/ca-certificates.crt:/run/host-ca.crt:ro --build-arg PIP_CERT=/run/host-ca.crt)
      shift ;;
    --mount-pip-conf) BUILD_OPTS+=(-v /etc/pip.conf:/etc/pip.conf:ro); shift ;;
    --mirror) MIRROR="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    --config) CONFIG="$2"; shift 2 ;;
    --limit) LIMIT=(--limit "$2"); shift 2 ;;
    --no-cache) BUILD_OPTS+=(--no-cache); shift ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
done
START=$(date +%s)

# Say what is missing before touching anything (rather than failing on a podman config file that is not there).
if [ "$(id -u)" -ne 0 ]; then
  echo "error: run as root (sudo scripts/container_smoke.sh ...; where there is no sudo, as the root user)" >&2
  exit 2
fi
MISSING=()
for tool in podman runc debootstrap; do
  command -v "$tool" >/dev/null 2>&1 || MISSING+=("$tool")
done
if [ ${#MISSING[@]} -gt 0 ]; then
  echo "error: missing ${MISSING[*]}: install them with  apt-get install -y podman runc debootstrap" >&2
  exit 2
fi
mkdir -p "$OUT"
BUILD_LOG="$(realpath "$OUT")/build.log"

# Podman's default ulimits cannot be set in some sandboxes; switch them off (only if no config exists).
if [ ! -e /etc/containers/containers.conf ]; then
  mkdir -p /etc/containers
  printf '[containers]\ndefault_ulimits = []\n' > /etc/containers/containers.conf
fi

# The base image: built once from Debian's packages with debootstrap, then cached in podman's store.
if ! podman image exists "$BASE"; then
  if [ -z "$MIRROR" ]; then
    MIRROR=$(grep -h '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}' | grep -v security | head -1)
    MIRROR=${MIRROR:-http://deb.debian.org/debian}
  fi
  ROOTFS=$(mktemp -d)
  echo "== building base image from $MIRROR (debootstrap, about a minute)"
  debootstrap --variant=minbase bookworm "$ROOTFS" "$MIRROR" >/dev/null
  tar -C "$ROOTFS" -c . | podman import - localhost/debian:bookworm-slim >/dev/null
  podman tag localhost/debian:bookworm-slim "$BASE"
  rm -rf "$ROOTFS"
fi

echo "== podman build $IMAGE (log: $BUILD_LOG)"
if ! podman build --pull=never --isolation=chroot "${BUILD_OPTS[@]}" -t "$IMAGE" . >"$BUILD_LOG" 2>&1; then
  echo "FAIL: podman build failed; the last lines of $BUILD_LOG:" >&2
  tail -25 "$BUILD_LOG" >&2
  exit 1
fi
echo "   built ($(wc -l <"$BUILD_LOG") log lines)"
BUILT=$(date +%s)

echo "== sgr bench $CONFIG (inside the container; results in $OUT)"
find "$OUT" -mindepth 1 -maxdepth 1 ! -name build.log -exec rm -rf {} +   # keep the build log
chmod 0777 "$OUT"   # the image's non-root user writes here
RUN_NAME=$(basename "$CONFIG" .yaml)
podman --runtime runc --cgroup-manager=cgroupfs run --rm --network=host \
  -v "$(realpath "$OUT"):/work/results" "$IMAGE" bench "$CONFIG" "${LIMIT[@]}"
END=$(date +%s)

SUMMARY=$(find "$OUT" -name summary.md | head -1)
if [ -z "$SUMMARY" ] || [ ! -f "$(dirname "$SUMMARY")/report.html" ] || [ ! -f "$(dirname "$SUMMARY")/manifest.json" ]; then
  echo "FAIL: no summary.md, report.html and manifest.json under $OUT" >&2; exit 1
fi
echo "== summary: $SUMMARY ($RUN_NAME)"
head -20 "$SUMMARY"
echo "== wall time: build $((BUILT-START)) s, run $((END-BUILT)) s, total $((END-START)) s"
