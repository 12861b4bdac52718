/* kafka_response.c -- what a follower's replica fetcher reads from the
 * broker it follows (broker/repl/fetcher.c): a Fetch v11 or an
 * OffsetForLeaderEpoch v3 response, decoded by kafka_response_decode with the
 * broker's budget, and then, for a Fetch, each partition's records as the
 * follower takes them: the whole batches at their start
 * (record_batches_prefix), each checked as partition_log_append_replica
 * checks them (record_batch_validate, offsets moving forward), and the
 * producer state updated from them (producer_state_apply_batches).
 *
 * Input: one byte choosing the API (even: Fetch, odd: OffsetForLeaderEpoch,
 * the fetcher's one request in flight), then the response frame without its
 * size, at most what the fetcher reads: replica.fetch.response.max.bytes +
 * replica.fetch.max.bytes + 1 MiB with Kafka's defaults. */
#include "fuzz.h"

#include "broker/log/producer_state.h"
#include "broker/log/record_batch.h"
#include "broker/wire/kafka_codec.h"
#include "broker/wire/kafka_messages.h"

#define FETCH_VERSION 11   /* fetcher.c */
#define EPOCH_VERSION 3
#define MAX_FRAME ((10u << 20) + (1u << 20) + (1u << 20))

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_quiet();
    return 0;
}

/* One partition's records, as the follower appends them. */
static void take_records(const kafka_value_t *rec, producer_state_t *ps)
{
    if (rec->is_null)
        return;
    int count = 0;
    size_t len = record_batches_prefix(rec->u.b, rec->n, &count);
    FUZZ_CHECK(len <= rec->n, "a prefix of %zu bytes in %u", len, rec->n);
    int64_t expect = INT64_MIN;
    for (size_t pos = 0; pos < len;) {
        record_batch_t b;
        if (record_batch_validate(rec->u.b + pos, len - pos, &b) != PLOG_OK)
            return;
        FUZZ_CHECK(record_batch_size(&b) > 0 && (uint64_t)record_batch_size(&b) <= len - pos,
                   "a valid batch of %lld bytes in %zu", (long long)record_batch_size(&b), len - pos);
        if (b.base_offset < expect || b.last_offset_delta < 0 || b.base_offset > INT64_MAX - b.last_offset_delta - 1)
            return;
        expect = b.base_offset + b.last_offset_delta + 1;
        pos += (size_t)record_batch_size(&b);
    }
    producer_state_apply_batches(ps, rec->u.b, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size - 1 > MAX_FRAME)
        return 0;
    int fetch = (data[0] & 1) == 0;
    const kafka_api_t *api = kafka_api_find(fetch ? KAFKA_API_FETCH : KAFKA_API_OFFSET_FOR_LEADER_EPOCH);
    int16_t version = fetch ? FETCH_VERSION : EPOCH_VERSION;
    kafka_arena_t arena;
    kafka_arena_init(&arena, kafka_decode_budget(size - 1));
    int32_t corr;
    kafka_value_t *body;
    if (kafka_response_decode(data + 1, size - 1, api, version, &arena, &corr, &body) == KAFKA_OK) {
        if (fetch) {
            producer_state_t *ps = producer_state_create(PRODUCER_MAX_PRODUCERS_DEFAULT);
            if (!ps)
                abort();
            const kafka_value_t *topics = KV_GET(body, FetchResponse, Responses);
            for (uint32_t i = 0; i < topics->n; i++) {
                const kafka_value_t *t = kv_at(topics, i);
                (void)KV_STR(t, FetchableTopicResponse, Topic);
                const kafka_value_t *parts = KV_GET(t, FetchableTopicResponse, Partitions);
                for (uint32_t k = 0; k < parts->n; k++)
                    take_records(KV_GET(kv_at(parts, k), FetchPartitionData, Records), ps);
            }
            producer_state_free(ps);
        } else {
            const kafka_value_t *topics = KV_GET(body, OffsetForLeaderEpochResponse, Topics);
            for (uint32_t i = 0; i < topics->n; i++) {
                const kafka_value_t *parts = KV_GET(kv_at(topics, i), OffsetForLeaderTopicResult, Partitions);
                for (uint32_t k = 0; k < parts->n; k++) {
                    const kafka_value_t *pv = kv_at(parts, k);
                    (void)KV_INT(pv, OffsetForLeaderEpochEndOffset, LeaderEpoch);
                    (void)KV_INT(pv, OffsetForLeaderEpochEndOffset, EndOffset);
                }
            }
        }
    }
    kafka_arena_free(&arena);
    return 0;
}
