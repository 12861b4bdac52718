/* broker.h -- the broker part's interface to the rest of kipper: run one
 * Kafka-compatible broker from a server.properties. */
#ifndef KIPPER_BROKER_BROKER_H
#define KIPPER_BROKER_BROKER_H

/* `kipper broker server.properties`: runs until SIGINT/SIGTERM. Returns the
 * process exit code (0 after a clean shutdown, 1 on a configuration or start
 * error, 2 on bad usage). */
int broker_main(int argc, char **argv);

#endif
