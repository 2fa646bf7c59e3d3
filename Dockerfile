# syntax=docker/dockerfile:1
# The appliance main node. Build: docker build -t appliance .
# Run it with compose.yaml (mosquitto + PostgreSQL/pgvector), see docs/deployment.md.

# --- builder: wheels of the project and of every dependency -------------------------
FROM python:3.11-slim-bookworm AS builder

RUN apt-get update \
    && apt-get install -y --no-install-recommends build-essential cmake \
    && rm -rf /var/lib/apt/lists/*

# Dependencies without a binary wheel are compiled here. llama.cpp (llama-cpp-python)
# would otherwise be tuned to this build machine's CPU and crash with SIGILL on an
# older one: build it for a generic x86-64/arm64 CPU.
ENV CMAKE_ARGS="-DGGML_NATIVE=OFF" \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /src
COPY . .
RUN pip wheel --wheel-dir /wheels ".[node]" \
    && pip wheel --no-deps --wheel-dir /wheels/no-deps pyrnnoise==0.4.5

# --- runtime ------------------------------------------------------------------------
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PATH="/opt/appliance/.venv/bin:${PATH}" \
    APPLIANCE_DATA_DIR=/data

RUN --mount=type=bind,from=builder,source=/wheels,target=/wheels \
    python -m venv /opt/appliance/.venv \
    && /opt/appliance/.venv/bin/pip install --no-index --find-links=/wheels "appliance[node]" \
    && /opt/appliance/.venv/bin/pip install --no-index --no-deps /wheels/no-deps/*.whl

# A fixed uid, so that volume ownership survives a rebuild.
RUN groupadd --system --gid 10001 appliance \
    && useradd --system --uid 10001 --gid appliance --home-dir /data --no-create-home \
        --shell /usr/sbin/nologin appliance \
    && mkdir /data \
    && chown appliance:appliance /data \
    && chmod 0750 /data

# Logs (data/logs/appliance.log), and the embedded PostgreSQL if APPLIANCE_DB__URL is
# unset. Created after /data is owned by appliance, so a new volume starts that way.
VOLUME /data
USER 10001:10001
WORKDIR /data

# No HEALTHCHECK: a live process says nothing about the node. Its health signal is the
# retained availability topic <mqtt.prefix>/status ("online" once connected, "offline"
# as its last will), which Home Assistant already shows as the device's availability.
# The node exits non-zero when it fails (an unreachable database at start, for one;
# an unreachable broker it keeps retrying), so a restart policy (compose: restart:
# unless-stopped) covers crashes.
HEALTHCHECK NONE

ENTRYPOINT ["appliance"]
CMD ["run"]
