/* reassign.h -- `kipper reassign` (reassign.c). */
#ifndef KIPPER_CLI_REASSIGN_H
#define KIPPER_CLI_REASSIGN_H

int reassign_main(int argc, char **argv);

#endif
