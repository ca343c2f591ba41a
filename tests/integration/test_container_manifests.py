"""deploy/kubernetes/: every manifest is valid against the Kubernetes API's OpenAPI schema,
checked offline (npm kubernetes-models through tests/support/k8s-validate.js: types, required
fields, enum values, and fields the schema does not know), the kustomizations name every
manifest and the image's version, and the workloads are what docs/kubernetes.md says:

- the StatefulSet: LEAFD_SNOWFLAKE_IDENTITY from the pod's name (the downward API), a volume
  claim per pod at /var/lib/leafd, a headless Service as its serviceName;
- the Deployment: lease mode (LEAFD_SNOWFLAKE_WORKER_MODE=lease), its data dir an emptyDir;
- both: startup and liveness /health, readiness /ready?mode=any on the HTTP port (docs/kubernetes.md,
  "Probes"), enableServiceLinks false with a comment saying why, the recommended labels, a spread
  over zones, a grace period of 30 s, a
  non-root (10001) read-only container with every capability dropped and no privilege
  escalation, requests and a memory limit, pod anti-affinity, the ConfigMap mounted at
  /etc/leafd and given with -c, the Secret mounted where the ConfigMap's *.file keys point;
- the Services and the PodDisruptionBudget select the pods, by port names the pods have;
- the example Secret is in no kustomization (docs/kubernetes.md says how to create it), and
  --check-config warns about its values naming each key; the ConfigMap sets a stop delay and a
  named identity's wait, and says that namespaces sharing a ZooKeeper need their own leaf.name;
- the ConfigMap's leafd.properties, with the Secret's example values as its files and each
  workload's environment, passes `leafd --check-config`. The StatefulSet's environment names
  leafd.snowflake.identity: while the binary has no such key (leafd --print-reference config),
  that one check is skipped with a message, the rest still runs.

Skipped (77) without node and npm. LEAFD_NODE_DIR: where kubernetes-models and yaml are
installed (a cache in the build tree)."""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from leafdtest import LEAFD_BIN, _checks, check, log

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEPLOY = os.path.join(ROOT, "deploy", "kubernetes")
VALIDATE = os.path.join(ROOT, "tests", "support", "k8s-validate.js")
PACKAGES = ["kubernetes-models@4.5.1", "yaml@2"]
UID = 10001
RECOMMENDED = ("app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/component",
               "app.kubernetes.io/part-of")
VERSION = re.search(r"project\(leafd VERSION (\d+\.\d+\.\d+)",
                    open(os.path.join(ROOT, "CMakeLists.txt")).read()).group(1)


def finish():
    print("%d passed, %d failed" % (_checks["passed"], _checks["failed"]))
    sys.exit(1 if _checks["failed"] else 0)


def npm_modules():
    """node_modules with kubernetes-models and yaml, installed once into LEAFD_NODE_DIR."""
    node_dir = os.environ.get("LEAFD_NODE_DIR") or os.path.join(tempfile.gettempdir(), "leafd-node-k8s")
    mods = os.path.join(node_dir, "node_modules")
    if not all(os.path.exists(os.path.join(mods, p.rsplit("@", 1)[0], "package.json")) for p in PACKAGES):
        os.makedirs(node_dir, exist_ok=True)
        r = subprocess.run(["npm", "install", "--prefix", node_dir, "--no-audit", "--no-fund",
                            "--fetch-retries=2"] + PACKAGES, capture_output=True, text=True, timeout=300)
        check(r.returncode == 0, "npm install %s: %s" % (" ".join(PACKAGES), r.stderr[-1500:]))
    return mods


def pod_spec(doc):
    return doc["spec"]["template"]["spec"]


def container(doc):
    return pod_spec(doc)["containers"][0]


def env_of(c):
    return {e["name"]: e for e in c.get("env", [])}


def properties(text):
    """key = value lines of a properties text (comments and blank lines left out)."""
    out = {}
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            k, v = line.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def check_workload(doc, secrets, config):
    """What both workloads promise: probes, grace, security, resources, mounts, anti-affinity."""
    name = "%s %s" % (doc["kind"], doc["metadata"]["name"])
    spec = pod_spec(doc)
    c = container(doc)
    ports = {p["name"]: p["containerPort"] for p in c.get("ports", [])}
    check(ports.get("http") == 8080 and ports.get("resp") == 6379,
          "%s: ports http 8080 and resp 6379: %s" % (name, ports))
    live, ready = c.get("livenessProbe", {}), c.get("readinessProbe", {})
    check(live.get("httpGet", {}).get("path") == "/health" and live["httpGet"].get("port") == "http",
          "%s: liveness probe GET /health on http: %s" % (name, live))
    # Per mode (docs/kubernetes.md, "Probes"): a pod that can issue one of its modes stays in
    # the Services, so losing ZooKeeper (snowflake) or the database (segment) for a while does
    # not empty them.
    check(ready.get("httpGet", {}).get("path") == "/ready?mode=any" and ready["httpGet"].get("port") == "http",
          "%s: readiness probe GET /ready?mode=any on http: %s" % (name, ready))
    start = c.get("startupProbe", {})
    check(start.get("httpGet", {}).get("path") == "/health" and start["httpGet"].get("port") == "http"
          and start.get("periodSeconds", 10) * start.get("failureThreshold", 3) >= 120,
          "%s: a startupProbe on /health allowing 120 s or more (five unreachable database "
          "hosts delay the listener by 37 s; liveness waits for it): %s" % (name, start))
    check(spec.get("enableServiceLinks") is False,
          "%s: enableServiceLinks: false (no LEAFD_HTTP_SERVICE_* variables)" % name)
    labels = doc["spec"]["template"]["metadata"]["labels"]
    check(all(k in labels for k in RECOMMENDED) and all(k in doc["metadata"]["labels"] for k in RECOMMENDED),
          "%s: the recommended labels %s on it and its pods: %s" % (name, RECOMMENDED, labels))
    spread = spec.get("topologySpreadConstraints", [])
    check(any(t.get("topologyKey") == "topology.kubernetes.io/zone" and t.get("maxSkew") == 1
              and t.get("whenUnsatisfiable") == "ScheduleAnyway" for t in spread),
          "%s: pods spread over zones (topologySpreadConstraints): %s" % (name, spread))
    check(spec.get("terminationGracePeriodSeconds") == 30,
          "%s: terminationGracePeriodSeconds 30 (the drain's 15 s and the stop's writes fit)" % name)
    psc, csc = spec.get("securityContext", {}), c.get("securityContext", {})
    check(psc.get("runAsNonRoot") is True and psc.get("runAsUser") == UID
          and psc.get("runAsGroup") == UID and psc.get("fsGroup") == UID,
          "%s: pod runs as non-root %d:%d, fsGroup %d: %s" % (name, UID, UID, UID, psc))
    check(csc.get("readOnlyRootFilesystem") is True and csc.get("allowPrivilegeEscalation") is False
          and csc.get("capabilities", {}).get("drop") == ["ALL"] and not csc.get("capabilities", {}).get("add"),
          "%s: read-only root, no privilege escalation, every capability dropped: %s" % (name, csc))
    res = c.get("resources", {})
    check(res.get("requests", {}).get("cpu") and res.get("requests", {}).get("memory")
          and res.get("limits", {}).get("memory"),
          "%s: CPU and memory requests, a memory limit: %s" % (name, res))
    anti = spec.get("affinity", {}).get("podAntiAffinity", {})
    terms = anti.get("preferredDuringSchedulingIgnoredDuringExecution", []) + \
        anti.get("requiredDuringSchedulingIgnoredDuringExecution", [])
    check(any((t.get("podAffinityTerm", t)).get("topologyKey") == "kubernetes.io/hostname" for t in terms),
          "%s: pod anti-affinity across machines: %s" % (name, anti))
    check(c.get("image") == "localhost/leafd:%s" % VERSION,
          "%s: image localhost/leafd:%s (tools/packaging/image): %s" % (name, VERSION, c.get("image")))
    check(c.get("args") == ["-c", "/etc/leafd/leafd.properties"] and "command" not in c,
          "%s: the image's entrypoint with -c /etc/leafd/leafd.properties: %s" % (name, c.get("args")))
    mounts = {m["mountPath"]: m for m in c.get("volumeMounts", [])}
    vols = {v["name"]: v for v in spec.get("volumes", [])}
    cfg = mounts.get("/etc/leafd")
    check(cfg and cfg.get("readOnly") and vols.get(cfg["name"], {}).get("configMap", {}).get("name")
          == "leafd-config", "%s: ConfigMap leafd-config read-only at /etc/leafd" % name)
    sec = mounts.get("/run/secrets/leafd")
    sv = vols.get(sec["name"], {}).get("secret", {}) if sec else {}
    check(sec and sec.get("readOnly") and sv.get("secretName") == "leafd-secrets"
          and sv.get("defaultMode") == 0o440,
          "%s: Secret leafd-secrets read-only at /run/secrets/leafd, 0440: %s" % (name, sv))
    check("/var/lib/leafd" in mounts, "%s: a volume at /var/lib/leafd (the data dir)" % name)
    for key, value in config.items():
        if key.endswith(".file") and value.startswith("/run/secrets/leafd/"):
            check(os.path.basename(value) in secrets,
                  "leafd-config's %s names %s, a key of leafd-secrets" % (key, value))
    return mounts, vols


def check_config(text, secrets, env, what):
    """`leafd --check-config` of leafd-config with the Secret's values as its files."""
    tmp = tempfile.mkdtemp(prefix="leafd-test-manifests.")
    try:
        os.makedirs(os.path.join(tmp, "secrets"))
        for k, v in secrets.items():
            path = os.path.join(tmp, "secrets", k)
            with open(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
                f.write(v + "\n")
        conf = os.path.join(tmp, "leafd.properties")
        with open(conf, "w") as f:
            f.write(text.replace("/run/secrets/leafd/", os.path.join(tmp, "secrets") + "/")
                    .replace("/var/lib/leafd", os.path.join(tmp, "data")))
        e = {k: v for k, v in os.environ.items() if not k.startswith(("LEAF_", "LEAFD_"))}
        e.update(env)
        r = subprocess.run([LEAFD_BIN, "--check-config", "-c", conf], env=e, capture_output=True,
                           text=True, timeout=30)
        check(r.returncode == 0, "leafd --check-config accepts leafd-config with %s (%s): %s"
              % (what, env, (r.stdout + r.stderr)[-800:]))
        for key in ("leaf.jdbc.password", "leafd.admin.token", "leafd.zk.auth"):
            check("%s: still the example value" % key in r.stderr,
                  "--check-config warns that %s holds the example Secret's value: %s"
                  % (key, r.stderr[-800:]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    if not shutil.which("node") or not shutil.which("npm"):
        print("SKIP: node or npm is not installed (the schema validator is an npm package)")
        sys.exit(77)
    mods = npm_modules()
    files = sorted(glob.glob(os.path.join(DEPLOY, "**", "*.yaml"), recursive=True))
    manifests = [f for f in files if os.path.basename(f) != "kustomization.yaml"]
    kustomizations = [f for f in files if os.path.basename(f) == "kustomization.yaml"]
    log("validating %d manifests: %s" % (len(manifests), [os.path.relpath(f, ROOT) for f in manifests]))
    r = subprocess.run(["node", VALIDATE, mods] + manifests, capture_output=True, text=True, timeout=120)
    try:
        out = json.loads(r.stdout)
    except ValueError:
        check(False, "k8s-validate.js printed no JSON (exit %d): %s" % (r.returncode, r.stderr[-1500:]))
        return
    check(r.returncode == 0 and not out["errors"],
          "every manifest is valid against the Kubernetes schema: %s" % "\n  ".join(out["errors"]))
    docs = [d["doc"] for d in out["documents"]]
    by_kind = {}
    for d in docs:
        by_kind.setdefault(d["kind"], []).append(d)
    kinds = sorted(by_kind)
    check(kinds == ["ConfigMap", "Deployment", "PodDisruptionBudget", "Secret", "Service", "StatefulSet"],
          "the kinds the contract names, each there: %s" % kinds)
    if not check(all(len(by_kind.get(k, [])) == 1 for k in ("ConfigMap", "Deployment", "Secret", "StatefulSet", "PodDisruptionBudget")),
                 "one each of ConfigMap, Secret, StatefulSet, Deployment, PodDisruptionBudget"):
        return

    # The kustomizations: every resource exists, every manifest is reached, the version is ours.
    r = subprocess.run(["node", VALIDATE, mods] + kustomizations, capture_output=True, text=True, timeout=60)
    kdocs = {d["file"]: d["doc"] for d in json.loads(r.stdout)["documents"]}
    reached = set()

    def reach(kfile):
        base = os.path.dirname(kfile)
        k = kdocs[kfile]
        check(k.get("kind") == "Kustomization", "%s is a Kustomization" % os.path.relpath(kfile, ROOT))
        for res in k.get("resources", []):
            p = os.path.normpath(os.path.join(base, res))
            if os.path.isdir(p):
                sub = os.path.join(p, "kustomization.yaml")
                if check(sub in kdocs, "%s: resource %s has a kustomization.yaml" % (kfile, res)):
                    reach(sub)
            elif check(os.path.isfile(p), "%s: resource %s exists" % (kfile, res)):
                reached.add(p)
        for img in k.get("images", []):
            check(img.get("name") == "localhost/leafd" and img.get("newTag") == VERSION,
                  "%s: images sets localhost/leafd's tag to %s: %s" % (kfile, VERSION, img))
    top = os.path.join(DEPLOY, "kustomization.yaml")
    lease = os.path.join(DEPLOY, "lease", "kustomization.yaml")
    for k in (top, lease):
        if check(k in kdocs, "%s exists" % os.path.relpath(k, ROOT)):
            reach(k)
    example = os.path.join(DEPLOY, "base", "secret.yaml")
    check(example not in reached, "the example Secret is in no kustomization: `kubectl apply -k` "
          "never writes change-me over a real Secret")
    check(set(manifests) - {example} <= reached, "every other manifest is in a kustomization: not %s"
          % sorted(os.path.relpath(m, ROOT) for m in set(manifests) - reached - {example}))
    kdoc = open(os.path.join(ROOT, "docs", "kubernetes.md")).read()
    check("kubectl create secret generic leafd-secrets" in kdoc,
          "docs/kubernetes.md says how to create the Secret (kubectl create secret generic leafd-secrets)")

    cm, secret = by_kind["ConfigMap"][0], by_kind["Secret"][0]
    sts, dep = by_kind["StatefulSet"][0], by_kind["Deployment"][0]
    text = cm["data"]["leafd.properties"]
    config = properties(text)
    secrets = dict(secret.get("stringData", {}))
    check(config.get("leafd.data.dir") == "/var/lib/leafd" and config.get("leafd.listen") == "0.0.0.0:8080"
          and config.get("leafd.resp.listen") == "0.0.0.0:6379",
          "leafd-config: data dir /var/lib/leafd, HTTP on 8080, RESP on 6379: %s" % config)
    check(not any(k in config for k in ("leaf.jdbc.password", "leafd.admin.token", "leafd.zk.auth",
                                        "leafd.opaque.key")),
          "leafd-config holds no secret inline (the *.file keys name the Secret's files)")
    delay = int(config.get("leafd.stop.delay.ms", "0"))
    check(1000 <= delay <= 10000,
          "leafd-config: leafd.stop.delay.ms keeps the listener open while the endpoints update "
          "(1-10 s; the drain's 15 s still fit in the 30 s grace period): %s" % delay)
    check(int(config.get("leafd.snowflake.identity.wait.ms", "0")) >= 40000,
          "leafd-config: leafd.snowflake.identity.wait.ms covers the grace period (30 s) and a "
          "session timeout (10 s), so a new leafd-0 waits out the old pod's session")
    raw = open(os.path.join(DEPLOY, "base", "configmap.yaml")).read()
    check(re.search(r"namespace", raw[:raw.index("leaf.name =")].rsplit("data:", 1)[-1]),
          "leafd-config: the comment on leaf.name says namespaces sharing one ZooKeeper need "
          "their own leaf.name (the identities leafd-0... would collide)")
    for f in ("statefulset.yaml", os.path.join("lease", "deployment.yaml")):
        raw = open(os.path.join(DEPLOY, f)).read()
        at = re.search(r"^ +enableServiceLinks: false$", raw, re.M).start()
        check("LEAFD_HTTP_SERVICE" in raw[max(0, at - 600):at],
              "%s: a comment says why enableServiceLinks is false" % f)

    # The StatefulSet: names from the pods, a claim per pod, a headless Service.
    sm, sv = check_workload(sts, secrets, config)
    env = env_of(container(sts))
    ident = env.get("LEAFD_SNOWFLAKE_IDENTITY", {})
    check(ident.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "metadata.name",
          "StatefulSet: LEAFD_SNOWFLAKE_IDENTITY from the pod's name (downward API): %s" % ident)
    claims = {t["metadata"]["name"]: t for t in sts["spec"].get("volumeClaimTemplates", [])}
    data = sm.get("/var/lib/leafd", {})
    check(data.get("name") in claims and data.get("name") not in sv,
          "StatefulSet: /var/lib/leafd is a volume claim per pod: %s" % sorted(claims))
    services = {s["metadata"]["name"]: s for s in by_kind["Service"]}
    headless = services.get(sts["spec"].get("serviceName"), {})
    check(headless.get("spec", {}).get("clusterIP") == "None",
          "StatefulSet: its serviceName %s is a headless Service" % sts["spec"].get("serviceName"))

    # The Deployment: lease mode, the data dir the pod's own.
    dm, dv = check_workload(dep, secrets, config)
    env = env_of(container(dep))
    check(env.get("LEAFD_SNOWFLAKE_WORKER_MODE", {}).get("value") == "lease",
          "Deployment: LEAFD_SNOWFLAKE_WORKER_MODE=lease: %s" % env)
    check("emptyDir" in dv.get(dm.get("/var/lib/leafd", {}).get("name"), {}),
          "Deployment: /var/lib/leafd is an emptyDir (the slot remembered across container restarts)")
    check(dep["spec"].get("strategy", {}).get("rollingUpdate", {}).get("maxSurge") is not None,
          "Deployment: maxSurge is set (docs/kubernetes.md: what it does to the slots held)")

    # Services and the PDB select the pods, by port names the pods have.
    pods = [sts["spec"]["template"]["metadata"]["labels"], dep["spec"]["template"]["metadata"]["labels"]]
    for s in by_kind["Service"]:
        sel = s["spec"].get("selector", {})
        check(any(all(l.get(k) == v for k, v in sel.items()) for l in pods) and sel,
              "Service %s selects leafd pods: %s" % (s["metadata"]["name"], sel))
        for p in s["spec"]["ports"]:
            check(p.get("targetPort") in ("http", "resp"), "Service %s targets a named port: %s"
                  % (s["metadata"]["name"], p))
    check({"http", "resp"} <= {p["name"] for s in by_kind["Service"] for p in s["spec"]["ports"]
                               if s["spec"].get("clusterIP") != "None"},
          "Services for HTTP and RESP")
    pdb = by_kind["PodDisruptionBudget"][0]["spec"]
    check(all(all(l.get(k) == v for k, v in pdb["selector"]["matchLabels"].items()) for l in pods),
          "the PodDisruptionBudget covers both workloads' pods: %s" % pdb)
    check(pdb.get("maxUnavailable") == 1, "the PodDisruptionBudget lets one pod go at a time")

    # The configuration as leafd reads it, with each workload's environment.
    check_config(text, secrets, {"LEAFD_SNOWFLAKE_WORKER_MODE": "lease"}, "the Deployment's environment")
    ref = subprocess.run([LEAFD_BIN, "--print-reference", "config"], capture_output=True, text=True).stdout
    if "`leafd.snowflake.identity`" in ref:
        check_config(text, secrets, {"LEAFD_SNOWFLAKE_IDENTITY": "leafd-0"}, "the StatefulSet's environment")
    else:
        log("SKIP the StatefulSet's environment under --check-config: this leafd has no key "
            "leafd.snowflake.identity yet (leafd --print-reference config); it runs once it does")
        check_config(text, secrets, {}, "no workload's environment")


if __name__ == "__main__":
    main()
    finish()
