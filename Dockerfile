# The SGR-Bench reference agent with Debian's Python and Chromium. The recipe, for podman and Docker (a local CA,
# the results folder owned by uid 1000): docs/container.md. In short:
#   podman build -t sgr-agent .            (or docker build: the same, with its daemon running)
#   mkdir -p results && sudo chown 1000:1000 results
#   podman run --rm -v "$PWD/results:/work/results" sgr-agent bench /configs/offline.yaml
# The Ray worker (and driver) image: the same plus the `ray` extra (target `ray`, see README "Ray"):
#   docker build --target ray -t sgr-agent:ray .
#   docker run --rm --network host --shm-size 2g --entrypoint ray sgr-agent:ray start --address HEAD:6379 --block
# The working directory is /work, so a config's relative `output_dir: results/...` lands in the
# /work/results volume (mount it on the host); task data (a local SGR-Bench copy) can be mounted at /data.
FROM debian:bookworm-slim AS agent

ENV DEBIAN_FRONTEND=noninteractive \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    SGR_CHROMIUM=/usr/bin/chromium \
    PATH=/opt/venv/bin:$PATH

# libatomic1: needed by the Node.js driver bundled in the playwright wheel.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv chromium fonts-liberation ca-certificates libatomic1 \
 && rm -rf /var/lib/apt/lists/*

RUN useradd --create-home --uid 1000 --shell /usr/sbin/nologin sgr \
 && mkdir -p /work/results /data \
 && chown -R sgr:sgr /work /data

# Dependencies first (their own layer: source edits do not reinstall them).
# PIP_CERT: optional CA bundle path for pip (a build-time mount on machines behind a private CA).
ARG PIP_CERT=""
WORKDIR /opt/sgr-agent
COPY pyproject.toml ./
RUN if [ -z "$PIP_CERT" ]; then unset PIP_CERT; fi \
 && python3 -m venv /opt/venv \
 && python3 -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml','rb'))['project']['dependencies']))" \
      > /tmp/requirements.txt \
 && pip install --no-cache-dir -r /tmp/requirements.txt \
 && rm /tmp/requirements.txt

COPY . ./
RUN if [ -z "$PIP_CERT" ]; then unset PIP_CERT; fi \
 && pip install --no-cache-dir --no-deps . \
 && cp -r configs /configs \
 && sgr --help >/dev/null

USER sgr
WORKDIR /work
VOLUME ["/work/results", "/data"]
ENTRYPOINT ["sgr"]
CMD ["--help"]

# Target `ray`: the agent image plus Ray (the versions of the `ray` extra in pyproject.toml).
FROM agent AS ray
ARG PIP_CERT=""
USER root
RUN if [ -z "$PIP_CERT" ]; then unset PIP_CERT; fi \
 && python3 -c "import tomllib; print('\n'.join(tomllib.load(open('/opt/sgr-agent/pyproject.toml','rb'))['project']['optional-dependencies']['ray']))" \
      > /tmp/requirements-ray.txt \
 && pip install --no-cache-dir -r /tmp/requirements-ray.txt \
 && rm /tmp/requirements-ray.txt \
 && ray --version
USER sgr

# The default target (no --target): the agent image without Ray.
FROM agent
