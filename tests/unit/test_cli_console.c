/* test_cli_console.c -- the pure parts of `kipper console-producer` and
 * `kipper console-consumer` (src/cli/console_args.c, console_line.c,
 * console_records.c, console_format.c): the command lines and their
 * refusals, a line as a record with LineMessageReader's every property, the
 * batch builder with headers and nulls (checked by the broker's
 * record_batch_validate and batch_validate_records), the record reader on
 * every truncation and on lying lengths, and a record printed with every
 * DefaultMessageFormatter property. Against a real broker: tests/integration/test_console_tools.py. */
#define _GNU_SOURCE
#include "suites.h"
#include "test_bytes.h"
#include "unit.h"

#include "base/buf.h"
#include "broker/log/compression.h"
#include "broker/log/record_batch.h"
#include "cli/console.h"
#include "cli/console_group.h"

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
    CHECK_EQ(cp(&p, "--bootstrap-server h:1 --topic t", err), 0);
    CHECK(!p.parse_headers && !p.ignore_error && !p.has_null_marker && strcmp(p.headers_delimiter, "\t") == 0 &&
          strcmp(p.headers_separator, ",") == 0 && strcmp(p.headers_key_separator, ":") == 0);
    CHECK_EQ(cp(&p, "--bootstrap-server h:1 --topic t --property parse.headers=true --property ignore.error=true "
                    "--property headers.delimiter=| --property headers.separator=; --property headers.key.separator== "
                    "--property null.marker=NULL",
                err),
             0);
    CHECK(p.parse_headers && p.ignore_error && p.has_null_marker && strcmp(p.null_marker, "NULL") == 0 &&
          strcmp(p.headers_delimiter, "|") == 0 && strcmp(p.headers_separator, ";") == 0 &&
          strcmp(p.headers_key_separator, "=") == 0);
    /* LineMessageReader.configure's refusals, in its words */
    static const struct {
        const char *args, *error;
    } refused[] = {
        {"--property headers.separator=:", "headers.separator and headers.key.separator may not be equal"},
        {"--property headers.delimiter=,", "headers.delimiter and headers.separator may not be equal"},
        {"--property headers.delimiter=:", "headers.delimiter and headers.key.separator may not be equal"},
        {"--property null.marker=,", "null.marker and headers.separator may not be equal"},
        {"--property null.marker=:", "null.marker and headers.key.separator may not be equal"},
        {"--property key.separator=| --property null.marker=|", "null.marker and key.separator may not be equal"},
        {"--property headers.separator=", "property headers.separator must be 1 to 63 bytes"},
    };
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        char line[256];
        snprintf(line, sizeof(line), "--bootstrap-server h:1 --topic t %s", refused[i].args);
        CHECK_EQ(cp(&p, line, err), -1);
        CHECK(strstr(err, refused[i].error) != NULL);
    }

    CHECK_EQ(cc(&c, "--bootstrap-server h:1 --topic t", err), 0);
    CHECK(c.from == CC_FROM_DEFAULT && c.max_messages == -1 && c.timeout_ms == -1 && c.print_value &&
          !c.print_key && c.partition == -1 && !c.isolation_level && !c.skip_message_on_error);
    CHECK(strcmp(c.key_separator, "\t") == 0 && strcmp(c.line_separator, "\n") == 0 &&
          strcmp(c.headers_separator, ",") == 0 && strcmp(c.null_literal, "null") == 0);
    CHECK_EQ(cc(&c, "--bootstrap-server h:1 --topic t --property line.separator=| --property headers.separator=; "
                    "--property null.literal=<nil> --property key.separator= --skip-message-on-error "
                    "--isolation-level read_committed --formatter kafka.tools.DefaultMessageFormatter "
                    "--timeout-ms -5",
                err),
             0);
    CHECK(strcmp(c.line_separator, "|") == 0 && strcmp(c.headers_separator, ";") == 0 &&
          strcmp(c.null_literal, "<nil>") == 0 && c.key_separator[0] == 0 && c.skip_message_on_error &&
          c.isolation_level == 1 && c.timeout_ms == -1);
    CHECK_EQ(cc(&c, "--bootstrap-server h:1 --topic t --formatter org.apache.kafka.tools.consumer.DefaultMessageFormatter",
                err),
             0);
    CHECK_EQ(cc(&c, "--bootstrap-server h:1 --topic t --formatter kafka.tools.LoggingMessageFormatter", err), -1);
    CHECK(strstr(err, "--formatter kafka.tools.LoggingMessageFormatter is not available") != NULL);
    CHECK_EQ(cc(&c, "--bootstrap-server h:1 --topic t --isolation-level committed", err), -1);
    CHECK(strstr(err, "Invalid value committed for configuration isolation.level") != NULL);
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
    CHECK_EQ(cc(&c, "--bootstrap-server h:1 --topic t --partition 2 --offset EARLIEST", err), 0);
    CHECK_EQ(c.from, CC_FROM_EARLIEST);
    CHECK_EQ(cc(&c, "--bootstrap-server h:1 --topic t --offset 3", err), -1);
    CHECK(strstr(err, "The partition is required") != NULL);
    CHECK_EQ(cc(&c, "--bootstrap-server h:1 --topic t --partition 0 --offset 3 --from-beginning", err), -1);
    CHECK_EQ(cc(&c, "--bootstrap-server h:1 --topic t --partition 0 --offset soon", err), -1);
    CHECK(strstr(err, "The provided offset value 'soon' is incorrect. Valid values are 'earliest', 'latest', or a "
                      "non-negative long.") != NULL);
    CHECK_EQ(cc(&c, "--bootstrap-server h:1 --topic t --max-messages 0", err), -1);
    CHECK_EQ(cc(&c, "--bootstrap-server h:1 --topic t --group g", err), 0);
    CHECK(c.group && strcmp(c.group, "g") == 0);
    CHECK_EQ(cc(&c, "--bootstrap-server h:1 --topic t --consumer-property group.id=g2", err), 0);
    CHECK(c.group && strcmp(c.group, "g2") == 0);
    CHECK_EQ(cc(&c, "--bootstrap-server h:1 --topic t --group g --consumer-property group.id=g", err), 0);
    CHECK_EQ(cc(&c, "--bootstrap-server h:1 --topic t --group g --consumer-property group.id=h", err), -1);
    CHECK(strstr(err, "do not match. Detected group ids: 'g', 'h'") != NULL);
    CHECK_EQ(cc(&c, "--bootstrap-server h:1 --topic t --consumer-property group.id=g --partition 1", err), -1);
    CHECK(strstr(err, "Options group and partition cannot be specified together.") != NULL);
    CHECK_EQ(cc(&c, "--bootstrap-server h:1 --topic t --group g --partition 1", err), -1);
    CHECK(strstr(err, "Options group and partition cannot be specified together.") != NULL);
    CHECK_EQ(cc(&c, "--bootstrap-server h:1 --topic t --whitelist x", err), -1);
    CHECK(strstr(err, "unknown option '--whitelist'") != NULL);
}

/* A record as text: [h1=v1;h2=null]key|value, "null" for a null part. */
static void describe(const cr_input_t *r, char *out, size_t len)
{
    cr_record_t rec = {.headers = r->headers, .headers_len = r->headers_len, .header_count = r->header_count};
    size_t pos = 0, n = 0;
    cr_header_t h;
    n += (size_t)snprintf(out + n, len - n, "[");
    for (int i = 0; cr_header_next(&rec, &pos, &h); i++)
        n += (size_t)snprintf(out + n, len - n, "%s%.*s=%.*s", i ? ";" : "", (int)h.key_len, (const char *)h.key,
                              h.value ? (int)h.value_len : 4, h.value ? (const char *)h.value : "null");
    snprintf(out + n, len - n, "]%.*s|%.*s", r->key ? (int)r->key_len : 4, r->key ? r->key : "null",
             r->value ? (int)r->value_len : 4, r->value ? r->value : "null");
}

/* line read with o: its record described, or "error: <message>". */
static void read_line(const cp_opts_t *o, const char *line, char *out, size_t len)
{
    buf_t headers;
    buf_init(&headers);
    cr_input_t r;
    char err[300];
    if (cp_line_record(o, line, strlen(line), 7, &r, &headers, err, sizeof(err)) < 0)
        snprintf(out, len, "error: %s", err);
    else
        describe(&r, out, len);
    buf_free(&headers);
}

static void test_console_line_record(void)
{
    cp_opts_t o = {.key_separator = "::", .headers_delimiter = "\t", .headers_separator = ",",
                   .headers_key_separator = ":"};
    char got[300];
    static const struct {
        int parse_key, parse_headers, ignore_error;
        const char *marker, *line, *want;
    } cases[] = {
        {0, 0, 0, NULL, "a::b::c", "[]null|a::b::c"},
        {1, 0, 0, NULL, "a::b::c", "[]a|b::c"},
        {1, 0, 0, NULL, "::", "[]|"},
        {1, 0, 0, NULL, "a:b", "error: No key separator found on line number 7: 'a:b'"},
        {1, 0, 1, NULL, "a:b", "[]null|a:b"},   /* ignore.error: the whole line the value */
        {0, 1, 0, NULL, "h1:v1,h2:\tvalue", "[h1=v1;h2=]null|value"},
        {1, 1, 0, NULL, "h:x\tk::v", "[h=x]k|v"},
        {1, 1, 0, NULL, "k::v", "error: No headers delimiter found on line number 7: 'k::v'"},
        {1, 1, 1, NULL, "k::v", "[]k|v"},
        {0, 1, 0, NULL, "h1:a:b,h2\tv", "error: No header key separator found in pair 'h2' on line number 7"},
        {0, 1, 1, NULL, "h1:a:b,h2\tv", "[h1=a:b;h2=null]null|v"},
        {0, 1, 0, NULL, "h1:1,,\tv", "[h1=1]null|v"},   /* trailing empty pairs dropped, as Java's split */
        {0, 1, 0, NULL, ",,\tv", "[]null|v"},
        {0, 1, 0, NULL, "\tv", "error: No header key separator found in pair '' on line number 7"},
        {0, 1, 0, NULL, ",h:1\tv", "error: No header key separator found in pair '' on line number 7"},
        {1, 1, 0, "N", "h:N,g:\tN::N", "[h=null;g=]null|null"},
        {1, 1, 0, "N", "N\tk::v", "[]k|v"},   /* the whole header list null: no headers */
        {1, 1, 0, "N", "N:1\tk::v", "error: Header keys should not be equal to the null marker 'N' as they can't be null"},
        {1, 0, 0, "", "::", "[]null|null"},
        {0, 0, 0, "NULL", "NULLx", "[]null|NULLx"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        o.parse_key = cases[i].parse_key;
        o.parse_headers = cases[i].parse_headers;
        o.ignore_error = cases[i].ignore_error;
        o.has_null_marker = cases[i].marker != NULL;
        snprintf(o.null_marker, sizeof(o.null_marker), "%s", cases[i].marker ? cases[i].marker : "");
        read_line(&o, cases[i].line, got, sizeof(got));
        if (strcmp(got, cases[i].want) != 0)
            fprintf(stderr, "line %zu: got '%s', want '%s'\n", i, got, cases[i].want);
        CHECK_STR(got, cases[i].want);
    }
    /* separators longer than one byte, as in Kafka's own reader tests */
    cp_opts_t wide = {.parse_key = 1, .parse_headers = 1, .key_separator = "\t\t", .headers_delimiter = "\t\t",
                      .headers_separator = "---", .headers_key_separator = "::::"};
    read_line(&wide, "hk0::::hv0---hk1::::\t\tkey\t\tvalue", got, sizeof(got));
    CHECK_STR(got, "[hk0=hv0;hk1=]key|value");
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
    printer_t p = {.f = open_memstream(&out, &len),
                   .o = {.print_value = 1, .key_separator = "\t", .line_separator = "\n", .headers_separator = ",",
                         .null_literal = "null"}};
    CHECK_EQ(cr_batches_read(b.data, b.len, 0, print_to, &p, &next, why, sizeof(why)), CR_OK);
    p.o.print_key = p.o.print_offset = p.o.print_partition = p.o.print_timestamp = p.o.print_headers = 1;
    snprintf(p.o.key_separator, sizeof(p.o.key_separator), " | ");
    CHECK_EQ(cr_batches_read(b.data, b.len, 0, print_to, &p, &next, why, sizeof(why)), CR_OK);
    p.o.print_value = 0;
    cr_record_t r = {.offset = 9, .timestamp = 1, .log_append_time = 1, .value_len = -1};
    cc_print_record(p.f, &p.o, 0, &r);   /* a null key, no headers, no value printed */
    /* line.separator, headers.separator, null.literal; no value: the line ends after the key */
    snprintf(p.o.line_separator, sizeof(p.o.line_separator), "<EOL>");
    snprintf(p.o.headers_separator, sizeof(p.o.headers_separator), ";");
    snprintf(p.o.null_literal, sizeof(p.o.null_literal), "~");
    p.o.key_separator[0] = 0;
    p.o.print_timestamp = p.o.print_partition = p.o.print_offset = 0;
    CHECK_EQ(cr_batches_read(b.data, b.len, 0, print_to, &p, &next, why, sizeof(why)), CR_OK);
    p.o.print_headers = p.o.print_key = 0;
    cc_print_record(p.f, &p.o, 0, &r);   /* nothing printed: not even a separator */
    fclose(p.f);
    CHECK_STR(out, "v\nCreateTime:1700000000001 | Partition:2 | Offset:7 | h:x,n:null | k | v\n"
                   "LogAppendTime:1 | Partition:0 | Offset:9 | NO_HEADERS | null\n"
                   "h:x;n:~k<EOL>");
    free(out);
    buf_free(&b);
}

/* Records with headers, null keys and values: built, checked by the
 * broker's validation, read back and printed. */
static void test_console_batch_headers(void)
{
    buf_t h1, b;
    buf_init(&h1);
    buf_init(&b);
    cr_header_append(&h1, "a", 1, "1", 1);
    cr_header_append(&h1, "b", 1, NULL, 0);
    cr_header_append(&h1, "", 0, "", 0);
    cr_input_t recs[] = {{.key = "k", .key_len = 1, .headers = h1.data, .headers_len = h1.len, .header_count = 3},
                         {.value = "v", .value_len = 1}};
    cr_batch_build(&b, recs, 2, 1700000000000);
    char why[200], *out = NULL;
    size_t len = 0;
    CHECK_EQ(batch_validate_records(b.data, b.len, 1 << 20, why, sizeof(why)), COMPRESSION_OK);
    printer_t p = {.f = open_memstream(&out, &len),
                   .o = {.print_key = 1, .print_headers = 1, .print_value = 1, .key_separator = " ",
                         .line_separator = "\n", .headers_separator = ",", .null_literal = "null"}};
    int64_t next;
    CHECK_EQ(cr_batches_read(b.data, b.len, 0, print_to, &p, &next, why, sizeof(why)), CR_OK);
    fclose(p.f);
    CHECK_STR(out, "a:1,b:null,: k null\nNO_HEADERS null v\n");
    CHECK_EQ(next, 2);
    free(out);
    buf_free(&h1);
    buf_free(&b);
}

/* The consumer protocol as the group member writes it: the subscription
 * read back (and refused when cut), RangeAssignor's split, an assignment
 * read back by group_admin.c's parser. */
static void test_console_group_protocol(void)
{
    buf_t b;
    buf_init(&b);
    cg_subscription(&b, "orders");
    CHECK_EQ(cg_subscribes(b.data, b.len, "orders"), 1);
    CHECK_EQ(cg_subscribes(b.data, b.len, "order"), 0);
    for (size_t cut = 0; cut < b.len - 4; cut++)   /* the user data after the topics is not needed */
        CHECK_EQ(cg_subscribes(b.data, cut, "orders"), -1);
    static const uint8_t lying[] = {0, 1, 0x7f, 0xff, 0xff, 0xff};   /* 2^31 - 1 topics in 6 bytes */
    CHECK_EQ(cg_subscribes(lying, sizeof(lying), "orders"), -1);
    /* RangeAssignor: 7 partitions over 3 members: 0-2, 3-4, 5-6; 2 over 3: one member gets none */
    int32_t first, count;
    cg_range(0, 3, 7, &first, &count);
    CHECK(first == 0 && count == 3);
    cg_range(1, 3, 7, &first, &count);
    CHECK(first == 3 && count == 2);
    cg_range(2, 3, 7, &first, &count);
    CHECK(first == 5 && count == 2);
    cg_range(2, 3, 2, &first, &count);
    CHECK_EQ(count, 0);
    buf_clear(&b);
    cg_assignment(&b, "orders", 5, 2);
    ga_partitions_t ps = {0};
    CHECK_EQ(ga_parse_assignment(b.data, b.len, &ps), 0);
    CHECK(ps.n == 2 && strcmp(ps.v[0].topic, "orders") == 0 && ps.v[0].partition == 5 && ps.v[1].partition == 6);
    ga_partitions_free(&ps);
    buf_clear(&b);
    cg_assignment(&b, "orders", 0, 0);
    CHECK_EQ(ga_parse_assignment(b.data, b.len, &ps), 0);
    CHECK_EQ(ps.n, 0);
    ga_partitions_free(&ps);
    buf_free(&b);
}

void suite_cli_console(void)
{
    RUN(test_console_args);
    RUN(test_console_line_record);
    RUN(test_console_batch_build);
    RUN(test_console_reader_refuses);
    RUN(test_console_print);
    RUN(test_console_batch_headers);
    RUN(test_console_group_protocol);
}
