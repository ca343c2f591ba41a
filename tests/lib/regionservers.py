"""The servers of a two-region test (docs/regions.md): a registry ZooKeeper and, for each of the
regions eu and us, its own ZooKeeper and MariaDB, all on loopback.

    servers = start_region_servers(env)   # {"registry", "zk-eu", "zk-us", "db-eu", "db-us"}

The five start side by side: most of a start is waiting on a JVM or mariadb-install-db. Both
databases get the tag 'orders' at max_id 1, so only the regions' residues keep them apart.
"""
import threading

from leafdtest import check

NAMES = ("registry", "zk-eu", "zk-us", "db-eu", "db-us")


def start_region_servers(env):
    servers = {}
    starts = [threading.Thread(target=lambda k=k: servers.__setitem__(
        k, (env.mariadb if k.startswith("db-") else env.zookeeper)(name=k))) for k in NAMES]
    for t in starts:
        t.start()
    for t in starts:
        t.join(120)
    check(len(servers) == len(NAMES),
          "the registry, two ZooKeepers and two MariaDBs start (%s)" % sorted(servers))
    for d in ("db-eu", "db-us"):
        servers[d].sql("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('orders', 1, 100)")
    return servers
