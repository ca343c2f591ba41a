#ifndef LEAF_VERSION_H
#define LEAF_VERSION_H

/*
 * Which leafd this is: the release version (project(leafd VERSION ...) in
 * the top CMakeLists.txt, the only place it is written) and git's commit the
 * binary was built from ("unknown" outside a git checkout, "-dirty" with
 * uncommitted changes). Both strings are static and never change while the
 * process runs. Everything that shows the version asks here: --version,
 * /ready, the pages, leafd_build_info, INFO, the start-up line, and whatever
 * publishes a node's version in ZooKeeper.
 */

/* "1.0.0" */
const char *leafd_version(void);

/* "6ac706c0a1b2", "6ac706c0a1b2-dirty" or "unknown" */
const char *leafd_revision(void);

#endif
