# privns.sh: a test that mounts a tmpfs of its own sources this first,
# before tap.sh, with what needs it ("the full-disk case"): as root it
# runs again in a private mount namespace (unshare), so that nothing it
# mounts outlives it; elsewhere it skips, saying why.
if [ -z "${RMS_IN_NS:-}" ]; then
    if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null; then
        echo "1..0 # SKIP $1 needs root and unshare for a private tmpfs"
        exit 0
    fi
    RMS_IN_NS=1 exec unshare --mount --propagation private "$0"
fi
