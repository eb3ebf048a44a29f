# syntax=docker/dockerfile:1
#
# iceguard production image: the server, and the `iceguard` CLI for CI jobs.
#   docker build -t iceguard .
#   docker run -p 8181:8181 -e ICEGUARD_UPSTREAM_URL=http://catalog:8181 iceguard
#   docker run --rm -v "$PWD:/work" iceguard iceguard check --table db.orders \
#     --request changes/orders.json --url https://iceguard.example.com
# Configuration is by environment only (see docs/deployment.md). Node 24 is an LTS line supported
# until April 2028; docs/deployment.md explains the choice.

ARG NODE_IMAGE=node:24-slim

# ---- build: full dependency tree, compile, then drop dev dependencies ----
FROM ${NODE_IMAGE} AS build
WORKDIR /app

# Manifests first so the dependency layer is cached until they change. No lifecycle scripts yet:
# `prepare` builds, and the sources are not here. The one runtime dependency with an install
# script, better-sqlite3 (the decision log), then fetches or builds its native binding.
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund \
 && npm rebuild better-sqlite3 --no-audit --no-fund

COPY . .
# tsc emits only JavaScript (the build marks the CLI executable): copy runtime data it does not
# emit (OpenAPI documents, example policies, and docs/rules.md, which GET /rules/{RULE_ID} renders).
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund \
 && mkdir -p /out/docs \
 && cp -R package.json dist node_modules /out/ \
 && cp docs/rules.md /out/docs/ \
 && for d in openapi examples; do if [ -d "$d" ]; then cp -R "$d" /out/; fi; done

# ---- runtime: only what runs ----
FROM ${NODE_IMAGE} AS runtime

ENV NODE_ENV=production \
    ICEGUARD_HOST=0.0.0.0 \
    ICEGUARD_PORT=8181 \
    ICEGUARD_WAREHOUSE=/var/lib/iceguard/warehouse \
    ICEGUARD_STATE_DIR=/var/lib/iceguard/state

WORKDIR /app
# Application files stay owned by root: the service user can read them, not change them.
COPY --from=build /out/ ./

# Mount points:
#   /etc/iceguard/policy.yaml    policy file (read-only bind mount or ConfigMap);
#                                select it with ICEGUARD_POLICY=/etc/iceguard/policy.yaml
#   /var/lib/iceguard/warehouse  embedded development catalog data, used only when
#                                ICEGUARD_UPSTREAM_URL is not set
#   /var/lib/iceguard/state      the decision log (SQLite), unless ICEGUARD_DATABASE_URL is set
#   /work                        the working directory: a CI job mounts its checkout here, so
#                                the CLI's relative paths are the job's
# The CLI is on PATH as `iceguard` (package.json's bin, executable since the build).
RUN mkdir -p /etc/iceguard /var/lib/iceguard/warehouse /var/lib/iceguard/state /work \
 && chown node:node /var/lib/iceguard/warehouse /var/lib/iceguard/state \
 && ln -s /app/dist/src/cli/main.js /usr/local/bin/iceguard
VOLUME ["/var/lib/iceguard/warehouse", "/var/lib/iceguard/state"]
WORKDIR /work

# The node image ships an unprivileged "node" user (uid 1000, gid 1000).
USER node

EXPOSE 8181

# The slim image has no curl or wget; Node's global fetch does the probe.
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.ICEGUARD_PORT || 8181) + '/healthz').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

CMD ["node", "/app/dist/src/main/server.js"]
