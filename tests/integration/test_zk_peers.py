"""Peer clock check (Leaf defect 6: never implemented in Leaf), at every
start. A node asks each live peer under leaf_temporary for its time over GET
/api/snowflake/time, and takes ZooKeeper's own clock (the mtime of its write
of the cluster marker) as one more witness: 10 minutes off their median ->
refused; 1 s off -> accepted; an unreachable peer is skipped."""
from leafdtest import Env, check, log
from zkhelpers import cli_list, faketime_env, start_expect_exit, wait_ephemeral, zk_props

env = Env()
zk = env.zookeeper()
peers = [env.leafd("p%d" % i, zk_props(zk.address())) for i in range(2)]
check(wait_ephemeral(peers), "/ready: both peers created their ephemeral nodes")
live = cli_list(zk, "/snowflake/it/leaf_temporary")
check(len(live or []) == 2, "two live peers registered: %s" % live)

far = env.leafd("far", zk_props(zk.address()), wait_ready=False)
far.stop()
rc, text = start_expect_exit(far, faketime_env("-10m"))
check(rc == 1, "a new node 10 minutes behind its peers is refused (exit %s)" % rc)
check("median of 3 witness(es) (2 live peer(s)" in text,
      "the refusal explains the clock check (2 peers and ZooKeeper's clock):\n" + text[-600:])
kids = cli_list(zk, "/snowflake/it/leaf_forever")
check(len(kids or []) == 2, "the refused node registered nothing: %s" % kids)

ahead = env.leafd("ahead", zk_props(zk.address()), wait_ready=False)
ahead.stop()
rc, text = start_expect_exit(ahead, faketime_env("+10m"))
check(rc == 1, "a new node 10 minutes ahead of its peers is refused (exit %s)" % rc)

# A stale entry that no one answers for is skipped.
zk.cli("create", "/snowflake/it/leaf_temporary/127.0.0.1:1", "{}")
near = env.leafd("near", zk_props(zk.address()), extra_env=faketime_env("+1"))
check(near.get("/ready")[0] == 200, "a new node 1 s off its peers starts")
text = near.log_text()
check("skipping this peer" in text and "2 of 3 live peer(s) answered" in text,
      "the unreachable peer was skipped with a warning:\n" + text[-800:])
for n in peers + [near]:
    check(n.stop() == 0, "node stops cleanly")
env.finish()
