/* kafka_request.c -- a Kafka request frame as the broker decodes it
 * (broker_api.c): kafka_request_decode over the header (any API key and
 * version, flexible or not) and, for every API and version the codec knows,
 * the body, into an arena with the broker's budget (kafka_decode_budget).
 *
 * Input: one request frame without its 4-byte size, at most
 * socket.request.max.bytes (Kafka's default, 100 MiB).
 *
 * Oracle: a body that decodes must encode again (kafka_request_encode), the
 * encoding must decode, and encode to the same bytes: what the codec accepts
 * it can represent. (Not the input's own bytes: unknown tagged fields are
 * dropped, as Kafka drops them.) */
#include "fuzz.h"

#include "base/buf.h"
#include "broker/wire/kafka_codec.h"

#define SOCKET_REQUEST_MAX_BYTES (100 << 20)   /* socket.request.max.bytes's default */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_quiet();
    return 0;
}

static void encode(buf_t *out, const kafka_request_t *req)
{
    int rc = kafka_request_encode(out, req->api, req->api_version, req->correlation_id, req->client_id, req->body);
    FUZZ_CHECK(rc == KAFKA_OK, "%s v%d decoded but does not encode (%d)", req->api->name, req->api_version, rc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > SOCKET_REQUEST_MAX_BYTES)
        return 0;
    kafka_arena_t arena;
    kafka_arena_init(&arena, kafka_decode_budget(size));
    kafka_request_t req;
    int rc = kafka_request_decode(data, size, &arena, &req);
    if (rc == KAFKA_OK) {
        FUZZ_CHECK(req.api && req.body, "decoded without an API or a body");
        buf_t first, second;
        buf_init(&first);
        buf_init(&second);
        encode(&first, &req);
        kafka_arena_t again;
        kafka_arena_init(&again, kafka_decode_budget(first.len));
        kafka_request_t back;
        rc = kafka_request_decode(first.data + 4, first.len - 4, &again, &back);
        FUZZ_CHECK(rc == KAFKA_OK, "%s v%d re-encoded does not decode (%d)", req.api->name, req.api_version, rc);
        FUZZ_CHECK(back.api == req.api && back.api_version == req.api_version &&
                       back.correlation_id == req.correlation_id,
                   "%s v%d re-encoded has another header", req.api->name, req.api_version);
        encode(&second, &back);
        FUZZ_CHECK(first.len == second.len && memcmp(first.data, second.data, first.len) == 0,
                   "%s v%d encodes differently once decoded again", req.api->name, req.api_version);
        kafka_arena_free(&again);
        buf_free(&first);
        buf_free(&second);
    }
    kafka_arena_free(&arena);
    return 0;
}
