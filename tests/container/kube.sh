#!/bin/bash
# kube.sh: a node's pod run with `podman kube play` from the same YAML as
# deploy/kubernetes/ (kubectl kustomize's output): the StatefulSet's pod
# template as the pod runmyscript-0, its volume claim a Podman volume, the
# shipped seccomp profile where the kubelet would keep it (Podman 4.3 reads
# a pod's profile from the older annotation, not from securityContext's
# seccompProfile: the test writes the one as the other). /healthz answers
# on the pod's port 8080, its node id is its ordinal's (n0), a run works.
# On a network the test makes (internal: no NAT rule), removed afterwards
# with the pod and its volume. Slow (it builds the image): make check-slow.
RMS_JAIL_OPTIONAL=1
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib.sh"
. "$top_srcdir/tests/lib/container.sh"
need curl
command -v kubectl >/dev/null 2>&1 || skip_all "no kubectl to build the kustomize base with (./quickstart test installs it)"
command -v catatonit >/dev/null 2>&1 || skip_all "no catatonit, which a pod's infra container runs (./quickstart test installs it)"
"$PYTHON3" -c 'import yaml' 2>/dev/null || skip_all "no python3-yaml"
container_setup
FW_BEFORE=$(iptables-save 2>/dev/null | grep -v '^#' | sed 's/\[[0-9]*:[0-9]*\]//')
container_image

NET=rmskube$$
CLAIM=rmskube$$-state
POD_YAML=$TEST_TMP/pod.yaml
kube_down() {
    $PODMAN kube down "$POD_YAML" >/dev/null 2>&1
    $PODMAN pod rm -f -t 0 runmyscript-0 >/dev/null 2>&1
    $PODMAN volume rm -f "$CLAIM" >/dev/null 2>&1
    $PODMAN network rm -f "$NET" >/dev/null 2>&1
}
kube_exit() {
    kube_down
    container_exit
}
trap kube_exit EXIT

# The base with this test's image, as `kustomize edit set image` would.
mkdir -p "$TEST_TMP/k" "$TEST_TMP/seccomp"
cp -r "$top_srcdir/deploy/kubernetes" "$TEST_TMP/k/base"
printf 'resources: [base]\nimages:\n  - {name: runmyscript, newName: %s, newTag: %s}\n' "${IMAGE%:*}" "${IMAGE##*:}" \
    >"$TEST_TMP/k/kustomization.yaml"
kubectl kustomize "$TEST_TMP/k" >"$TEST_TMP/all.yaml" 2>"$TEST_TMP/k.err"
ok $? "kubectl kustomize builds the manifests" || sed 's/^/# /' "$TEST_TMP/k.err"
# Where a node's kubelet keeps it (doc/serving.md, step 2).
cp "$top_srcdir/deploy/container/seccomp.json" "$TEST_TMP/seccomp/runmyscript.json"

# The StatefulSet's pod 0 as a Pod: its template, its name, its claim.
"$PYTHON3" - "$TEST_TMP/all.yaml" "$POD_YAML" "$CLAIM" <<'PY'
import sys, yaml
src, dst, claim = sys.argv[1:]
ss = [d for d in yaml.safe_load_all(open(src)) if d and d["kind"] == "StatefulSet"][0]
spec = ss["spec"]["template"]["spec"]
vct = ss["spec"]["volumeClaimTemplates"][0]["metadata"]["name"]
spec.setdefault("volumes", []).append({"name": vct, "persistentVolumeClaim": {"claimName": claim}})
spec["hostname"] = ss["metadata"]["name"] + "-0"
prof = spec["securityContext"]["seccompProfile"]
assert prof["type"] == "Localhost" and prof["localhostProfile"] == "profiles/runmyscript.json", prof
pod = {"apiVersion": "v1", "kind": "Pod",
       "metadata": {"name": ss["metadata"]["name"] + "-0", "labels": ss["spec"]["template"]["metadata"]["labels"],
                    "annotations": {"seccomp.security.alpha.kubernetes.io/pod": "localhost/runmyscript.json"}},
       "spec": spec}
yaml.safe_dump(pod, open(dst, "w"))
PY
ok $? "the StatefulSet's pod template, as pod runmyscript-0"

$PODMAN network create --internal "$NET" >/dev/null
# From the test's own directory: kube play builds an image itself where the
# directory it runs in has one named as the image (the build directory has
# the program runmyscript, a file: "not a directory").
(cd "$TEST_TMP" && $PODMAN kube play --network "$NET" --seccomp-profile-root "$TEST_TMP/seccomp" "$POD_YAML") \
    >"$TEST_TMP/play.log" 2>&1
ok $? "podman kube play runs it" || { grep -v '^time=' "$TEST_TMP/play.log" | tail -5 | sed 's/^/# /'; bail "no pod"; }
C=runmyscript-0-runmyscript
IP=$($PODMAN inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$C" 2>/dev/null)
BASE=http://$IP:8080
healthz() { curl -s -o "$T/hz" -w '%{http_code}' -H "Host: 127.0.0.1" "$BASE/healthz"; }
ready() { [ "$(healthz)" = 200 ]; }
wait_until ready
ok $? "its /healthz answers 200 on the pod's port 8080 ($IP), as the probes ask it"
# The shipped profile, not the engine's default: sethostname in a new user
# and UTS namespace is allowed.
is "$($PODMAN exec -i "$C" python3 - 2>&1 <<'PY'
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWUSER, CLONE_NEWUTS = 0x10000000, 0x04000000
print(libc.unshare(CLONE_NEWUSER | CLONE_NEWUTS), libc.sethostname(b"x", 1))
PY
)" "0 0" "it runs under the shipped seccomp profile (sethostname in its own namespaces is allowed)"
out=$(curl -s -H "Host: 127.0.0.1" -H 'Content-Type: application/json' \
    --data-binary '{"code":"print(6 * 7)"}' "$BASE/api/run")
is "$(printf '%s' "$out" | "$PYTHON3" -c 'import json,sys; d=json.load(sys.stdin); print(d["status"], d["logs"].strip(), d["run_id"][:3])' 2>&1)" \
    "ok 42 n0-" "a run in the pod: ok, its id names its node, n0 (the pod's ordinal)"

kube_down
is "$($PODMAN pod exists runmyscript-0 && echo pod) $($PODMAN volume exists "$CLAIM" && echo volume) $($PODMAN network exists "$NET" && echo net)" \
    "  " "afterwards no pod, volume or network of the test is left"
FW_AFTER=$(iptables-save 2>/dev/null | grep -v '^#' | sed 's/\[[0-9]*:[0-9]*\]//')
is "$FW_AFTER" "$FW_BEFORE" "the firewall's rules are as they were (iptables-save)"

done_testing
