/* test_cli_console.c -- the pure parts of `kipper console-producer` and
 * `kipper console-consumer` (src/cli/console_args.c, console_records.c,
 * console_consumer.c's cc_print_record): the command lines and their
 * refusals, a line as a record, the batch builder (checked by the broker's
 * record_batch_validate and batch_validate_records), the record reader on
 * every truncation and on lying lengths, and a record printed with every
 * print.* property. Against a real broker: tests/integration/test_console_tools.py. */
#define _GNU_SOURCE
#include "suites.h"
#include "test_bytes.h"
#include "unit.h"

#include "base/buf.h"
#include "broker/log/compression.h"
#include "broker/log/record_batch.h"
#include "cli/console.h"

#include <stdio.h>
#include <string.h>

static int split(char *copy, const char *cmd, const char *line, char **argv)
{
    int argc = 0;
    snprintf(copy, 512, "%s %s", cmd, line);
    for (char *t = strtok(copy, " "); t && argc < 32; t = strtok(NULL, " "))
        argv[argc++] = t;
    return argc;
}

static int cp(cp_opts_t *o, const char *line, char *err)
{
    char copy[512], *argv[32];
    int argc = split(copy, "console-producer", line, argv);
    return cp_parse_args(argc, argv, o, err, 300);
}

static int cc(cc_opts_t *o, const char *line, char *err)
{
    char copy[512], *argv[32];
    int argc = split(copy, "console-consumer", line, argv);
    return cc_parse_args(argc, argv, o, err, 300);
}

static void test_console_args(void)
{
    cp_opts_t p;
    cc_opts_t c;
    char err[300];
    CHECK_EQ(cp(&p, "--bootstrap-server h:1 --topic t", err), 0);
    CHECK(p.acks == -1 && p.partition == -1 && !p.parse_key && strcmp(p.key_separator, "\t") == 0);
    CHECK_EQ(cp(&p, "--bootstrap-server=h:1 --topic t --property parse.key=TRUE --property key.separator=:: "
                    "--producer-property acks=1 --producer-property linger.ms=5 --partition 3",
                err),
             0);
    CHECK(p.parse_key && strcmp(p.key_separator, "::") == 0 && p.acks == 1 && p.partition == 3);
    CHECK_EQ(cp(&p, "--bootstrap-server h:1 --topic t --request-required-acks 0", err), 0);
    CHECK_EQ(p.acks, 0);
    CHECK_EQ(cp(&p, "--bootstrap-server h:1 --topic t --producer-property acks=2", err), -1);
    CHECK(strstr(err, "acks must be") != NULL);
    CHECK_EQ(cp(&p, "--bootstrap-server h:1 --topic t --property parse.key=yes", err), -1);
    CHECK_EQ(cp(&p, "--bootstrap-server h:1 --topic t --property novalue", err), -1);
    CHECK_EQ(cp(&p, "--bootstrap-server h:1 --topic t --partition -1", err), -1);
    CHECK_EQ(cp(&p, "--topic t", err), -1);
    CHECK_EQ(cp(&p, "--bootstrap-server h:1 --topic", err), -1);
    CHECK(strstr(err, "--topic needs a value") != NULL);
    CHECK_EQ(cp(&p, "--help", err), 1);

    CHECK_EQ(cc(&c, "--bootstrap-server h:1 --topic t", err), 0);
    CHECK(c.from == CC_FROM_DEFAULT && c.max_messages == -1 && c.timeout_ms == -1 && c.print_value &&
          !c.print_key && c.partition == -1);
    CHECK_EQ(cc(&c, "--bootstrap-server h:1 --topic t --from-beginning --max-messages 5 --timeout-ms 100 "
                    "--property print.key=true --property print.offset=true --property print.partition=true "
                    "--property print.timestamp=true --property print.headers=true --property print.value=false "
                    "--property key.separator=| --property unknown.one=1",
                err),
             0);
    CHECK(c.from_beginning && c.max_messages == 5 && c.timeout_ms == 100 && c.print_key && c.print_offset &&
          c.print_partition && c.print_timestamp && c.print_headers && !c.print_value &&
          strcmp(c.key_separator, "|") == 0);
    CHECK_EQ(cc(&c, "--bootstrap-server h:1 --topic t --partition 2 --offset 17", err), 0);
    CHECK(c.from == CC_FROM_OFFSET && c.offset == 17 && c.partition == 2);
    CHECK_EQ(cc(&c, "--bootstrap-server h:1 --topic t --partition 2 --offset earliest", err), 0);
    CHECK_EQ(c.from, CC_FROM_EARLIEST);
    CHECK_EQ(cc(&c, "--bootstrap-server h:1 --topic t --offset 3", err), -1);
    CHECK(strstr(err, "The partition is required") != NULL);
    CHECK_EQ(cc(&c, "--bootstrap-server h:1 --topic t --partition 0 --offset 3 --from-beginning", err), -1);
    CHECK_EQ(cc(&c, "--bootstrap-server h:1 --topic t --partition 0 --offset soon", err), -1);
    CHECK_EQ(cc(&c, "--bootstrap-server h:1 --topic t --max-messages 0", err), -1);
    CHECK_EQ(cc(&c, "--bootstrap-server h:1 --topic t --group g", err), -1);
    CHECK(strstr(err, "unknown option '--group'") != NULL);
}

static void test_console_line_record(void)
{
    cp_opts_t o = {.key_separator = "::"};
    cr_input_t r;
    CHECK_EQ(cp_line_record(&o, "a::b::c", 7, &r), 0);
    CHECK(r.key == NULL && r.value_len == 7);
    o.parse_key = 1;
    CHECK_EQ(cp_line_record(&o, "a::b::c", 7, &r), 0);
    CHECK(r.key_len == 1 && r.key[0] == 'a' && r.value_len == 4 && memcmp(r.value, "b::c", 4) == 0);
    CHECK_EQ(cp_line_record(&o, "::", 2, &r), 0);
    CHECK(r.key_len == 0 && r.value_len == 0);
    CHECK_EQ(cp_line_record(&o, "a:b", 3, &r), -1);
}

typedef struct {
    int n;
    int64_t offsets[8];
    char keys[8][16], values[8][16];
} seen_t;

static int collect(void *ctx, const cr_record_t *r)
{
    seen_t *s = ctx;
    if (s->n == 8)
        return 1;
    s->offsets[s->n] = r->offset;
    snprintf(s->keys[s->n], 16, "%.*s", r->key ? (int)r->key_len : 4, r->key ? (const char *)r->key : "null");
    snprintf(s->values[s->n], 16, "%.*s", (int)r->value_len, (const char *)r->value);
    s->n++;
    return 0;
}

static void build_three(buf_t *b, int64_t base)
{
    cr_input_t recs[] = {{.key = "k0", .key_len = 2, .value = "v0", .value_len = 2},
                         {.value = "v1", .value_len = 2},
                         {.key = "", .key_len = 0, .value = "", .value_len = 0}};
    size_t start = b->len;
    cr_batch_build(b, recs, 3, 1700000000000);
    record_batch_set_base_offset(b->data + start, base);
}

static void test_console_batch_build(void)
{
    buf_t b;
    buf_init(&b);
    build_three(&b, 10);
    record_batch_t h;
    CHECK_EQ(record_batch_validate(b.data, b.len, &h), PLOG_OK);
    CHECK(h.record_count == 3 && h.last_offset_delta == 2 && h.producer_id == -1 && h.attributes == 0 &&
          h.first_timestamp == 1700000000000 && h.leader_epoch == -1);
    char why[200];
    CHECK_EQ(batch_validate_records(b.data, b.len, 1 << 20, why, sizeof(why)), COMPRESSION_OK);
    build_three(&b, 13);
    seen_t s = {0};
    int64_t next = 0;
    CHECK_EQ(cr_batches_read(b.data, b.len, 11, collect, &s, &next, why, sizeof(why)), CR_OK);
    CHECK(s.n == 5 && s.offsets[0] == 11 && s.offsets[4] == 15 && next == 16);
    CHECK(strcmp(s.keys[0], "null") == 0 && strcmp(s.values[0], "v1") == 0 && strcmp(s.keys[1], "") == 0);
    CHECK(strcmp(s.keys[2], "k0") == 0 && strcmp(s.values[2], "v0") == 0);
    buf_free(&b);
}

/* A batch of one record whose bytes are rec[0..n), its CRC right. */
static void batch_of(buf_t *b, const uint8_t *rec, size_t n)
{
    cr_input_t one = {.value = "", .value_len = 0};
    buf_clear(b);
    cr_batch_build(b, &one, 1, 1700000000000);
    b->len = BATCH_HEADER_LEN;
    buf_append(b, rec, n);
    be32_put(b->data + BATCH_OFF_LENGTH, (uint32_t)(b->len - BATCH_LOG_OVERHEAD));
    be32_put(b->data + BATCH_OFF_CRC, record_batch_compute_crc(b->data, b->len));
}

static void test_console_reader_refuses(void)
{
    buf_t b;
    buf_init(&b);
    build_three(&b, 0);
    char why[200];
    seen_t s = {0};
    int64_t next = -1;
    for (size_t cut = 0; cut < b.len; cut++) {   /* a fetch ending inside a batch: nothing read */
        CHECK_EQ(cr_batches_read(b.data, cut, 0, collect, &s, &next, why, sizeof(why)), CR_OK);
        CHECK(s.n == 0 && next == 0);
    }
    b.data[b.len - 1] ^= 1;   /* the CRC no longer holds */
    CHECK_EQ(cr_batches_read(b.data, b.len, 0, collect, &s, &next, why, sizeof(why)), CR_ERR_CORRUPT);
    CHECK(strstr(why, "CRC") != NULL);
    /* Right CRCs, lying lengths: a record longer than its batch, a value
     * past its record, a header count beyond the bytes, bytes left over. */
    static const uint8_t longer[] = {0x7e, 0, 0, 0, 0x01, 0x00, 0x00};
    static const uint8_t value_past[] = {0x0a, 0, 0, 0, 0x01, 0x14, 'v'};
    static const uint8_t headers_past[] = {0x0c, 0, 0, 0, 0x01, 0x00, 0x7e};
    static const uint8_t left_over[] = {0x0c, 0, 0, 0, 0x01, 0x00, 0x00, 0xff};
    const uint8_t *bad[] = {longer, value_past, headers_past, left_over};
    const size_t lens[] = {sizeof(longer), sizeof(value_past), sizeof(headers_past), sizeof(left_over)};
    for (int i = 0; i < 4; i++) {
        batch_of(&b, bad[i], lens[i]);
        s.n = 0;
        CHECK_EQ(cr_batches_read(b.data, b.len, 0, collect, &s, &next, why, sizeof(why)), CR_ERR_CORRUPT);
        CHECK_EQ(s.n, i == 3);   /* the record before the left-over bytes was whole */
    }
    buf_free(&b);
}

typedef struct {
    FILE *f;
    cc_opts_t o;
} printer_t;

static int print_to(void *ctx, const cr_record_t *r)
{
    printer_t *p = ctx;
    cc_print_record(p->f, &p->o, 2, r);
    return 0;
}

static void test_console_print(void)
{
    /* key "k", value "v", headers h:x and n:null, offset delta 2, timestamp delta 1 */
    static const uint8_t rec[] = {0x1e, 0, 0x02, 0x04, 0x02, 'k', 0x02, 'v', 0x04, 0x02, 'h', 0x02, 'x', 0x02,
                                  'n',  0x01};
    buf_t b;
    buf_init(&b);
    batch_of(&b, rec, sizeof(rec));
    record_batch_set_base_offset(b.data, 5);
    char *out = NULL, why[200];
    size_t len = 0;
    int64_t next;
    printer_t p = {.f = open_memstream(&out, &len), .o = {.print_value = 1, .key_separator = "\t"}};
    CHECK_EQ(cr_batches_read(b.data, b.len, 0, print_to, &p, &next, why, sizeof(why)), CR_OK);
    p.o.print_key = p.o.print_offset = p.o.print_partition = p.o.print_timestamp = p.o.print_headers = 1;
    snprintf(p.o.key_separator, sizeof(p.o.key_separator), " | ");
    CHECK_EQ(cr_batches_read(b.data, b.len, 0, print_to, &p, &next, why, sizeof(why)), CR_OK);
    p.o.print_value = 0;
    cr_record_t r = {.offset = 9, .timestamp = 1, .log_append_time = 1, .value_len = -1};
    cc_print_record(p.f, &p.o, 0, &r);   /* a null key, no headers, no value printed */
    fclose(p.f);
    CHECK_STR(out, "v\nCreateTime:1700000000001 | Partition:2 | Offset:7 | h:x,n:null | k | v\n"
                   "LogAppendTime:1 | Partition:0 | Offset:9 | NO_HEADERS | null\n");
    free(out);
    buf_free(&b);
}

void suite_cli_console(void)
{
    RUN(test_console_args);
    RUN(test_console_line_record);
    RUN(test_console_batch_build);
    RUN(test_console_reader_refuses);
    RUN(test_console_print);
}
