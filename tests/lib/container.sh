# container.sh: Podman for the container tests, set up as a fresh Debian 12
# machine needs it. Source it after tap.sh.
#
#   container_setup      skip_all unless Podman can run a container here;
#                        then $PODMAN runs it with this test's configuration
#   container_image      builds the Dockerfile into $IMAGE (localhost/runmyscript:test)
#
# What it does that a user's machine need not: a containers.conf (through
# CONTAINERS_CONF, this test's own) with default_ulimits = [] (Podman's
# defaults can exceed a host's hard limits) and runc as the runtime where
# cgroups are hybrid or v1 (crun refuses them); and, when no image of the
# Dockerfile's base is there, that base made with debootstrap from the
# Debian mirror this host's apt uses and imported under the base's name,
# since no image registry need be reachable. The build then runs with
# --pull=never, and --network host: no NAT rule is left on the host.
# Containers run with --network host, each on a free port of its own.
IMAGE=${IMAGE:-localhost/runmyscript:test}
# The base, made here when missing, is local: Podman finds a short name
# (the Dockerfile's FROM debian:12-slim) under localhost/ first.
BASE_IMAGE=localhost/debian:12-slim
PODMAN="podman"
CONTAINERS_MADE=""

container_setup() {
    command -v podman >/dev/null 2>&1 || skip_all "podman is not installed (./quickstart test installs it)"
    [ "$(id -u)" = 0 ] || skip_all "the container tests run as root (rootful Podman)"
    local conf=$TEST_TMP/containers.conf
    {
        echo "[containers]"
        echo "default_ulimits = []"
        echo "[engine]"
        if [ "$(stat -fc %T /sys/fs/cgroup)" != cgroup2fs ] && command -v runc >/dev/null 2>&1; then
            echo 'runtime = "runc"'
        fi
    } >"$conf"
    export CONTAINERS_CONF=$conf
    # A health check would need systemd's timers: the tests ask /healthz themselves.
    PODMAN="podman"
    $PODMAN info >"$TEST_TMP/podman-info" 2>&1 || skip_all "podman cannot run here: $(tail -1 "$TEST_TMP/podman-info")"
    TABLES_BEFORE=$(nft list tables 2>/dev/null)
    trap container_exit EXIT
}

# The nftables tables netavark makes for a bridge network or a published
# port outlive the containers, and every loopback connection of the host
# would pass through them: the tables that were not there when the test
# began are removed.
firewall_restore() {
    command -v nft >/dev/null 2>&1 || return 0
    local fam name
    nft list tables 2>/dev/null | while read -r _ fam name; do
        printf '%s\n' "$TABLES_BEFORE" | grep -qxF "table $fam $name" || nft delete table "$fam" "$name"
    done
}

# Removes what the test made (by name), then the temporary directory, and
# leaves the host's firewall as it was.
container_exit() {
    local c
    for c in $CONTAINERS_MADE; do
        $PODMAN rm -f -t 0 "$c" >/dev/null 2>&1
        $PODMAN volume rm -f "$c" >/dev/null 2>&1
    done
    firewall_restore
    cleanup_tmp
}

# The Debian mirror of this host's apt: debootstrap takes the base from it.
debian_mirror() {
    local m
    m=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2>/dev/null)
    [ -n "$m" ] || m=$(awk '$1 == "deb" && $3 ~ /^bookworm$/ { print $2; exit }' /etc/apt/sources.list 2>/dev/null)
    printf '%s\n' "$m"
}

container_base() {
    $PODMAN image exists "$BASE_IMAGE" && return 0
    command -v debootstrap >/dev/null 2>&1 || skip_all "no $BASE_IMAGE and no debootstrap to make it"
    local mirror root=$TEST_TMP/rootfs
    mirror=$(debian_mirror)
    [ -n "$mirror" ] || skip_all "no $BASE_IMAGE, and no Debian mirror in this host's apt sources to make it from"
    echo "# making $BASE_IMAGE with debootstrap from $mirror"
    debootstrap --variant=minbase bookworm "$root" "$mirror" >"$TEST_TMP/debootstrap.log" 2>&1 ||
        bail "debootstrap failed: $(tail -3 "$TEST_TMP/debootstrap.log")"
    rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
    tar -C "$root" -c . | $PODMAN import - "$BASE_IMAGE" >/dev/null || bail "podman import failed"
    rm -rf "$root"
}

bail() {
    echo "Bail out! $*"
    exit 1
}

container_image() {
    container_base
    local t0=$SECONDS
    $PODMAN build --pull=never --format docker --network host -t "$IMAGE" "$top_srcdir" >"$TEST_TMP/build.log" 2>&1
    local rc=$?
    ok $rc "the image builds from the Dockerfile with Podman ($((SECONDS - t0)) s)"
    [ $rc = 0 ] || { tail -30 "$TEST_TMP/build.log" | sed 's/^/# /'; bail "no image"; }
    # The step that runs them is new, or a layer of the cache: a RUN makes a
    # layer only when it succeeds, so a cached one passed when it was made
    # (the same sources: COPY's layer before it is the same).
    if grep -q '^# FAIL: *0' "$TEST_TMP/build.log"; then
        ok 0 "its build stage ran the unit tests, none failed"
    else
        grep -A1 '^\[1/2\] STEP [0-9/]*: RUN autoreconf' "$TEST_TMP/build.log" | grep -q -- '--> Using cache'
        ok $? "its build stage's unit tests passed (the step is a layer of Podman's cache)"
    fi
    # The tests' pillow, numpy, pandas and matplotlib wheels are Debian's
    # python3-* packages repacked: they link to Debian's libraries (image
    # codecs, BLAS), which a wheel of the package index carries inside. An
    # image for the tests adds them (the python3-* packages bring them).
    printf 'FROM %s\nRUN apt-get update -q && apt-get install -y -q --no-install-recommends python3-pil python3-numpy python3-pandas python3-matplotlib libblas3 && rm -rf /var/lib/apt/lists/*\n' \
        "$IMAGE" >"$TEST_TMP/Containerfile.pil"
    $PODMAN build --pull=never --format docker --network host -t "$IMAGE-pil" -f "$TEST_TMP/Containerfile.pil" \
        "$TEST_TMP" >"$TEST_TMP/build-pil.log" 2>&1 || bail "the tests' image: $(tail -3 "$TEST_TMP/build-pil.log")"
}

# container_run NAME PORT [PODMAN RUN OPTIONS...] IMAGE [CMD...]: a container
# on the host's network (its health check off: the test asks /healthz), serving on PORT, with a volume of its name.
container_run() {
    local name=$1 port=$2
    shift 2
    CONTAINERS_MADE="$CONTAINERS_MADE $name"
    $PODMAN rm -f -t 0 "$name" >/dev/null 2>&1
    $PODMAN run -d --no-healthcheck --name "$name" --network host -e "PORT=$port" -v "$name:/var/lib/runmyscript" "$@" >/dev/null
}

# container_ready PORT: /healthz answers 200 within 60 s.
container_ready() {
    local i
    for i in $(seq 600); do
        [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$1/healthz")" = 200 ] && return 0
        sleep 0.1
    done
    return 1
}
