# vmerge in a container: docker build -t vmerge .
#   docker run --rm --user "$(id -u):$(id -g)" -v "$PWD:/data" vmerge a.mov b.mov -o out.mp4
# Build stage: the Swift toolchain makes the Debian package (`make deb`: the release binary with the
# Swift runtime linked in, Depends from the libraries it links). Run stage: Debian 12 slim with that
# package installed by apt, which brings only the runtime libraries (FFmpeg 5.1, libpq,
# libmicrohttpd, libcurl4); no toolchain.
# `make test-image` replays both stages in debootstrap roots of Debian 12 (no Docker engine needed):
# the build stage from the context docker would send (.dockerignore applied: no .git, so `make deb`
# takes its maintainer and date from packaging/debian/changelog), the run stage with the package it
# made, then runs the entry point on the fixtures: keep their lines plain RUN, COPY, ENV, USER,
# WORKDIR, ENTRYPOINT and CMD.
# GitLab CI: clear the entry point (image: {name: ..., entrypoint: [""]}), see README.md, "Install".
ARG SWIFT_IMAGE=swift:6.3.2-bookworm

FROM ${SWIFT_IMAGE} AS build
WORKDIR /src
COPY . .
RUN bash scripts/install-deps.sh --build \
    && make deb DIST=/src/dist \
    && rm -rf /var/lib/apt/lists/*

FROM debian:bookworm-slim
COPY --from=build /src/dist/ /tmp/dist/
# The user first: the package's postinst keeps a vmerge user that exists (uid 10001 here, home /data)
# instead of making its own.
RUN useradd --system --uid 10001 --user-group --home-dir /data --no-create-home vmerge \
    && apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends /tmp/dist/vmerge_*.deb \
    && rm -rf /var/lib/apt/lists/* /tmp/dist \
    && mkdir -p /data && chown vmerge:vmerge /data
# Not root: a watch folder or queue worker has no need of it (docs/operators.md, "Watch: an unattended inbox").
USER vmerge
WORKDIR /data
ENTRYPOINT ["vmerge"]
CMD ["--help"]
