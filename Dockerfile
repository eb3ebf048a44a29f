# syntax=docker/dockerfile:1
#
# iceguard production image.
#   docker build -t iceguard .
#   docker run -p 8181:8181 -e ICEGUARD_UPSTREAM_URL=http://catalog:8181 iceguard
# Configuration is by environment only (see docs/deployment.md).

ARG NODE_IMAGE=node:20-slim

# ---- build: full dependency tree, compile, then drop dev dependencies ----
FROM ${NODE_IMAGE} AS build
WORKDIR /app

# Manifests first so the dependency layer is cached until they change.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund

COPY . .
# tsc emits only JavaScript: copy runtime data it does not emit (OpenAPI documents,
# example policies) when those folders exist.
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund \
 && mkdir -p /out \
 && cp -R package.json dist node_modules /out/ \
 && for d in openapi examples; do if [ -d "$d" ]; then cp -R "$d" /out/; fi; done

# ---- runtime: only what runs ----
FROM ${NODE_IMAGE} AS runtime

ENV NODE_ENV=production \
    ICEGUARD_HOST=0.0.0.0 \
    ICEGUARD_PORT=8181 \
    ICEGUARD_WAREHOUSE=/var/lib/iceguard/warehouse

WORKDIR /app
# Application files stay owned by root: the service user can read them, not change them.
COPY --from=build /out/ ./

# Mount points:
#   /etc/iceguard/policy.yaml    policy file (read-only bind mount or ConfigMap);
#                                select it with ICEGUARD_POLICY=/etc/iceguard/policy.yaml
#   /var/lib/iceguard/warehouse  embedded development catalog data, used only when
#                                ICEGUARD_UPSTREAM_URL is not set
RUN mkdir -p /etc/iceguard /var/lib/iceguard/warehouse \
 && chown node:node /var/lib/iceguard/warehouse
VOLUME ["/var/lib/iceguard/warehouse"]

# The node image ships an unprivileged "node" user (uid 1000, gid 1000).
USER node

EXPOSE 8181

# node:20-slim has no curl or wget; Node 20's global fetch does the probe.
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.ICEGUARD_PORT || 8181) + '/healthz').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

CMD ["node", "dist/src/server.js"]
