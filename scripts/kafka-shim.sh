#!/bin/sh
# kafka-shim.sh -- installed by make as bin/kafka-consumer-groups.sh,
# bin/kafka-topics.sh, bin/kafka-configs.sh, bin/kafka-console-producer.sh
# and bin/kafka-console-consumer.sh: runs the kipper binary next to
# it as the tool its own name names, with the same arguments, so scripts
# written for Kafka's tools (KAFKA_PATH/bin/kafka-*.sh) run unchanged.
# kafka-topics.sh and kafka-configs.sh take both Kafka 3.x's
# --bootstrap-server form and the older --zookeeper one (docs/tools.md).
here=$(dirname "$0")
case $(basename "$0") in
    kafka-consumer-groups.sh) tool=consumer-groups ;;
    kafka-topics.sh) tool=topics ;;
    kafka-configs.sh) tool=configs ;;
    kafka-console-producer.sh) tool=console-producer ;;
    kafka-console-consumer.sh) tool=console-consumer ;;
    *) echo "$0: kipper serves kafka-consumer-groups.sh, kafka-topics.sh, kafka-configs.sh," \
            "kafka-console-producer.sh and kafka-console-consumer.sh" >&2; exit 2 ;;
esac
exec "$here/kipper" "$tool" "$@"
