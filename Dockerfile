# The runmyscript image: the page and MCP on port 8080, one container.
#
#   docker build -t runmyscript .        (or podman build; ./quickstart container does both)
#   docker run -p 8080:8080 -v runmyscript:/var/lib/runmyscript runmyscript
#
# A build stage builds with the project's own configure and make and runs
# the unit tests; the runtime stage is Debian 12 slim with only what runs:
# the program, its libraries, Python with venv and pip, nginx and the page.
# The packages a script needs are installed at run time into the volume,
# never baked in. doc/serving.md ("In a container") says how to run it,
# what isolation each way of running it gives, and how to configure it.
# Plain Dockerfile syntax, which Docker and Podman (Buildah) both take.

FROM debian:12-slim AS build
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update -q \
    && apt-get install -y -q --no-install-recommends \
        build-essential autoconf automake libtool pkg-config binutils \
        libfcgi-dev libjson-c-dev libarchive-dev libcurl4-openssl-dev libseccomp-dev libnftables-dev \
        python3 python3-venv libpython3-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# The unit tests run here; the suites that need a jail, nginx or a network
# run on a host (`./quickstart test`) and against the image (tests/container/).
RUN autoreconf -fi \
    && mkdir -p build && cd build \
    && ../configure --prefix=/usr --sysconfdir=/etc --localstatedir=/var \
    && make -j"$(nproc)" \
    && make -j"$(nproc)" check TESTS="tests/unit/test-util tests/unit/test-cfg tests/unit/test-outcome \
        tests/unit/test-result tests/unit/test-http tests/unit/test-stream tests/unit/test-form \
        tests/unit/test-tools tests/unit/test-admit tests/unit/test-fetch tests/unit/test-artifacts" \
    && make install-strip DESTDIR=/out \
    && install -D -m 0755 ../deploy/container/entrypoint /out/usr/bin/runmyscript-entrypoint

FROM debian:12-slim
ARG DEBIAN_FRONTEND=noninteractive
ARG VERSION=dev
LABEL org.opencontainers.image.title="runmyscript" \
      org.opencontainers.image.description="Runs a submitted Python script in a sandbox: MCP over HTTP, a web page, FastCGI" \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.documentation="doc/serving.md"
# libpython3.11: the shared libpython a warm start's zygote loads;
# ca-certificates: the installer's package index over HTTPS.
RUN apt-get update -q \
    && apt-get install -y -q --no-install-recommends \
        libfcgi0ldbl libjson-c5 libarchive13 libcurl4 libseccomp2 libnftables1 \
        python3 python3-venv python3-pip libpython3.11 \
        nginx ca-certificates \
    && rm -rf /var/lib/apt/lists/* /var/log/apt /var/log/dpkg.log /var/cache/debconf/*-old \
        /usr/share/doc/* /usr/share/man/* /etc/nginx/sites-enabled/default
COPY --from=build /out/ /
# shared_proc: in a default container (its /proc masked) runs are in the
# namespaces with the container's /proc, and start warm, rather than in the
# fallback (doc/serving.md, "Isolation in a container").
ENV RUNMYSCRIPT_STATE_DIR=/var/lib/runmyscript \
    RUNMYSCRIPT_REQUIRE_ISOLATION=off \
    RUNMYSCRIPT_SHARED_PROC=on \
    PORT=8080
VOLUME /var/lib/runmyscript
EXPOSE 8080
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["runmyscript-entrypoint", "healthcheck"]
ENTRYPOINT ["runmyscript-entrypoint"]
CMD ["serve"]
