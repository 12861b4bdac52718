/* bench/broker/flood.c -- another client's produce and fetch latency while
 * one client floods the broker with compression bombs and garbage record
 * batches (issue 11: "within 2x of its quiet value"). Raw Kafka protocol
 * over loopback, no client library, so what is measured is the broker.
 *
 *   flood -b 127.0.0.1:9092 [-q quiet_topic] [-f flood_topic] [-s seconds]
 *         [-w warmup_seconds] [-r roundtrips_per_s] [-c flood_connections]
 *         [-m all|bombs|garbage] [-z none|gzip|snappy|snappy-xerial|lz4|zstd]
 *
 * The measured client sends, at a fixed pace (-r, default 500/s), one
 * Produce v8 (acks=1, one 100-byte record, uncompressed unless -z names a
 * codec) and then one Fetch
 * v4 of that offset, each timed from send to answer. After -w seconds of
 * warm-up it measures -s seconds quietly and -s seconds while -c
 * connections (default 1; 0 is the control: the same slices with no
 * flood, so the ratio's spread from the machine alone shows) each send the
 * flood without pause, in SLICES
 * alternating slices of each (half a second after each change is not
 * measured: the flood under way, or the broker done with it). The flood
 * sends one request
 * at a time (a connection's requests are answered in order, so more in
 * flight would only queue), cycling through, for every codec (gzip, raw
 * and xerial snappy, lz4, zstd), a bomb of one 8 MiB record, a bomb of 20
 * records of 1 MB each (20 MB, past 16 x message.max.bytes), and 200
 * random bytes declared as 3 records, compressed; plus the same garbage
 * uncompressed and a batch whose CRC is wrong (-m bombs: the bombs only,
 * -m garbage: the rest). The flood's answers are counted: every one of them
 * should be refused. The flood runs in a child process in a session of its
 * own, its threads in SCHED_IDLE (they yield a CPU at once to any other
 * thread that wakes): the attacker would be another machine, and its own
 * CPU use is not what is measured.
 *
 * Output: one line of key=value pairs on stdout (latencies in ms). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <lz4frame.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <snappy-c.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

static void die(const char *what)
{
    fprintf(stderr, "flood: %s: %s\n", what, strerror(errno));
    exit(1);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- bytes ---- */

typedef struct {
    uint8_t *p;
    size_t len, cap;
} bytes_t;

static void reserve(bytes_t *b, size_t n)
{
    if (b->cap - b->len >= n)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < n)
        cap *= 2;
    if (!(b->p = realloc(b->p, cap)))
        die("realloc");
    b->cap = cap;
}

static void put(bytes_t *b, const void *src, size_t n)
{
    reserve(b, n);
    memcpy(b->p + b->len, src, n);
    b->len += n;
}

static void put8(bytes_t *b, uint8_t v) { put(b, &v, 1); }
static void put16(bytes_t *b, uint16_t v) { uint8_t x[2] = {(uint8_t)(v >> 8), (uint8_t)v}; put(b, x, 2); }
static void put32(bytes_t *b, uint32_t v) { put16(b, (uint16_t)(v >> 16)); put16(b, (uint16_t)v); }
static void put64(bytes_t *b, uint64_t v) { put32(b, (uint32_t)(v >> 32)); put32(b, (uint32_t)v); }

static void put_varint(bytes_t *b, int64_t v)
{
    uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
    while (z >= 0x80) {
        put8(b, (uint8_t)(z | 0x80));
        z >>= 7;
    }
    put8(b, (uint8_t)z);
}

static void put_string(bytes_t *b, const char *s)
{
    put16(b, (uint16_t)strlen(s));
    put(b, s, strlen(s));
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* ---- record batches v2 ---- */

static uint32_t crc32c(const uint8_t *p, size_t n)
{
    static uint32_t table[256];
    if (!table[1])
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++)
                c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
            table[i] = c;
        }
    uint32_t c = 0xFFFFFFFFu;
    while (n--)
        c = table[(c ^ *p++) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

/* count records, each with a value of vlen zeros (or the given bytes). */
static void make_records(bytes_t *out, int count, size_t vlen, const uint8_t *value)
{
    for (int i = 0; i < count; i++) {
        bytes_t body = {0};
        put8(&body, 0);
        put_varint(&body, 0);
        put_varint(&body, i);
        put_varint(&body, -1);
        put_varint(&body, (int64_t)vlen);
        reserve(&body, vlen);
        if (value)
            memcpy(body.p + body.len, value, vlen);
        else
            memset(body.p + body.len, 0, vlen);
        body.len += vlen;
        put_varint(&body, 0);
        put_varint(out, (int64_t)body.len);
        put(out, body.p, body.len);
        free(body.p);
    }
}

enum { NONE, GZIP, SNAPPY, SNAPPY_XERIAL, LZ4, ZSTD };

static void compress_as(int codec, bytes_t *out, const bytes_t *in)
{
    if (codec == NONE) {
        put(out, in->p, in->len);
    } else if (codec == GZIP) {
        z_stream z;
        memset(&z, 0, sizeof(z));
        deflateInit2(&z, 9, Z_DEFLATED, 31, 9, Z_DEFAULT_STRATEGY);
        size_t bound = deflateBound(&z, (uLong)in->len);
        reserve(out, bound);
        z.next_in = in->p;
        z.avail_in = (uInt)in->len;
        z.next_out = out->p + out->len;
        z.avail_out = (uInt)bound;
        deflate(&z, Z_FINISH);
        out->len += bound - z.avail_out;
        deflateEnd(&z);
    } else if (codec == SNAPPY) {
        size_t n = snappy_max_compressed_length(in->len);
        reserve(out, n);
        snappy_compress((const char *)in->p, in->len, (char *)out->p + out->len, &n);
        out->len += n;
    } else if (codec == SNAPPY_XERIAL) {
        put(out, "\x82SNAPPY\0", 8);
        put32(out, 1);
        put32(out, 1);
        for (size_t at = 0; at < in->len; at += 32768) {
            bytes_t part = {in->p + at, in->len - at < 32768 ? in->len - at : 32768, 0}, block = {0};
            compress_as(SNAPPY, &block, &part);
            put32(out, (uint32_t)block.len);
            put(out, block.p, block.len);
            free(block.p);
        }
    } else if (codec == LZ4) {
        size_t n = LZ4F_compressFrameBound(in->len, NULL);
        reserve(out, n);
        out->len += LZ4F_compressFrame(out->p + out->len, n, in->p, in->len, NULL);
    } else {
        size_t n = ZSTD_compressBound(in->len);
        reserve(out, n);
        out->len += ZSTD_compress(out->p + out->len, n, in->p, in->len, 3);
    }
}

/* -z's names, in the order of the enum above. */
static const char *const codec_names[] = {"none", "gzip", "snappy", "snappy-xerial", "lz4", "zstd"};

static const char *codec_name(int codec)
{
    return codec_names[codec];
}

/* -1 for an unknown name. */
static int codec_named(const char *name)
{
    for (int i = 0; i < (int)(sizeof(codec_names) / sizeof(codec_names[0])); i++)
        if (strcmp(name, codec_names[i]) == 0)
            return i;
    return -1;
}

/* A producer's batch of count records (already encoded), compressed. */
static void make_batch(bytes_t *out, int codec, const bytes_t *records, int32_t count, int bad_crc)
{
    static const int attr[] = {0, 1, 2, 2, 3, 4};
    bytes_t tail = {0};
    put16(&tail, (uint16_t)attr[codec]);
    put32(&tail, (uint32_t)(count - 1));
    put64(&tail, 1700000000000ull);
    put64(&tail, 1700000000000ull);
    put64(&tail, UINT64_MAX);   /* no producer id */
    put16(&tail, 0xFFFF);
    put32(&tail, UINT32_MAX);
    put32(&tail, (uint32_t)count);
    compress_as(codec, &tail, records);
    put64(out, 0);
    put32(out, (uint32_t)(tail.len + 9));
    put32(out, UINT32_MAX);
    put8(out, 2);
    put32(out, crc32c(tail.p, tail.len) ^ (bad_crc ? 1u : 0u));
    put(out, tail.p, tail.len);
    free(tail.p);
}

/* ---- requests ---- */

static void frame_begin(bytes_t *f, int16_t api, int16_t version, int32_t corr)
{
    f->len = 0;
    put32(f, 0);   /* the size, set by frame_end */
    put16(f, (uint16_t)api);
    put16(f, (uint16_t)version);
    put32(f, (uint32_t)corr);
    put_string(f, "flood-bench");
}

static void frame_end(bytes_t *f)
{
    uint32_t n = (uint32_t)(f->len - 4);
    uint8_t x[4] = {(uint8_t)(n >> 24), (uint8_t)(n >> 16), (uint8_t)(n >> 8), (uint8_t)n};
    memcpy(f->p, x, 4);
}

static void produce_frame(bytes_t *f, int32_t corr, const char *topic, int16_t acks, const bytes_t *batch)
{
    frame_begin(f, 0, 8, corr);
    put16(f, 0xFFFF);   /* no transactional id */
    put16(f, (uint16_t)acks);
    put32(f, 30000);
    put32(f, 1);
    put_string(f, topic);
    put32(f, 1);
    put32(f, 0);
    put32(f, (uint32_t)batch->len);
    put(f, batch->p, batch->len);
    frame_end(f);
}

static void fetch_frame(bytes_t *f, int32_t corr, const char *topic, int64_t offset)
{
    frame_begin(f, 1, 4, corr);
    put32(f, UINT32_MAX);   /* consumer */
    put32(f, 0);            /* max wait */
    put32(f, 1);            /* min bytes */
    put32(f, 1 << 20);
    put8(f, 0);
    put32(f, 1);
    put_string(f, topic);
    put32(f, 1);
    put32(f, 0);
    put64(f, (uint64_t)offset);
    put32(f, 1 << 20);
    frame_end(f);
}

/* ---- the connection ---- */

static int dial(const char *host, int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    int one = 1;
    if (fd < 0 || inet_pton(AF_INET, host, &a.sin_addr) != 1 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
        die("connect");
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

static void send_all(int fd, const bytes_t *f)
{
    for (size_t at = 0; at < f->len;) {
        ssize_t n = send(fd, f->p + at, f->len - at, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            die("send");
        at += (size_t)n;
    }
}

static void recv_all(int fd, uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t got = recv(fd, p, n, 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            die("recv (the broker closed the connection?)");
        p += got;
        n -= (size_t)got;
    }
}

/* One answer into r (its size prefix dropped). */
static void recv_frame(int fd, bytes_t *r)
{
    uint8_t size[4];
    recv_all(fd, size, 4);
    r->len = 0;
    reserve(r, get32(size));
    recv_all(fd, r->p, get32(size));
    r->len = get32(size);
}

/* The first partition's error (and, for Produce, its base offset) of a
 * one-topic, one-partition answer: corr, [throttle], topics, name, parts,
 * index, error. */
static int16_t answer_error(const bytes_t *r, int fetch, int64_t *base)
{
    size_t at = 4 + (fetch ? 4 : 0) + 4;
    if (r->len < at + 2)
        return -1;
    at += 2 + ((size_t)r->p[at] << 8 | r->p[at + 1]) + 4 + 4;
    if (r->len < at + 10)
        return -1;
    int16_t error = (int16_t)(r->p[at] << 8 | r->p[at + 1]);
    if (base)
        *base = (int64_t)((uint64_t)get32(r->p + at + 2) << 32 | get32(r->p + at + 6));
    return error;
}

/* ---- the flood ---- */

#define NFLOOD 17
#define SLICES 5   /* quiet and flooded slices, alternating */
static bytes_t flood_batches[NFLOOD];
static const char *flood_names[NFLOOD];
static const char *opt_host = "127.0.0.1", *quiet_topic = "quiet", *flood_topic = "flood";
static const char *opt_mix = "all";   /* -m: all, bombs, garbage */
static int opt_codec = 0;              /* -z: the measured producer's codec (NONE) */
static int flood_pick[NFLOOD], npick;
static int opt_port;
static atomic_int flooding;
static atomic_uint_fast64_t flood_sent, flood_refused, flood_accepted, flood_bytes;

/* The flood's counts, from the child that sent it. */
typedef struct {
    uint64_t sent, refused, accepted, bytes;
} flood_counts_t;

typedef struct {
    pid_t pid;
    int ctl, res;            /* closing ctl stops it; res brings back the counts */
    flood_counts_t counts;
} flood_t;

static void build_flood(void)
{
    static const char *codec_names[] = {"none", "gzip", "snappy", "snappy-xerial", "lz4", "zstd"};
    static char names[NFLOOD][48];
    bytes_t one = {0}, many = {0}, junk = {0};
    make_records(&one, 1, 8u << 20, NULL);
    make_records(&many, 20, 1000000, NULL);
    srand(1);
    for (int i = 0; i < 200; i++)
        put8(&junk, (uint8_t)rand());
    int n = 0;
    for (int codec = GZIP; codec <= ZSTD; codec++) {
        make_batch(&flood_batches[n], codec, &one, 1, 0);
        snprintf(names[n], sizeof(names[n]), "%s-one-8MiB-record", codec_names[codec]);
        flood_names[n] = names[n], n++;
        make_batch(&flood_batches[n], codec, &many, 20, 0);
        snprintf(names[n], sizeof(names[n]), "%s-20x1MB-records", codec_names[codec]);
        flood_names[n] = names[n], n++;
        make_batch(&flood_batches[n], codec, &junk, 3, 0);
        snprintf(names[n], sizeof(names[n]), "%s-garbage", codec_names[codec]);
        flood_names[n] = names[n], n++;
    }
    make_batch(&flood_batches[n], NONE, &junk, 3, 0);
    flood_names[n++] = "garbage-uncompressed";
    make_batch(&flood_batches[n], GZIP, &many, 20, 1);
    flood_names[n++] = "gzip-bomb-wrong-crc";
    free(one.p);
    free(many.p);
    free(junk.p);
    for (int i = 0; i < n; i++) {
        int bomb = strstr(flood_names[i], "record") != NULL;
        if (strcmp(opt_mix, "all") == 0 || (strcmp(opt_mix, "bombs") == 0) == bomb)
            flood_pick[npick++] = i;
        fprintf(stderr, "flood: %-24s %8zu bytes%s\n", flood_names[i], flood_batches[i].len,
                npick && flood_pick[npick - 1] == i ? "" : " (not sent)");
    }
}

static void *flood_main(void *arg)
{
    (void)arg;
    /* The attacker would be another machine: on this one its own CPU use
     * should not be what delays the measured client, so its threads run in
     * SCHED_IDLE, which any other thread preempts as it wakes (a nice value
     * does not: the scheduler weighs sessions first, see flood_start). */
    struct sched_param none = {0};
    if (sched_setscheduler((pid_t)syscall(SYS_gettid), SCHED_IDLE, &none) < 0)
        fprintf(stderr, "flood: cannot lower the flood thread's priority: %s\n", strerror(errno));
    int fd = dial(opt_host, opt_port);
    bytes_t f = {0}, r = {0};
    for (int32_t corr = 1; atomic_load(&flooding); corr++) {
        produce_frame(&f, corr, flood_topic, 1, &flood_batches[flood_pick[corr % npick]]);
        send_all(fd, &f);
        recv_frame(fd, &r);
        int16_t error = answer_error(&r, 0, NULL);
        atomic_fetch_add(error ? &flood_refused : &flood_accepted, 1);
        atomic_fetch_add(&flood_sent, 1);
        atomic_fetch_add(&flood_bytes, f.len);
    }
    close(fd);
    free(f.p);
    free(r.p);
    return NULL;
}

/* The child: conns flooding threads until the parent closes ctl, then
 * their counts into res. */
static void flood_child(int conns, int ctl, int res)
{
    pthread_t threads[64];
    char byte;
    atomic_store(&flooding, 1);
    for (int i = 0; i < conns; i++)
        pthread_create(&threads[i], NULL, flood_main, NULL);
    for (;;) {   /* until the parent closes its end */
        ssize_t n = read(ctl, &byte, 1);
        if (n == 0 || (n < 0 && errno != EINTR))
            break;
    }
    atomic_store(&flooding, 0);
    for (int i = 0; i < conns; i++)
        pthread_join(threads[i], NULL);
    flood_counts_t c = {atomic_load(&flood_sent), atomic_load(&flood_refused), atomic_load(&flood_accepted),
                        atomic_load(&flood_bytes)};
    if (write(res, &c, sizeof(c)) != (ssize_t)sizeof(c))
        die("write");
}

/* The flood runs in a child process in a session of its own. Linux's
 * autogroup scheduling shares the CPU between sessions first, so the
 * attacker's busy threads then compete with the broker and the measured
 * client as another session's load does, not inside their share: as near as
 * one machine gets to the attacker being another machine. */
static void flood_start(flood_t *f, int conns)
{
    int ctl[2], res[2];
    if (pipe(ctl) < 0 || pipe(res) < 0)
        die("pipe");
    f->pid = fork();
    if (f->pid < 0)
        die("fork");
    if (f->pid == 0) {
        close(ctl[1]);
        close(res[0]);
        setsid();
        flood_child(conns, ctl[0], res[1]);
        _exit(0);
    }
    close(ctl[0]);
    close(res[1]);
    f->ctl = ctl[1];
    f->res = res[0];
}

static void flood_stop(flood_t *f)
{
    close(f->ctl);
    if (read(f->res, &f->counts, sizeof(f->counts)) != (ssize_t)sizeof(f->counts))
        die("the flood's counts");
    close(f->res);
    waitpid(f->pid, NULL, 0);
}

/* ---- the measured client ---- */

typedef struct {
    uint64_t *v;
    size_t n, cap;
} samples_t;

static void sample(samples_t *s, uint64_t ns)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 4096;
        if (!(s->v = realloc(s->v, s->cap * sizeof(*s->v))))
            die("realloc");
    }
    s->v[s->n++] = ns;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static double pct_ms(samples_t *s, double q)
{
    if (!s->n)
        return -1;
    qsort(s->v, s->n, sizeof(*s->v), cmp_u64);
    size_t i = (size_t)(q * (double)s->n);
    return (double)s->v[i < s->n ? i : s->n - 1] / 1e6;
}

static int errors;

/* Paced produce + fetch round trips for seconds; latencies into p and f. */
static void measure(int fd, double seconds, double rate, samples_t *p, samples_t *f)
{
    static int32_t corr;
    bytes_t req = {0}, r = {0}, rec = {0}, batch = {0};
    uint8_t value[100];
    memset(value, 'q', sizeof(value));
    make_records(&rec, 1, sizeof(value), value);
    make_batch(&batch, opt_codec, &rec, 1, 0);
    uint64_t start = now_ns(), gap = (uint64_t)(1e9 / rate), next = start;
    while (now_ns() - start < (uint64_t)(seconds * 1e9)) {
        uint64_t t = now_ns();
        if (t < next) {
            struct timespec ts = {0, (long)(next - t)};
            nanosleep(&ts, NULL);
        }
        next += gap;
        int64_t base = -1;
        produce_frame(&req, ++corr, quiet_topic, 1, &batch);
        t = now_ns();
        send_all(fd, &req);
        recv_frame(fd, &r);
        if (p)
            sample(p, now_ns() - t);
        errors += answer_error(&r, 0, &base) != 0 && p;   /* warm-up may start before leadership */
        fetch_frame(&req, ++corr, quiet_topic, base);
        t = now_ns();
        send_all(fd, &req);
        recv_frame(fd, &r);
        if (f)
            sample(f, now_ns() - t);
        errors += answer_error(&r, 1, NULL) != 0 && f;
    }
    free(req.p);
    free(r.p);
    free(rec.p);
    free(batch.p);
}

int main(int argc, char **argv)
{
    double seconds = 10, warmup = 2, rate = 500;
    int conns = 1, c;
    char *bootstrap = NULL;
    while ((c = getopt(argc, argv, "b:q:f:s:w:r:c:m:z:")) != -1) {
        switch (c) {
        case 'b': bootstrap = optarg; break;
        case 'q': quiet_topic = optarg; break;
        case 'f': flood_topic = optarg; break;
        case 's': seconds = atof(optarg); break;
        case 'w': warmup = atof(optarg); break;
        case 'r': rate = atof(optarg); break;
        case 'c': conns = atoi(optarg); break;
        case 'm': opt_mix = optarg; break;
        case 'z': opt_codec = codec_named(optarg); break;
        default:
            fprintf(stderr, "usage: flood -b host:port [-q topic] [-f topic] [-s s] [-w s] [-r per_s] [-c conns]"
                            " [-m all|bombs|garbage] [-z codec]\n");
            return 2;
        }
    }
    char *colon = bootstrap ? strrchr(bootstrap, ':') : NULL;
    if (!colon || conns < 0 || conns > 64 || rate <= 0 || opt_codec < 0 ||
        (strcmp(opt_mix, "all") && strcmp(opt_mix, "bombs") && strcmp(opt_mix, "garbage")))
        return fprintf(stderr, "flood: -b host:port needed (and -z none, gzip, snappy, snappy-xerial, lz4 or zstd)\n"),
               2;
    *colon = 0;
    opt_host = bootstrap;
    opt_port = atoi(colon + 1);
    build_flood();
    int fd = dial(opt_host, opt_port);
    samples_t qp = {0}, qf = {0}, fp = {0}, ff = {0};
    measure(fd, warmup, rate, NULL, NULL);
    /* Quiet and flooded slices alternate, so that what drifts on the
     * machine over the run (other work, caches, the CPUs' clocks) weighs on
     * both sides of the ratio alike. */
    flood_counts_t total = {0};
    for (int slice = 0; slice < SLICES; slice++) {
        if (slice)
            measure(fd, 0.5, rate, NULL, NULL);   /* the broker done with the last slice's flood */
        measure(fd, seconds / SLICES, rate, &qp, &qf);
        flood_t flood;
        flood_start(&flood, conns);
        measure(fd, 0.5, rate, NULL, NULL);   /* the flood under way */
        measure(fd, seconds / SLICES, rate, &fp, &ff);
        flood_stop(&flood);
        total.sent += flood.counts.sent;
        total.refused += flood.counts.refused;
        total.accepted += flood.counts.accepted;
        total.bytes += flood.counts.bytes;
    }
    close(fd);
    double qpp = pct_ms(&qp, 0.99), qfp = pct_ms(&qf, 0.99), fpp = pct_ms(&fp, 0.99), ffp = pct_ms(&ff, 0.99);
    printf("mode=flood mix=%s codec=%s seconds=%.0f rate=%.0f flood_conns=%d"
           " quiet_produce_p50_ms=%.3f quiet_produce_p99_ms=%.3f quiet_fetch_p50_ms=%.3f quiet_fetch_p99_ms=%.3f"
           " flood_produce_p50_ms=%.3f flood_produce_p99_ms=%.3f flood_fetch_p50_ms=%.3f flood_fetch_p99_ms=%.3f"
           " produce_p99_ratio=%.2f fetch_p99_ratio=%.2f roundtrips=%zu/%zu flood_requests=%" PRIuFAST64
           " flood_refused=%" PRIuFAST64 " flood_accepted=%" PRIuFAST64 " flood_mb=%.1f errors=%d\n",
           opt_mix, codec_name(opt_codec), seconds, rate, conns, pct_ms(&qp, 0.5), qpp, pct_ms(&qf, 0.5), qfp, pct_ms(&fp, 0.5), fpp,
           pct_ms(&ff, 0.5), ffp, fpp / qpp, ffp / qfp, qp.n, fp.n, total.sent, total.refused,
           total.accepted, (double)total.bytes / 1e6,
           errors);
    return 0;
}
