"""Business numbers' admin calls on one sequence node (docs/id-shapes.md,
"Business numbers"; docs/reference/http.md):

- a prefix with " or \\ and a string with \\u0000 are refused (400 naming
  it); GET /api/numbering stays JSON;
- names: 120 bytes work, 121 and 128 are refused at create (400 naming 120);
- time_zone: localtime, posixrules, Factory, right/UTC are refused; 2,000
  creates with distinct names that are no zone grow the process's data by
  less than 12 MB (each used to stay cached: about 23 KB apiece);
- PUT /api/numbering changes the prefix (the next number carries it), not the
  width (400); DELETE /api/numbering/{name} deletes it (200; 404 after, its
  counter's znode gone); both leave an audit line;
- the 257th numbering is refused (409 numbering_limit) and leaves no znode.
About 15 s.
"""
import json

from leafdtest import Env, check, http, log
from seqcluster import find_primary, seq_props, start_node
from zkhelpers import cli_list

A = {"name": "a", "prefix": "A", "date": "", "width": 4, "period": "never", "time_zone": "UTC"}


def post(node, body, method="POST"):
    return http(node.port, "/api/numbering", method=method,
                body=body if isinstance(body, str) else json.dumps(body))


def as_json(body):
    try:
        return json.loads(body)
    except ValueError:
        return None


def vm_data_kb(node):
    with open("/proc/%d/status" % node.proc.p.pid) as f:
        for line in f:
            if line.startswith("VmData:"):
                return int(line.split()[1])
    return 0


env = Env()
zk = env.zookeeper()
props = seq_props(zk.address(), 6000, **{"leaf.name": "adm"})
# (no quarantine: memory freed is given back, so VmData measures what stays)
n = env.leafd("n0", props, wait_ready=False,
              extra_env={"ASAN_OPTIONS": "quarantine_size_mb=1:detect_leaks=1"})
n.resp_port = int(props["leafd.resp.listen"].rsplit(":", 1)[1])
check(find_primary([n]) is n, "a sequence primary")

log("prefixes and strings")
for pre in ('A"B', 'A\\B'):
    st, body, _ = post(n, dict(A, prefix=pre))
    check(st == 400 and "prefix" in body, "prefix %r: 400 naming the prefix (%d %s)"
          % (pre, st, body))
st, body, _ = post(n, '{"name":"z","prefix":"AB\\u0000CD","date":"","width":4,'
                      '"period":"never","time_zone":"UTC"}')
check(st == 400 and "u0000" in body, "a prefix with \\u0000: 400 (%d %s)" % (st, body))
st, body, _ = http(n.port, "/api/numbering")
check(st == 200 and as_json(body) == [], "GET /api/numbering: [] (%d %s)" % (st, body))

log("name lengths")
for k, want in ((120, 201), (121, 400), (128, 400)):
    st, body, _ = post(n, dict(A, name="n" * k))
    check(st == want and (want == 201 or "120" in body),
          "a name of %d bytes: %d (%d %s)" % (k, want, st, body[:120]))
st, body, _ = http(n.port, "/api/number/get/" + "n" * 120)
check(st == 200 and body == "A0001", "numbers of the 120-byte name: A0001 (%d %s)" % (st, body))

log("time zones")
for z in ("localtime", "posixrules", "Factory", "right/UTC"):
    st, body, _ = post(n, dict(A, name="tz", time_zone=z))
    check(st == 400 and "time_zone" in body, "time_zone %s: 400 (%d %s)" % (z, st, body[:100]))
before = vm_data_kb(n)
for i in range(2000):
    post(n, dict(A, name="tz%d" % i, time_zone="Nowhere/Z%d" % i))
grown = vm_data_kb(n) - before
log("VmData grew %d kB over 2,000 creates with zones that are none" % grown)
check(grown < 12 * 1024, "2,000 unknown zones posted: VmData +%d kB, under 12 MB" % grown)

log("update and delete")
st, body, _ = post(n, A)
check(st == 201, "POST a: 201 (%d %s)" % (st, body))
st, body, _ = http(n.port, "/api/number/get/a")
check(st == 200 and body == "A0001", "a: A0001 (%d %s)" % (st, body))
st, body, _ = post(n, dict(A, prefix="B"), method="PUT")
check(st == 200 and (as_json(body) or {}).get("prefix") == "B", "PUT prefix B: 200 (%d %s)" % (st, body))
st, body, _ = post(n, dict(A, width=5), method="PUT")
check(st == 400 and "width" in body, "PUT width 5: 400 (%d %s)" % (st, body))
st, body, _ = http(n.port, "/api/number/get/a")
check(st == 200 and body == "B0002", "a after the update: B0002 (%d %s)" % (st, body))
try:
    st, body, _ = http(n.port, "/api/numbering/a", method="DELETE")
except OSError as e:
    st, body = 0, "%s; the log: %s" % (e, n.log_text()[-3000:])
check(st == 200, "DELETE /api/numbering/a: 200 (%d %s)" % (st, body))
st, body, _ = http(n.port, "/api/number/get/a")
check(st == 404, "a after the delete: 404 (%d %s)" % (st, body))
st, body, _ = http(n.port, "/api/numbering/a", method="DELETE")
check(st == 404, "DELETE it again: 404 (%d %s)" % (st, body))
seqs = cli_list(zk, "/leafd/adm/sequences") or []
check("@a" not in seqs, "its counter's znode is gone: %s" % [s for s in seqs if "a" == s[-1:]])
logt = n.log_text()
check("action=numbering_update object=a status=200" in logt and
      "action=numbering_delete object=a status=200" in logt, "audit lines of the update and delete")

log("the limit")
have = len(as_json(http(n.port, "/api/numbering")[1]) or [])
for i in range(256 - have):
    st, body, _ = post(n, dict(A, name="m%d" % i))
    if st != 201:
        check(False, "numbering m%d: %d %s" % (i, st, body))
        break
st, body, _ = post(n, dict(A, name="over"))
check(st == 409 and "numbering_limit" in body, "the 257th: 409 numbering_limit (%d %s)"
      % (st, body))
seqs = cli_list(zk, "/leafd/adm/sequences") or []
check(not any(s.endswith("over") for s in seqs), "no znode left by the refused create (%d)"
      % len(seqs))
n.stop()
env.finish()
