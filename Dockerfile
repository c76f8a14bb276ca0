# syntax=docker/dockerfile:1
# rostersync as a container image: the compiled CLI, production dependencies only, no compiler,
# a non-root user, and the state and reports on volumes.
#
#   docker build -t rostersync .
#   docker run --rm -v rostersync-state:/state -v "$PWD/reports:/reports" -v "$PWD:/work:ro" \
#     -e SERVICE_BASE_URL -e SERVICE_API_KEY rostersync sync pipelines/reviewers.yaml
#
# NODE_IMAGE can point at a mirror or a locally built base with the same layout.
ARG NODE_IMAGE=node:20.20.2-bookworm-slim

# ---- build: dev dependencies, the TypeScript compiler and a C++ toolchain for better-sqlite3
FROM ${NODE_IMAGE} AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY package.json package-lock.json .npmrc ./
# Install without lifecycle scripts (prepare needs the sources, copied below), then build the one
# native module: prebuild-install fetches a binary, or node-gyp compiles it with the toolchain
# against the headers the node image carries in /usr/local/include/node (no header download).
RUN npm ci --ignore-scripts --no-audit --no-fund \
 && npm_config_nodedir=/usr/local npm rebuild better-sqlite3
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
# Then drop what only building needed: dev dependencies, and better-sqlite3's object files, SQLite
# sources, static library and test extension (the module loads build/Release/better_sqlite3.node
# alone). /app's files: 57.7 MB with them, 31.8 MB without (docs/operating-nightly.md, "Container image").
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund \
 && cd node_modules/better-sqlite3 \
 && rm -rf deps src build/deps build/Release/obj build/Release/obj.target build/Release/.deps build/Release/test_extension.node build/Release/sqlite3.a

# ---- runtime: node and the built files only
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    ROSTERSYNC_STATE_DIR=/state \
    ROSTERSYNC_REPORT_DIR=/reports
WORKDIR /app
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY package.json LICENSE README.md CHANGELOG.md ./
COPY bin/rostersync.js bin/start.js ./bin/
# What `rostersync demo` syncs (the same files the npm package carries).
COPY pipelines/demo.yaml pipelines/schema.json ./pipelines/
COPY mappings/reviewers.yaml mappings/schema.json ./mappings/
COPY samples/reviewers.csv ./samples/
COPY docker/entrypoint.sh /usr/local/bin/rostersync-entrypoint
RUN chmod 0755 /usr/local/bin/rostersync-entrypoint /app/bin/rostersync.js \
 && ln -s /app/bin/rostersync.js /usr/local/bin/rostersync \
 && mkdir -p /state /reports /work \
 && chown node:node /state /reports \
 && chmod 0700 /state
# The official node images carry the unprivileged user `node` (uid 1000).
USER node
WORKDIR /work
VOLUME ["/state", "/reports"]
ENTRYPOINT ["rostersync-entrypoint"]
CMD ["--help"]
