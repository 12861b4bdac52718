/* keeper.h -- the keeper part's interface to the rest of kipper: run one
 * ZooKeeper-compatible keeper node from a zoo.cfg. */
#ifndef KIPPER_KEEPER_KEEPER_H
#define KIPPER_KEEPER_KEEPER_H

/* `kipper keeper zoo.cfg`: runs until SIGINT/SIGTERM. Returns the process
 * exit code (0 after a clean shutdown, 1 on a configuration or start error). */
int keeper_main(int argc, char **argv);

#endif
