# Status Tracker container image (OCI; Docker, Podman and Buildah build it). See docs/container.md.
#
#   docker build -t status-tracker .
#   docker run -d -p 3000:3000 -v status-tracker-data:/data -v status-tracker-uploads:/uploads \
#     -e API_KEY="$(openssl rand -base64 24)" status-tracker
#
# Stages: `build` compiles src/ into dist/ with esbuild (scripts/build.mjs; dev dependencies, install
# scripts skipped: esbuild's binary comes in its platform package, @esbuild/linux-x64 or -arm64, an
# optional dependency that npm installs whatever --ignore-scripts says, and esbuild finds it there);
# `deps` installs the production dependencies only (`npm ci --omit=dev --workspaces=false`: no
# esbuild, tsx, typescript or emulator) and compiles better-sqlite3 for this Node; the runtime stage
# copies dist/, public/ and that node_modules/ onto a clean base, without compilers, and runs as a
# non-root user. Nothing secret is baked in: the API key comes from the
# environment (API_KEY) or is generated into the /data volume on first start.

# Any Node >= 20.12 image on glibc with apt (Debian or Ubuntu based). Node 24 LTS is what CI tests.
ARG BASE_IMAGE=node:24-bookworm-slim

FROM ${BASE_IMAGE} AS build
WORKDIR /build
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.mjs scripts/ts-files.mjs scripts/
COPY src src
COPY plugins plugins
COPY schemas schemas
RUN npm run build

FROM ${BASE_IMAGE} AS deps
# compilers for better-sqlite3 12, compiled when its prebuilt binary cannot be downloaded (13, used on
# Node >= 22.14, ships its binaries in the package); node-gyp finds Node's headers through npm's
# nodedir setting where the base provides one, and downloads them otherwise
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
# patches/ is applied to node_modules by patch-package in the postinstall script (see patches/README.md)
COPY patches patches
RUN npm ci --omit=dev --workspaces=false --no-audit --no-fund \
 && for d in node_modules/better-sqlite3 node_modules/better-sqlite3-napi; do \
      [ -d "$d" ] || continue; \
      rm -rf "$d/deps" "$d/src" "$d/build/deps" "$d/build/Release/obj" "$d/build/Release/obj.target" \
        "$d/build/Release/.deps" "$d/build/Release/test_extension.node" "$d/build/Release/sqlite3.a"; \
    done \
 && node -e "const m = Number(process.versions.napi) >= 10 ? 'better-sqlite3-napi' : 'better-sqlite3'; require(m)(':memory:').prepare('select 1').get(); console.log(m, 'loads')" \
 && rm -rf "$(npm config get cache)"

FROM ${BASE_IMAGE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data \
    UPLOAD_DIR=/uploads
RUN groupadd --system --gid 10001 statustracker \
 && useradd --system --uid 10001 --gid statustracker --home-dir /app --no-create-home --shell /usr/sbin/nologin statustracker \
 && mkdir -p /data /uploads \
 && chown statustracker:statustracker /data /uploads \
 && chmod 0700 /data /uploads
WORKDIR /app
# the code stays root-owned and read-only for the service; only /data and /uploads are its own
COPY --from=deps /app/node_modules node_modules
COPY --from=build /build/dist dist
COPY package.json ./
COPY public public
COPY scripts/build.mjs scripts/ts-files.mjs scripts/healthcheck.mjs scripts/
USER 10001:10001
VOLUME ["/data", "/uploads"]
EXPOSE 3000
# Docker keeps HEALTHCHECK; Podman and Buildah keep it with --format docker (OCI images have no such field)
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 CMD ["node", "scripts/healthcheck.mjs"]
CMD ["node", "dist/src/server.js"]
