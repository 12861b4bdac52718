/* elect.h -- `kipper elect` (elect.c). */
#ifndef KIPPER_CLI_ELECT_H
#define KIPPER_CLI_ELECT_H

int elect_main(int argc, char **argv);

#endif
