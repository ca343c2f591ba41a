"""deploy/kubernetes/'s pod templates under `podman kube play`, on the image tools/packaging/image built,
against real ZooKeeper and MariaDB on loopback (docs/kubernetes.md).

The manifests are rendered for this machine, as little as needed, and everything else is played
as written (the ConfigMap mounted with -c, the non-root read-only security context, every
capability dropped, the emptyDir data dir, the probes' ports, the resources):
- the ConfigMap's cluster addresses become the harness's ZooKeeper and MariaDB, its leaf.name
  one of this test's own, and the Secret's database password the harness's;
- the pods run on the host's network (hostNetwork), each with its own loopback port
  (LEAFD_LISTEN, LEAFD_RESP_LISTEN, the probes' port) and LEAFD_SNOWFLAKE_ADVERTISE_IP=127.0.0.1:
  one host network has one port 8080; the declared ports are left out (podman would publish
  them, which it refuses on the host's network);
- the Secret becomes a folder of files mounted where the Secret would be (podman 4.3's kube play
  reads no Secret document); an emptyDir gets a name per pod (podman 4.3 shares one emptyDir
  among the pods of a name); names get this test's pid, so that runs at once never meet;
- the liveness probe is played as written, but podman runs probes through systemd, which is
  not there: it logs that and goes on (the test asks /health and /ready itself).

The lease-mode Deployment: three pods (three one-replica copies, as a port per pod needs) are
ready, hold three different lease slots, and their snowflake and segment IDs are all different;
each runs as 10001 with no capability on a read-only root. Scaled down by one (SIGTERM: `podman
pod stop`), the pod stops within 10 s with exit 0, its log says it gave its slot back, and the
slot has no owner in ZooKeeper; a new pod
then takes a slot no live pod holds and its IDs are new too.

The StatefulSet's template (podman plays no StatefulSet: its pod template becomes Pods leafd-0,
leafd-1, leafd-2 with their volume claims as named volumes): three named nodes are ready with
different worker IDs; leafd-1 started again with another port and an empty volume keeps its worker ID.
It needs leafd.snowflake.identity: while `leafd --print-reference config` has no such key, this
part is skipped with a message.

Skipped (77) when not root or without node and npm (the manifests are read with the npm package
yaml, installed by test_container_manifests into LEAFD_NODE_DIR)."""
import json
import os
import shutil
import subprocess
import sys
import time

from containers import IMAGE, ROOT, UID, Podman, check_process, secret_dir
from leafdtest import LEAFD_BIN, Env, _checks, check, free_port, http, log, wait_until

DEPLOY = os.path.join(ROOT, "deploy", "kubernetes")
VALIDATE = os.path.join(ROOT, "tests", "support", "k8s-validate.js")
IDS = 500


def load(files):
    """The documents of the manifests (parsed by the npm package yaml)."""
    mods = os.path.join(os.environ.get("LEAFD_NODE_DIR", ""), "node_modules")
    r = subprocess.run(["node", VALIDATE, mods] + files, capture_output=True, text=True, timeout=120)
    return [d["doc"] for d in json.loads(r.stdout)["documents"]]


def render_config(docs, zk, db, tag):
    """The ConfigMap and Secret for this machine: (ConfigMap doc, {secret file: value})."""
    cm = next(d for d in docs if d["kind"] == "ConfigMap")
    secret = next(d for d in docs if d["kind"] == "Secret")
    lines = []
    for line in cm["data"]["leafd.properties"].splitlines():
        key = line.split("=", 1)[0].strip()
        value = {"leaf.name": tag, "leaf.snowflake.zk.address": zk.address(),
                 "leaf.jdbc.url": db.jdbc_url()}.get(key)
        lines.append("%s = %s" % (key, value) if value is not None else line)
    cm = json.loads(json.dumps(cm))
    cm["metadata"]["name"] = "%s-config" % tag
    cm["data"]["leafd.properties"] = "\n".join(lines) + "\n"
    secrets = dict(secret["stringData"])
    secrets["jdbc-password"] = "leafpw"
    return cm, secrets


def render_pod_spec(template, cm, secrets_dir, listen, resp, pod, pm):
    """A workload's pod template for podman on the host's network (see the module's text)."""
    spec = json.loads(json.dumps(template["spec"]))
    # podman 4.3 makes an emptyDir a named volume called as the pod's volume, which every pod
    # of the file would share: each pod's gets a name of its own (leafd's data dir lock
    # refuses a shared one).
    for v in spec.get("volumes", []):
        if "emptyDir" in v:
            old, v["name"] = v["name"], "%s-%s" % (pod, v["name"])
            pm.volumes.append(v["name"])
            for m in spec["containers"][0].get("volumeMounts", []):
                if m["name"] == old:
                    m["name"] = v["name"]
    spec["hostNetwork"] = True
    c = spec["containers"][0]
    c["image"] = IMAGE
    c["imagePullPolicy"] = "Never"
    c["env"] = c.get("env", []) + [
        {"name": "LEAFD_LISTEN", "value": "127.0.0.1:%d" % listen},
        {"name": "LEAFD_RESP_LISTEN", "value": "127.0.0.1:%d" % resp},
        {"name": "LEAFD_SNOWFLAKE_ADVERTISE_IP", "value": "127.0.0.1"}]
    # The probes' named port is the container's 8080; on the host's network it is this pod's.
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        if probe in c:
            c[probe]["httpGet"]["port"] = listen
    # Declared ports are published ports to podman, which it refuses on the host's network.
    c.pop("ports", None)
    for v in spec["volumes"]:
        if "configMap" in v:
            v["configMap"]["name"] = cm["metadata"]["name"]
        if "secret" in v:
            v.pop("secret")
            v["hostPath"] = {"path": secrets_dir, "type": "Directory"}
    return spec


def play(pm, env, name, docs):
    """podman kube play of the documents (JSON, which is YAML) in NAME.yaml; returns the path."""
    path = os.path.join(env.dir, name + ".yaml")
    with open(path, "w") as f:
        f.write("\n---\n".join(json.dumps(d, indent=1) for d in docs) + "\n")
    r = pm.run("kube", "play", path, timeout=180)
    if not check(r.returncode == 0, "podman kube play %s: %s" % (name, (r.stdout + r.stderr)[-1500:])):
        env.finish()
    return path


def wait_ready(port, timeout=60):
    return wait_until(lambda: http(port, "/ready", timeout=2)[0] == 200, timeout, 0.2)


def snowflake_state(port):
    return json.loads(http(port, "/ready")[1])["snowflake"]


def ids(port):
    out = []
    for path in ("/api/snowflake/get/kube?count=%d" % IDS, "/api/segment/get/kube?count=%d" % IDS):
        st, body, _ = http(port, path)
        check(st == 200, "GET %s on port %d: %d %s" % (path, port, st, body[:200]))
        out += [int(x) for x in body.split()] if st == 200 else []
    return out


def container_of(pm, pod):
    """The leafd container of a pod podman made (its name is <pod>-leafd)."""
    return "%s-leafd" % pod


def lease(env, pm, zk, db, docs):
    tag = pm.name("lease")
    cm, secrets = render_config(docs, zk, db, tag)
    sdir = secret_dir(env, "lease-secrets", secrets)
    dep = next(d for d in docs if d["kind"] == "Deployment")
    pods, ports, paths = [], [], []

    def start(i):
        listen, resp = free_port(), free_port()
        d = json.loads(json.dumps(dep))
        d["metadata"]["name"] = "%s-%d" % (tag, i)
        d["spec"]["replicas"] = 1
        # podman names a Deployment's pods <name>-pod-<replica>.
        pod = "%s-%d-pod-0" % (tag, i)
        d["spec"]["template"]["spec"] = render_pod_spec(dep["spec"]["template"], cm, sdir, listen, resp,
                                                        pod, pm)
        pm.pods.append(pod)
        paths.append(play(pm, env, "%s-%d" % (tag, i), [cm, d]))
        pods.append(pod)
        ports.append(listen)

    t0 = time.time()
    for i in range(3):
        start(i)
    pm.volumes.append(cm["metadata"]["name"])
    all_ready = all(wait_ready(p) for p in ports)
    log("lease Deployment: 3 pods ready %.1f s after the first kube play" % (time.time() - t0))
    if not check(all_ready, "three lease-mode pods answer /ready 200: %s" % [
            pm.run("logs", container_of(pm, p)).stderr[-1500:] for p in pods]):
        return
    slots = [snowflake_state(p).get("worker_id") for p in ports]
    check(len(set(slots)) == 3 and None not in slots, "three different lease slots: %s" % slots)
    seen = []
    for p in ports:
        seen += ids(p)
    check(len(seen) == 6 * IDS and len(set(seen)) == len(seen),
          "%d snowflake and segment IDs from three pods, all different (%d distinct)"
          % (len(seen), len(set(seen))))
    for pod in pods:
        pid = pm.pid(container_of(pm, pod))
        if check(pid > 0, "%s's leafd runs" % pod):
            check_process(pid, "%s's leafd" % pod)

    # Scale down by one: SIGTERM (the pod's stop signal; podman pod stop, as the kubelet does),
    # the slot given back at once.
    t0 = time.time()
    r = pm.run("pod", "stop", "-t", "30", pods[0], timeout=120)
    took = time.time() - t0
    exit_code = pm.inspect(container_of(pm, pods[0]), "{{.State.ExitCode}}")
    log("lease Deployment: one pod stopped in %.2f s (exit %s)" % (took, exit_code))
    check(r.returncode == 0 and exit_code == "0" and took < 10,
          "the scaled-down pod stops on SIGTERM, exit 0, within 10 s (exit %s, %.1f s): %s"
          % (exit_code, took, r.stderr[-500:]))
    stopped = pm.run("logs", container_of(pm, pods[0])).stderr
    check("lease slot %d given back" % slots[0] in stopped and "stopped cleanly" in stopped,
          "the stopped pod gave its lease slot %d back: %s" % (slots[0], stopped[-800:]))
    slot_path = "/snowflake/%s/leaf_lease/%010d" % (tag, slots[0])
    owner = zk.cli("ls", slot_path)
    check(owner.strip() == "[]", "the stopped pod's slot %s has no owner: %r" % (slot_path, owner))
    pm.run("kube", "down", paths[0], timeout=120)
    pm.pods.remove(pods[0])
    # A new pod takes a free slot: one that no live pod holds.
    start(3)
    if not check(wait_ready(ports[3]), "a new pod after the scale-down is ready: %s"
                 % pm.run("logs", container_of(pm, pods[3])).stderr[-1500:]):
        return
    slot = snowflake_state(ports[3]).get("worker_id")
    check(slot is not None and slot not in slots[1:], "the new pod's slot %s is none a live pod holds %s"
          % (slot, slots[1:]))
    more = ids(ports[3]) + ids(ports[1])
    check(len(set(more)) == len(more) and not set(more) & set(seen),
          "the IDs after the scale-down are new too")
    for path in paths[1:]:
        pm.run("kube", "down", path, timeout=120)


def statefulset(env, pm, zk, db, docs):
    ref = subprocess.run([LEAFD_BIN, "--print-reference", "config"], capture_output=True, text=True).stdout
    if "`leafd.snowflake.identity`" not in ref:
        log("SKIP the StatefulSet's template: this leafd has no key leafd.snowflake.identity "
            "(leafd --print-reference config), which LEAFD_SNOWFLAKE_IDENTITY sets; it runs once "
            "it does")
        return
    tag = pm.name("named")
    cm, secrets = render_config(docs, zk, db, tag)
    sdir = secret_dir(env, "named-secrets", secrets)
    sts = next(d for d in docs if d["kind"] == "StatefulSet")
    claim = sts["spec"]["volumeClaimTemplates"][0]["metadata"]["name"]
    pm.volumes.append(cm["metadata"]["name"])

    def start(ordinal):
        # The StatefulSet's pod N: named <set>-N, its claim <claim>-<set>-N a named volume.
        name = "%s-%d" % (tag, ordinal)
        listen = free_port()
        spec = render_pod_spec(sts["spec"]["template"], cm, sdir, listen, free_port(), name, pm)
        vol = "%s-%s" % (claim, name)
        spec["volumes"].append({"name": claim, "persistentVolumeClaim": {"claimName": vol}})
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": name, "labels": sts["spec"]["template"]["metadata"]["labels"]},
               "spec": spec}
        pm.pods.append(name)
        if vol not in pm.volumes:
            pm.volumes.append(vol)
        return name, listen, play(pm, env, name, [cm, pod])

    nodes = [start(i) for i in range(3)]
    if not check(all(wait_ready(n[1]) for n in nodes), "the StatefulSet's pods %s are ready: %s"
                 % ([n[0] for n in nodes], [pm.run("logs", container_of(pm, n[0])).stderr[-1500:] for n in nodes])):
        return
    workers = [snowflake_state(n[1]).get("worker_id") for n in nodes]
    check(len(set(workers)) == 3 and None not in workers, "three named nodes, three worker IDs: %s"
          % workers)
    # leafd-1 again with another port (another identity ip:port) and an empty volume.
    name, _, path = nodes[1]
    pm.run("kube", "down", path, timeout=120)
    pm.pods.remove(name)
    pm.run("volume", "rm", "-f", "%s-%s" % (claim, name))
    again = start(1)
    if check(wait_ready(again[1]), "leafd-1 started again (another port, an empty volume) is ready"):
        check(snowflake_state(again[1]).get("worker_id") == workers[1],
              "leafd-1 keeps its worker ID %s: the identity is its name" % workers[1])
    for n in (nodes[0], again, nodes[2]):
        pm.run("kube", "down", n[2], timeout=120)


def main():
    if os.geteuid() != 0:
        print("SKIP: not root (podman runs as root here)")
        sys.exit(77)
    if not shutil.which("node") or not os.path.isdir(os.path.join(os.environ.get("LEAFD_NODE_DIR", "/nonexistent"), "node_modules", "yaml")):
        print("SKIP: node or the npm package yaml (test_container_manifests installs it) is missing")
        sys.exit(77)
    docs = load([os.path.join(DEPLOY, "base", "configmap.yaml"), os.path.join(DEPLOY, "base", "secret.yaml"),
                 os.path.join(DEPLOY, "lease", "deployment.yaml"), os.path.join(DEPLOY, "statefulset.yaml")])
    with Env() as env:
        pm = Podman(env)
        if not check(pm.run("image", "exists", IMAGE).returncode == 0,
                     "%s exists (test_container_image builds it)" % IMAGE):
            env.finish()
        zk = env.zookeeper()
        db = env.mariadb()
        db.sql("INSERT INTO leaf_alloc(biz_tag, max_id, step, description) VALUES ('kube', 1, 1000, 'it')")
        lease(env, pm, zk, db, docs)
        statefulset(env, pm, zk, db, docs)
        env.finish()


if __name__ == "__main__":
    main()
    print("%d passed, %d failed" % (_checks["passed"], _checks["failed"]))
    sys.exit(1 if _checks["failed"] else 0)
