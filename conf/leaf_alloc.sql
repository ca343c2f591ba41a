-- Leaf's table for segment IDs, the columns unchanged from Meituan Leaf's
-- scripts/leaf_alloc.sql, so leafd and Leaf servers can share one table. The
-- character set is utf8mb4, so that any description ("订单") can be stored
-- (Leaf's script names none, and a server default of latin1 refuses such text;
-- leafd then answers 400 bad_description). One row per business tag:
-- max_id is the end of the last range handed out, step the size of a range
-- (and the floor of leafd's dynamic step).
CREATE TABLE IF NOT EXISTS `leaf_alloc` (
  `biz_tag` varchar(128) NOT NULL DEFAULT '',
  `max_id` bigint(20) NOT NULL DEFAULT '1',
  `step` int(11) NOT NULL,
  `description` varchar(256) DEFAULT NULL,
  `update_time` timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  PRIMARY KEY (`biz_tag`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
