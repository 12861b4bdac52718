#!/bin/sh
# kafka-shim.sh -- installed by make as bin/kafka-consumer-groups.sh,
# bin/kafka-topics.sh and bin/kafka-configs.sh: runs the kipper binary next to
# it as the tool its own name names, with the same arguments, so scripts
# written for Kafka's tools (KAFKA_PATH/bin/kafka-*.sh) run unchanged.
# kafka-topics.sh and kafka-configs.sh take kipper's --zookeeper form
# (README.md, "Kafka's tools").
here=$(dirname "$0")
case $(basename "$0") in
    kafka-consumer-groups.sh) tool=consumer-groups ;;
    kafka-topics.sh) tool=topics ;;
    kafka-configs.sh) tool=configs ;;
    *) echo "$0: kipper serves kafka-consumer-groups.sh, kafka-topics.sh and kafka-configs.sh" >&2; exit 2 ;;
esac
exec "$here/kipper" "$tool" "$@"
