# Roofline Explorer — container image.
#
#   docker build -t roofline-explorer .
#   docker run -d -p 8501:8501 roofline-explorer       # then open http://localhost:8501/
#
# BASE must be a Debian-style image with Python 3.11 and its venv module
# (python:3.11-slim, or the stand-in made by ci/make_base_image.sh: --build-arg BASE=...).
# The default is pinned by digest, so a rebuild gets the same base until someone moves the pin:
# python:3.11-slim as rebuilt on 2026-10-01 (Python 3.11.17, Debian 13 "trixie"), the OCI image
# index digest that `docker buildx imagetools inspect python:3.11.17-slim-trixie` reports (the
# tag python:3.11-slim pointed to the same index then). Every rebuild's digest is listed in
# docker-library/repo-info, repos/python/remote/3.11-slim.md. To move the pin, run
# `docker buildx imagetools inspect python:3.11-slim` and copy its "Digest:" line here.
ARG BASE=python:3.11-slim@sha256:45037981b62b34b44602584fccbc4d884d5f7dc92c7ee86bb38a698a79fe1e51
FROM ${BASE}

# Runtime configuration (all optional; see the README, "Deploy for a team"):
#   ROOFLINE_CATALOG                 ':'-separated paths of extra team catalogue TOML files
#   STREAMLIT_SERVER_ADDRESS         0.0.0.0: every interface inside the container (the CMD
#                                    flag below fixes it; this records it for the pod spec)
#   STREAMLIT_SERVER_PORT            port the server listens on inside the container
#   STREAMLIT_SERVER_BASE_URL_PATH   serve under a sub-path, e.g. "roofline" for /roofline/
ENV ROOFLINE_CATALOG="" \
    STREAMLIT_SERVER_ADDRESS=0.0.0.0 \
    STREAMLIT_SERVER_PORT=8501 \
    STREAMLIT_SERVER_BASE_URL_PATH="" \
    PATH="/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    VIRTUAL_ENV=/opt/venv \
    LANG=C.UTF-8 \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# Unprivileged runtime user (numeric uid/gid so Kubernetes' runAsNonRoot can verify it).
RUN groupadd --system --gid 10001 app \
    && useradd --system --no-log-init --uid 10001 --gid 10001 --home-dir /home/app --create-home app

WORKDIR /app

# Dependencies first, in their own layer: code changes do not reinstall them.
# A venv keeps this working on bases whose system Python is externally managed.
COPY requirements.txt ./
RUN python3 -m venv /opt/venv \
    && pip install --no-cache-dir -r requirements.txt

# Only what the app needs at run time (see also .dockerignore).
COPY app.py ./
COPY pages/ ./pages/
COPY ui/ ./ui/
COPY engine/ ./engine/
COPY data/ ./data/
COPY locales/ ./locales/
COPY .streamlit/ ./.streamlit/

USER 10001:10001

EXPOSE 8501

HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, sys, urllib.request; port = os.environ.get('STREAMLIT_SERVER_PORT') or '8501'; base = os.environ.get('STREAMLIT_SERVER_BASE_URL_PATH', '').strip('/'); url = 'http://127.0.0.1:' + port + '/' + (base + '/' if base else '') + '_stcore/health'; sys.exit(0 if urllib.request.urlopen(url, timeout=4).read().strip() == b'ok' else 1)"]

# Offline-safe settings are repeated as flags so a mounted config cannot turn them off.
# The container listens on ALL interfaces (0.0.0.0), unlike `streamlit run` from the README
# (.streamlit/config.toml: 127.0.0.1): who can reach it is decided where the port is published
# (`docker run -p 127.0.0.1:8501:8501`, the Kubernetes Service).
# Users of the container never see a traceback or a server path: an uncaught error shows
# Streamlit's generic message and goes to the log (client.showErrorDetails "none"; the legacy
# "false" would still show the traceback in Streamlit 1.67). `streamlit run` from a checkout
# keeps the full details for developers (.streamlit/config.toml: "full").
# The port and base URL path are left to the STREAMLIT_SERVER_* variables above.
CMD ["python", "-m", "streamlit", "run", "app.py", \
     "--server.address=0.0.0.0", \
     "--server.headless=true", \
     "--server.runOnSave=false", \
     "--server.fileWatcherType=none", \
     "--server.enableXsrfProtection=true", \
     "--client.showErrorDetails=none", \
     "--browser.gatherUsageStats=false", \
     "--logger.hideWelcomeMessage=true"]
