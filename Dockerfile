# prdigest as a container: `prdigest serve` in Socket Mode (no public URL needed), the store on the /data volume,
# /healthz and /readyz on port 8080. See docs/operations.md.
#   docker build -t prdigest .
#   docker run -d -v prdigest-data:/data -e SLACK_BOT_TOKEN=xoxb-… -e SLACK_APP_TOKEN=xapp-… prdigest
FROM python:3.12-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PATH=/opt/prdigest/bin:$PATH \
    PRDIGEST_DB=/data/prdigest.db \
    PRDIGEST_HEALTH_PORT=8080

# The install steps are one script, which tests/test_container.py runs too.
COPY pyproject.toml README.md /src/
COPY bot /src/bot
COPY store /src/store
COPY deploy/install.sh /src/deploy/install.sh
RUN sh /src/deploy/install.sh /src /opt/prdigest && rm -rf /src

# prdigest runs as a user of its own, which owns only the store's folder.
RUN useradd --system --user-group --uid 10001 --home-dir /data --no-create-home --shell /usr/sbin/nologin prdigest \
    && mkdir -p /data && chown prdigest:prdigest /data && chmod 0700 /data
USER prdigest
WORKDIR /data
VOLUME /data
# 3000 for `serve --http 3000` (HTTP mode), 8080 for the health checks in either mode.
EXPOSE 3000 8080

# Liveness, in Socket Mode and HTTP mode alike: /healthz on PRDIGEST_HEALTH_PORT, which `serve` serves in both.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ['PRDIGEST_HEALTH_PORT'] + '/healthz', timeout=4)"]

# 0.0.0.0: inside the container, the host's port mapping (or the reverse proxy) is what faces the network.
CMD ["prdigest", "serve", "--host", "0.0.0.0"]
