"""librdkafka's own admin calls for consumer groups, through ctypes: the
machine's librdkafka (Debian's 2.0.2) has rd_kafka_ListConsumerGroups and
rd_kafka_ListConsumerGroupOffsets, which newer confluent-kafka releases wrap
as AdminClient.list_consumer_groups and list_consumer_group_offsets; Debian's
python3-confluent-kafka (1.7) predates those methods, so the tests call the
library under it directly. They send ListGroups v4 and OffsetFetch v7 exactly
as any program linked with this librdkafka does.

    with RdKafkaAdmin("127.0.0.1:9092") as a:
        a.list_consumer_groups()             # -> {group id: state name}
        a.list_consumer_group_offsets("g")   # -> {(topic, partition): offset}
        a.delete_consumer_groups(["g"])      # -> {group id: Kafka error code, 0 when deleted}
"""
import ctypes
import ctypes.util

_OP_ANY = 0
_GROUP_STATES = ["Unknown", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead", "Empty"]


class _TopicPartition(ctypes.Structure):
    _fields_ = [("topic", ctypes.c_char_p), ("partition", ctypes.c_int32), ("offset", ctypes.c_int64),
                ("metadata", ctypes.c_void_p), ("metadata_size", ctypes.c_size_t), ("opaque", ctypes.c_void_p),
                ("err", ctypes.c_int), ("_private", ctypes.c_void_p)]


class _TopicPartitionList(ctypes.Structure):
    _fields_ = [("cnt", ctypes.c_int), ("size", ctypes.c_int), ("elems", ctypes.POINTER(_TopicPartition))]


def _library():
    lib = ctypes.CDLL(ctypes.util.find_library("rdkafka") or "librdkafka.so.1")
    p, i, s, sz = ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t
    sigs = {
        "rd_kafka_version_str": ([], s),
        "rd_kafka_conf_new": ([], p),
        "rd_kafka_conf_set": ([p, s, s, s, sz], i),
        "rd_kafka_new": ([i, p, s, sz], p),
        "rd_kafka_destroy": ([p], None),
        "rd_kafka_queue_new": ([p], p),
        "rd_kafka_queue_destroy": ([p], None),
        "rd_kafka_queue_poll": ([p, i], p),
        "rd_kafka_event_destroy": ([p], None),
        "rd_kafka_event_error": ([p], i),
        "rd_kafka_event_error_string": ([p], s),
        "rd_kafka_ListConsumerGroups": ([p, p, p], None),
        "rd_kafka_event_ListConsumerGroups_result": ([p], p),
        "rd_kafka_ListConsumerGroups_result_valid": ([p, ctypes.POINTER(sz)], ctypes.POINTER(p)),
        "rd_kafka_ListConsumerGroups_result_errors": ([p, ctypes.POINTER(sz)], ctypes.POINTER(p)),
        "rd_kafka_ConsumerGroupListing_group_id": ([p], s),
        "rd_kafka_ConsumerGroupListing_state": ([p], i),
        "rd_kafka_ListConsumerGroupOffsets_new": ([s, p], p),
        "rd_kafka_ListConsumerGroupOffsets_destroy": ([p], None),
        "rd_kafka_ListConsumerGroupOffsets": ([p, ctypes.POINTER(p), sz, p, p], None),
        "rd_kafka_event_ListConsumerGroupOffsets_result": ([p], p),
        "rd_kafka_ListConsumerGroupOffsets_result_groups": ([p, ctypes.POINTER(sz)], ctypes.POINTER(p)),
        "rd_kafka_group_result_error": ([p], p),
        "rd_kafka_group_result_partitions": ([p], ctypes.POINTER(_TopicPartitionList)),
        "rd_kafka_error_string": ([p], s),
        "rd_kafka_error_code": ([p], i),
        "rd_kafka_DeleteGroup_new": ([s], p),
        "rd_kafka_DeleteGroup_destroy": ([p], None),
        "rd_kafka_DeleteGroups": ([p, ctypes.POINTER(p), sz, p, p], None),
        "rd_kafka_event_DeleteGroups_result": ([p], p),
        "rd_kafka_DeleteGroups_result_groups": ([p, ctypes.POINTER(sz)], ctypes.POINTER(p)),
        "rd_kafka_group_result_name": ([p], s),
    }
    for name, (args, res) in sigs.items():
        f = getattr(lib, name)
        f.argtypes, f.restype = args, res
    return lib


class RdKafkaAdmin:
    def __init__(self, bootstrap, timeout=30.0):
        self.lib = _library()
        self.timeout_ms = int(timeout * 1000)
        conf = self.lib.rd_kafka_conf_new()
        err = ctypes.create_string_buffer(512)
        for k, v in (("bootstrap.servers", bootstrap), ("socket.timeout.ms", str(self.timeout_ms))):
            assert self.lib.rd_kafka_conf_set(conf, k.encode(), v.encode(), err, 512) == 0, err.value
        self.rk = self.lib.rd_kafka_new(1, conf, err, 512)   # RD_KAFKA_CONSUMER: admin calls need no producer
        assert self.rk, err.value
        self.queue = self.lib.rd_kafka_queue_new(self.rk)

    def version(self):
        return self.lib.rd_kafka_version_str().decode()

    def close(self):
        if self.rk:
            self.lib.rd_kafka_queue_destroy(self.queue)
            self.lib.rd_kafka_destroy(self.rk)
            self.rk = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _result(self):
        ev = self.lib.rd_kafka_queue_poll(self.queue, self.timeout_ms + 5000)
        assert ev, "no answer from librdkafka"
        err = self.lib.rd_kafka_event_error(ev)
        if err:
            why = self.lib.rd_kafka_event_error_string(ev)
            self.lib.rd_kafka_event_destroy(ev)
            raise RuntimeError("librdkafka error %d: %s" % (err, why.decode() if why else ""))
        return ev

    def list_consumer_groups(self):
        """ListGroups (v4 with this librdkafka) to every broker: {group id: state}."""
        self.lib.rd_kafka_ListConsumerGroups(self.rk, None, self.queue)
        ev = self._result()
        try:
            res = self.lib.rd_kafka_event_ListConsumerGroups_result(ev)
            n = ctypes.c_size_t()
            errs = self.lib.rd_kafka_ListConsumerGroups_result_errors(res, ctypes.byref(n))
            if n.value:
                raise RuntimeError("ListConsumerGroups: " + "; ".join(
                    self.lib.rd_kafka_error_string(errs[i]).decode() for i in range(n.value)))
            groups = self.lib.rd_kafka_ListConsumerGroups_result_valid(res, ctypes.byref(n))
            return {self.lib.rd_kafka_ConsumerGroupListing_group_id(groups[i]).decode():
                    _GROUP_STATES[self.lib.rd_kafka_ConsumerGroupListing_state(groups[i])]
                    for i in range(n.value)}
        finally:
            self.lib.rd_kafka_event_destroy(ev)

    def list_consumer_group_offsets(self, group):
        """OffsetFetch (v7 with this librdkafka) of every partition the group
        committed: {(topic, partition): offset}."""
        req = self.lib.rd_kafka_ListConsumerGroupOffsets_new(group.encode(), None)
        arr = (ctypes.c_void_p * 1)(req)
        self.lib.rd_kafka_ListConsumerGroupOffsets(self.rk, arr, 1, None, self.queue)
        self.lib.rd_kafka_ListConsumerGroupOffsets_destroy(req)
        ev = self._result()
        try:
            res = self.lib.rd_kafka_event_ListConsumerGroupOffsets_result(ev)
            n = ctypes.c_size_t()
            groups = self.lib.rd_kafka_ListConsumerGroupOffsets_result_groups(res, ctypes.byref(n))
            assert n.value == 1, n.value
            gerr = self.lib.rd_kafka_group_result_error(groups[0])
            if gerr:
                raise RuntimeError("ListConsumerGroupOffsets: " + self.lib.rd_kafka_error_string(gerr).decode())
            parts = self.lib.rd_kafka_group_result_partitions(groups[0]).contents
            out = {}
            for i in range(parts.cnt):
                tp = parts.elems[i]
                assert tp.err == 0, (tp.topic, tp.partition, tp.err)
                out[(tp.topic.decode(), tp.partition)] = tp.offset
            return out
        finally:
            self.lib.rd_kafka_event_destroy(ev)

    def delete_consumer_groups(self, groups):
        """DeleteGroups to each group's coordinator: {group id: Kafka error
        code} (0: deleted; 68 NON_EMPTY_GROUP, 69 GROUP_ID_NOT_FOUND)."""
        reqs = [self.lib.rd_kafka_DeleteGroup_new(g.encode()) for g in groups]
        arr = (ctypes.c_void_p * len(reqs))(*reqs)
        self.lib.rd_kafka_DeleteGroups(self.rk, arr, len(reqs), None, self.queue)
        for r in reqs:
            self.lib.rd_kafka_DeleteGroup_destroy(r)
        ev = self._result()
        try:
            res = self.lib.rd_kafka_event_DeleteGroups_result(ev)
            n = ctypes.c_size_t()
            out = self.lib.rd_kafka_DeleteGroups_result_groups(res, ctypes.byref(n))
            result = {}
            for k in range(n.value):
                err = self.lib.rd_kafka_group_result_error(out[k])
                result[self.lib.rd_kafka_group_result_name(out[k]).decode()] = \
                    self.lib.rd_kafka_error_code(err) if err else 0
            return result
        finally:
            self.lib.rd_kafka_event_destroy(ev)
