#!/bin/bash
# deploy.sh: the deployment files' shape, offline and in seconds (the image
# itself is built and run by tests/container/, under make check-slow):
# the Dockerfile takes no syntax of only one engine and says what the image
# promises; the entrypoint's nginx configurations (a node's and a front's)
# pass `nginx -t`; the shipped seccomp profile is Podman's default one with
# exactly sethostname and setdomainname allowed; the Compose files have one
# node, and a cluster whose every node is one service; the Kubernetes
# manifests have what doc/serving.md says they have, and are valid against
# the Kubernetes API's schemas (kubernetes-models, npm, in tests/).
RMS_JAIL_OPTIONAL=1
. "$top_srcdir/tests/lib/tap.sh"
S=$top_srcdir
NGINX=${NGINX:-/usr/sbin/nginx}

# --- the Dockerfile
df=$S/Dockerfile
is "$(grep -c '^FROM debian:12-slim' "$df")" 2 "both stages are Debian 12 slim"
! grep -qE '^# *syntax=|RUN +--mount|<<' "$df"
ok $? "no syntax of only one engine (no syntax line, RUN --mount or heredoc)"
for want in 'HEALTHCHECK ' 'VOLUME /var/lib/runmyscript' 'EXPOSE 8080' 'org.opencontainers.image.title' \
    'org.opencontainers.image.version' 'org.opencontainers.image.licenses' 'ENTRYPOINT ["runmyscript-entrypoint"]' \
    'make -j"$(nproc)" check'; do
    grep -qF "$want" "$df"
    ok $? "the Dockerfile has $want"
done
! grep -qE 'pip3? install|npm install' "$df"
ok $? "no packages of scripts baked in"

# --- the entrypoint's configurations, through nginx -t
if [ -x "$NGINX" ]; then
    share=$TEST_TMP/share
    mkdir -p "$share/nginx" "$share/www" "$TEST_TMP/bin"
    cp "$S"/nginx/*.conf.in "$S/nginx/fastcgi-params.conf" "$S/nginx/render" "$share/nginx/"
    # nginx as the entrypoint starts it, but -t: the configuration is checked, nothing listens.
    printf '#!/bin/sh\nexec %s -t "$@"\n' "$NGINX" >"$TEST_TMP/bin/nginx"
    chmod +x "$TEST_TMP/bin/nginx"
    out=$(PATH=$TEST_TMP/bin:$PATH RUNMYSCRIPT_SHARE=$share RUNMYSCRIPT_RUN_DIR=$TEST_TMP/front NODES=nodes \
        sh "$S/deploy/container/entrypoint" front 2>&1)
    like "$out" "test is successful" "the front's configuration (Compose's names) passes nginx -t"
    grep -q '"~^(?<rms_nh>\[a-z0-9\]{1,16})\$" \$rms_nh:9000;' "$TEST_TMP/front/nginx.conf"
    ok $? "an id's node prefix is the node's host name"
    out=$(PATH=$TEST_TMP/bin:$PATH RUNMYSCRIPT_SHARE=$share RUNMYSCRIPT_RUN_DIR=$TEST_TMP/front2 \
        NODES=runmyscript.ns.svc.cluster.local NODE_RE='n(?<rms_nh>[0-9]{1,15})' \
        NODE_HOST='runmyscript-$rms_nh.runmyscript.ns.svc.cluster.local' sh "$S/deploy/container/entrypoint" front 2>&1)
    like "$out" "test is successful" "the front's configuration (a StatefulSet's names) passes nginx -t"
    # A node's: dev.conf.in as the entrypoint renders it.
    "$S/nginx/render" "$S/nginx/dev.conf.in" "$TEST_TMP/node.conf" "PREFIX=$TEST_TMP" "LISTEN=8080" "WWW=$S/www" \
        "FASTCGI=127.0.0.1:9000" "STATE=$TEST_TMP/state" "MAX_BODY=96m" "USER_LINE=" "CONFDIR=$share/nginx" "EXTRA_PARAMS="
    mkdir -p "$TEST_TMP/tmp"
    "$NGINX" -t -p "$TEST_TMP" -c "$TEST_TMP/node.conf" >"$TEST_TMP/t.log" 2>&1
    ok $? "a node's configuration passes nginx -t" || sed 's/^/# /' "$TEST_TMP/t.log"
else
    ok 0 "# SKIP no nginx ($NGINX)"
fi

# --- the seccomp profile: Podman's default, plus the jail's sethostname
if [ -f /usr/share/containers/seccomp.json ]; then
    is "$("$PYTHON3" - "$S/deploy/container/seccomp.json" /usr/share/containers/seccomp.json <<'PY'
import json, sys
ours, base = (json.load(open(p)) for p in sys.argv[1:])
def allowed(p, caps=()):
    # The names allowed for a container with these capabilities.
    out = set()
    for r in p["syscalls"]:
        inc, exc = r.get("includes") or {}, r.get("excludes") or {}
        if r["action"] != "SCMP_ACT_ALLOW" or r.get("args") or inc.get("arches") or exc.get("arches"):
            continue
        if inc.get("caps") and not set(inc["caps"]) <= set(caps):
            continue
        if exc.get("caps") and set(exc["caps"]) & set(caps):
            continue
        out |= set(r["names"])
    return out
print(sorted(allowed(ours) - allowed(base)), sorted(allowed(base) - allowed(ours)),
      ours["defaultAction"] == base["defaultAction"])
PY
)" "['setdomainname', 'sethostname'] [] True" "the seccomp profile is Podman's default with sethostname and setdomainname allowed"
else
    ok 0 "# SKIP no /usr/share/containers/seccomp.json to compare the profile with (golang-github-containers-common)"
fi

# --- Compose
is "$("$PYTHON3" - "$S/compose.yaml" "$S/deploy/compose/cluster.yaml" <<'PY'
import sys, yaml
one, cl = (yaml.safe_load(open(p)) for p in sys.argv[1:])
s = one["services"]["runmyscript"]
print("one:", sorted(one["services"]), s["ports"], s["volumes"], list(one["volumes"]))
nodes = {k: v for k, v in cl["services"].items() if k != "front"}
bad = [k for k, v in nodes.items()
       if v["environment"].get("RUNMYSCRIPT_NODE_ID") != k or v["volumes"] != [k + ":/var/lib/runmyscript"]
       or v["networks"] != ["nodes"] or v["environment"].get("FASTCGI_LISTEN") != "0.0.0.0:9000"
       or v["environment"].get("RUNMYSCRIPT_ACCEL_REDIRECT") != "off" or "ports" in v]
f = cl["services"]["front"]
# podman-compose 1.0 reads a service's networks as a list only.
lists = all(isinstance(v.get("networks"), list) for v in cl["services"].values())
print("cluster:", sorted(nodes), bad, f["command"], sorted(f["environment"]["NODES"].split()) == sorted(nodes),
      f["ports"], f["networks"], lists, sorted(cl["volumes"]))
PY
)" "one: ['runmyscript'] ['127.0.0.1:8080:8080'] ['runmyscript:/var/lib/runmyscript'] ['runmyscript']
cluster: ['n1', 'n2'] [] front True ['\${RUNMYSCRIPT_PUBLISH:-127.0.0.1:8080}:8080'] ['nodes'] True ['n1', 'n2']" \
    "compose.yaml: one node, its port and volume; the cluster: nodes named by their ids, each with its volume, FastCGI unpublished, in the front's NODES, networks as lists"

# --- Kubernetes
is "$("$PYTHON3" - "$S/deploy/kubernetes" <<'PY'
import os, sys, yaml
d = sys.argv[1]
k = yaml.safe_load(open(os.path.join(d, "kustomization.yaml")))
docs = [x for f in k["resources"] for x in yaml.safe_load_all(open(os.path.join(d, f))) if x]
kinds = sorted(x["kind"] + "/" + x["metadata"]["name"] for x in docs)
by = {(x["kind"], x["metadata"]["name"]): x for x in docs}
ss = by["StatefulSet", "runmyscript"]["spec"]
pod = ss["template"]["spec"]
c = pod["containers"][0]
env = {e["name"]: e.get("value") for e in c["env"]}
svc = by["Service", "runmyscript"]["spec"]
fr = by["Deployment", "runmyscript-front"]["spec"]["template"]["spec"]["containers"][0]
fenv = {e["name"]: e.get("value") for e in fr["env"]}
np = by["NetworkPolicy", "runmyscript-nodes"]["spec"]["ingress"]
fastcgi = [r for r in np if any(p["port"] == 9000 for p in r["ports"])]
print(kinds)
print(ss["serviceName"] == "runmyscript" and svc["clusterIP"] == "None", env["NODE_ID_FROM_HOSTNAME"],
      c["readinessProbe"]["httpGet"]["path"], c["livenessProbe"]["httpGet"]["path"],
      sorted(c["resources"]), pod["securityContext"]["seccompProfile"]["type"],
      ss["volumeClaimTemplates"][0]["metadata"]["name"], pod["terminationGracePeriodSeconds"] >= 60)
print(fr["args"], fenv["NODE_RE"], fenv["NODE_HOST"].startswith("runmyscript-$rms_nh.runmyscript."),
      [r["from"][0]["podSelector"]["matchLabels"]["app.kubernetes.io/component"] for r in fastcgi])
PY
)" "['Deployment/runmyscript-front', 'NetworkPolicy/runmyscript-nodes', 'PodDisruptionBudget/runmyscript', 'PodDisruptionBudget/runmyscript-front', 'Service/runmyscript', 'Service/runmyscript-front', 'StatefulSet/runmyscript']
True 1 /healthz /healthz ['limits', 'requests'] Localhost state True
['front'] n(?<rms_nh>[0-9]{1,15}) True ['front']" \
    "the Kubernetes manifests: nodes, front, the budget and the policy as doc/serving.md says"
if command -v kubectl >/dev/null 2>&1; then
    kubectl kustomize "$S/deploy/kubernetes" >"$TEST_TMP/k.yaml" 2>"$TEST_TMP/k.err"
    ok $? "kubectl kustomize builds the base" || sed 's/^/# /' "$TEST_TMP/k.err"
else
    ok 0 "# SKIP no kubectl to build the kustomize base with"
    # The base's resources as they are (what kustomize adds here is the image's tag).
    "$PYTHON3" -c 'import os, sys, yaml
d = sys.argv[1]
for f in yaml.safe_load(open(os.path.join(d, "kustomization.yaml")))["resources"]:
    print("---"); print(open(os.path.join(d, f)).read())' "$S/deploy/kubernetes" >"$TEST_TMP/k.yaml"
fi

# --- the manifests against the Kubernetes API's schemas (offline: the
# kubernetes-models package in tests/ carries them)
NODE=$S/tests/node_modules/.bin/node
[ -x "$NODE" ] || NODE=node
if [ -d "$S/tests/node_modules/kubernetes-models" ] && command -v "$NODE" >/dev/null 2>&1; then
    "$PYTHON3" -c 'import json, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
json.dump(docs, open(sys.argv[2], "w"))
# The same with three values of the wrong type and a required field
# missing: the check must see them.
for d in docs:
    if d["kind"] == "StatefulSet":
        d["spec"]["replicas"] = "two"
        d["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"] = "http"
        del d["spec"]["selector"]
    if d["kind"] == "NetworkPolicy":
        d["spec"]["ingress"][0]["ports"] = {"port": 9000}
json.dump(docs, open(sys.argv[3], "w"))' "$TEST_TMP/k.yaml" "$TEST_TMP/k.json" "$TEST_TMP/bad.json"
    is "$(cd "$S/tests" && "$NODE" lib/k8s_validate.mjs <"$TEST_TMP/k.json" 2>&1 | sort)" \
        "Deployment/runmyscript-front ok
NetworkPolicy/runmyscript-nodes ok
PodDisruptionBudget/runmyscript ok
PodDisruptionBudget/runmyscript-front ok
Service/runmyscript ok
Service/runmyscript-front ok
StatefulSet/runmyscript ok" "every manifest is valid against the Kubernetes API's schemas"
    is "$(cd "$S/tests" && "$NODE" lib/k8s_validate.mjs <"$TEST_TMP/bad.json" 2>&1 | grep -v ' ok$' | sort)" \
        "NetworkPolicy/runmyscript-nodes: /spec/ingress/0/ports must be array
StatefulSet/runmyscript: /spec must have required property selector; /spec/replicas must be integer; /spec/template/spec/containers/0/ports/0/containerPort must be integer" \
        "and the check finds values of the wrong type and a required field missing"
else
    ok 0 "# SKIP no kubernetes-models in tests/node_modules (./quickstart test runs npm ci there)"
    ok 0 "# SKIP the schemas' check finds errors: no kubernetes-models"
fi

done_testing
