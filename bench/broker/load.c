/* load.c -- load generator for Kafka-protocol brokers, on librdkafka (the C
 * client that confluent-kafka, kcat and most non-JVM clients are built on),
 * plus the two measurements of the machine's own limits that the broker's
 * figures are printed beside.
 *
 *   load produce -b HOST:PORT -t TOPIC -s SIZE [-n MAX] [-d SECONDS] [-a ACKS]
 *       Produces records of SIZE bytes (no key, compression none) to partition
 *       0 as fast as librdkafka takes them, until MAX records or SECONDS have
 *       passed, then waits for every delivery report. Throughput is counted from
 *       the first produce call to the last delivery report. linger.ms (-l,
 *       default 5) and batch.size (-B, default 1 MiB) are set for throughput;
 *       the delivery-report latency under that saturating load is reported too
 *       (it is mostly time spent queued in the client).
 *   load consume -b HOST:PORT -t TOPIC -s SIZE -n COUNT
 *       Reads COUNT records of partition 0 from offset 0 (the simple consumer
 *       API, no group), with large fetches, and checks each: offsets
 *       consecutive, size SIZE, and the sequence number the producer wrote in
 *       the record equal to its offset (true when one producer wrote the topic
 *       from empty without duplicates).
 *   load latency -b HOST:PORT -t TOPIC -s SIZE -r RATE -d SECONDS [-W WARMUP] [-a ACKS]
 *       Produces at a fixed RATE (records/s, open loop) with linger.ms 0 (-l),
 *       and consumes the same partition in the same process (a consumer thread
 *       started at the partition's end before the first record). Each record
 *       carries the time it was due to be sent; latencies are taken from that
 *       time (so a client that falls behind its schedule is charged for it):
 *       ack latency when its delivery report arrives, end-to-end latency when
 *       the consumer receives it. Records due in the first WARMUP seconds are
 *       not counted. -T adds a per-second timeline on stderr. SIGUSR1 ends
 *       the run early: nothing is sent after it, and SECONDS becomes the time
 *       measured so far (so -d may be an upper bound, and the caller ends the
 *       run when what it measures beside it is over). "load: latency:
 *       measuring" on stderr marks the end of the warm-up.
 *   load failover -b HOSTS -t TOPIC -p N -V PID [-E ID] [-k KILL|TERM] [-r RATE] [-W WARMUP] [-d WAIT]
 *       Produces SIZE-byte records (acks -a, default all; linger.ms 0) round-robin
 *       to partitions 0..N-1 at RATE records/s in total. Once every partition
 *       has had a record acknowledged by broker ID (its leader) and WARMUP
 *       seconds have passed, it sends the signal to PID (that broker) itself
 *       and notes the time; then, for each partition, the time until a record
 *       of it is acknowledged by another broker (the delivery report says
 *       which broker acknowledged it). It stops half a second after every
 *       partition has had one, or WAIT seconds after the kill. Reports the
 *       first, median, 90th percentile and last partition (all_ms), the first
 *       acknowledgement from any broker, those broker ID still gave after the
 *       signal, when PID exited, and (-P) the survivors' CPU over the failover.
 *   load tcp [-d SECONDS] [-D DIR]
 *       The machine's loopback TCP throughput over one connection, twice: the
 *       sender write()s 1 MiB buffers, then sendfile()s 1 MiB slices of a
 *       64 MiB file (in DIR, page-cached, as a broker's Fetch does); the
 *       receiver read()s into a 1 MiB buffer. Each for SECONDS (default 2).
 *   load disk -D DIR [-S MIB]
 *       Sequential write throughput to DIR's file system: MIB (default 2048)
 *       MiB written in 1 MiB write()s to a new file, then one fdatasync; the
 *       file is removed (-K: kept, e.g. so that the memory it used is not
 *       handed to what runs next). Reports the whole (durable) rate and the page-cache
 *       rate (the writes alone; also for each half of them: on a VM whose
 *       freed memory goes back to the hypervisor, the first pages written may
 *       be ones the guest freed just before and are much faster to fill).
 *   load version
 *       Prints the librdkafka version it runs on.
 *
 * Output: one line of key=value on stdout, e.g.
 *   mode=produce size=100 acks=-1 records=5000000 bytes=500000000 duration_s=5.12
 *   records_per_s=976562 mb_per_s=97.66 errors=0 valid=1 ...
 * MB are 10^6 bytes of record value (payload), as Kafka's perf tools count.
 * Errors (a delivery report with an error, a consumed record with the wrong
 * size, offset or sequence, a consumer error) are counted, listed as
 * err_<NAME>=<count>, and make valid=0. Exit status 0 when valid, 1 when not,
 * 2 on a usage or set-up error.
 *
 * -P PID[,PID...] (produce, consume, latency) also reports those processes'
 * CPU time (utime+stime from /proc/PID/stat) over the measured phase: the
 * brokers'. server_* figures are their sum; with more than one PID, each
 * one's is listed too (server_cores_each, server_cpu_us_per_record_each).
 * client_cpu_s is this process's own (every librdkafka thread included).
 *
 * Build: cc -O2 -o load load.c $(pkg-config --cflags --libs rdkafka) -lpthread
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

/* ---- time ---- */
static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_until_ns(uint64_t t)
{
    struct timespec ts = {(time_t)(t / 1000000000u), (long)(t % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

static double self_cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

/* utime+stime of a process, seconds; -1 if it cannot be read */
static double proc_cpu_s(int pid)
{
    if (pid <= 0)
        return -1;
    char path[64], buf[2048];
    snprintf(path, sizeof(path), "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');   /* the command name may hold spaces */
    if (!p)
        return -1;
    unsigned long ut = 0, st = 0;
    /* after ")": state(3) ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime(14) stime(15) */
    if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
        return -1;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

#define MAX_PIDS 8
static int opt_pids[MAX_PIDS];        /* -P: the brokers whose CPU time is reported */
static int opt_npids;

/* CPU time of every -P process: each[i] and the sum (returned); -1 when
 * there is no -P or one of them cannot be read (e.g. it has exited) */
typedef struct {
    double each[MAX_PIDS];
    double sum;
} srv_cpu_t;

static srv_cpu_t srv_cpu(void)
{
    srv_cpu_t c = {.sum = opt_npids ? 0 : -1};
    for (int i = 0; i < opt_npids; i++) {
        c.each[i] = proc_cpu_s(opt_pids[i]);
        if (c.each[i] < 0 || c.sum < 0)
            c.sum = -1;
        else
            c.sum += c.each[i];
    }
    return c;
}

/* ---- latency histogram: log-linear, 64 sub-buckets per power of two (1.6%) ---- */
#define H_SUB 64
#define H_BUCKETS (64 * H_SUB)
typedef struct {
    uint64_t c[H_BUCKETS];
    uint64_t n, max;
    double sum;
} hist_t;

static int h_index(uint64_t v)
{
    if (v < 2 * H_SUB)
        return (int)v;
    int e = 63 - __builtin_clzll(v);
    int shift = e - 6;
    return shift * H_SUB + (int)(v >> shift);
}

static uint64_t h_value(int idx)
{
    if (idx < 2 * H_SUB)
        return (uint64_t)idx;
    int shift = idx / H_SUB - 1;
    uint64_t sub = (uint64_t)(idx % H_SUB + H_SUB);
    return (sub << shift) + ((1ull << shift) >> 1);   /* the bucket's middle */
}

static void h_add(hist_t *h, uint64_t v)
{
    h->c[h_index(v)]++;
    h->n++;
    h->sum += (double)v;
    if (v > h->max)
        h->max = v;
}

static double h_pct_ms(const hist_t *h, double q)
{
    if (!h->n)
        return -1;
    uint64_t want = (uint64_t)(q * (double)h->n + 0.999999);
    if (want < 1)
        want = 1;
    uint64_t seen = 0;
    for (int i = 0; i < H_BUCKETS; i++) {
        seen += h->c[i];
        if (seen >= want) {
            uint64_t v = h_value(i);
            return (double)(v > h->max ? h->max : v) / 1e6;
        }
    }
    return (double)h->max / 1e6;
}

static void h_print(const char *prefix, const hist_t *h)
{
    if (!h->n) {
        printf(" %s_n=0", prefix);
        return;
    }
    printf(" %s_n=%" PRIu64 " %s_p50_ms=%.3f %s_p99_ms=%.3f %s_p999_ms=%.3f %s_max_ms=%.3f %s_mean_ms=%.3f", prefix,
           h->n, prefix, h_pct_ms(h, 0.50), prefix, h_pct_ms(h, 0.99), prefix, h_pct_ms(h, 0.999), prefix,
           (double)h->max / 1e6, prefix, h->sum / (double)h->n / 1e6);
}

/* ---- per-second timeline (latency mode, -T): by due time, from the start ---- */
#define TL_MAX 3600
typedef struct {
    uint64_t ack_n, ack_max, ack_slow, e2e_n, e2e_max, e2e_slow;
} tl_sec_t;
static tl_sec_t *timeline;   /* NULL unless -T */
static uint64_t tl_t0;
#define TL_SLOW_NS 3000000u  /* 3 ms */

static void tl_add(uint64_t due, uint64_t lat, int e2e)
{
    if (!timeline || due < tl_t0)
        return;
    uint64_t sec = (due - tl_t0) / 1000000000u;
    if (sec >= TL_MAX)
        return;
    tl_sec_t *t = &timeline[sec];
    if (e2e) {
        t->e2e_n++;
        t->e2e_slow += lat > TL_SLOW_NS;
        if (lat > t->e2e_max)
            t->e2e_max = lat;
    } else {
        t->ack_n++;
        t->ack_slow += lat > TL_SLOW_NS;
        if (lat > t->ack_max)
            t->ack_max = lat;
    }
}

/* ---- errors, by name ---- */
#define MAX_ERRS 32
static struct {
    char name[48];
    _Atomic uint64_t n;
} errs[MAX_ERRS];
static pthread_mutex_t errs_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint64_t nerrors;

static void count_error(const char *name)
{
    nerrors++;
    pthread_mutex_lock(&errs_lock);
    int i;
    for (i = 0; i < MAX_ERRS - 1 && errs[i].name[0]; i++)
        if (strcmp(errs[i].name, name) == 0)
            break;
    if (!errs[i].name[0])
        snprintf(errs[i].name, sizeof(errs[i].name), "%s", i == MAX_ERRS - 1 ? "OTHER" : name);
    errs[i].n++;
    pthread_mutex_unlock(&errs_lock);
}

static void print_errors(void)
{
    printf(" errors=%" PRIu64 " valid=%d", (uint64_t)nerrors, nerrors == 0);
    for (int i = 0; i < MAX_ERRS && errs[i].name[0]; i++)
        printf(" err_%s=%" PRIu64, errs[i].name, (uint64_t)errs[i].n);
}

/* ---- settings ---- */
static const char *opt_brokers = "127.0.0.1:9092";
static const char *opt_topic = "bench";
static const char *opt_dir = ".";
static int opt_size = 100;
static long long opt_count = 0;      /* produce: max records (0: no limit); consume: records to read */
static double opt_duration = 0;      /* produce: max seconds; latency: measured seconds; tcp: per test */
static double opt_warmup = 1;
static const char *opt_acks = "all";
static const char *opt_linger = NULL; /* default by mode */
static const char *opt_batch = "1048576";
static double opt_rate = 10000;
static int opt_partitions = 1;        /* failover: partitions 0..N-1 */
static int opt_victim_pid;            /* failover: the broker to kill */
static int opt_victim_id = 1;         /* failover: its broker id */
static const char *opt_signal = "KILL";
static long opt_disk_mib = 2048;
static int opt_idempotence = 0;
static const char *opt_extra[32];     /* -X key=value: any librdkafka property */
static int opt_nextra;
static int opt_verbose;
static int opt_keep_file;             /* disk: leave the file (its memory is not freed for what runs next) */
static int opt_no_consumer;           /* latency: producer only (-N) */
static int opt_one_by_one;            /* latency: rd_kafka_produce() per record, not produce_batch */

static void die(const char *fmt, const char *arg)
{
    fprintf(stderr, "load: ");
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    exit(2);
}

static void set(rd_kafka_conf_t *conf, const char *k, const char *v)
{
    char err[512];
    if (rd_kafka_conf_set(conf, k, v, err, sizeof(err)) != RD_KAFKA_CONF_OK) {
        fprintf(stderr, "load: %s=%s: %s\n", k, v, err);
        exit(2);
    }
}

static void log_cb(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
    (void)rk;
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    localtime_r(&ts.tv_sec, &tm);
    fprintf(stderr, "%02d:%02d:%02d.%03ld load: librdkafka %d %s: %s\n", tm.tm_hour, tm.tm_min, tm.tm_sec,
            ts.tv_nsec / 1000000, level, fac, buf);
}

static void error_cb(rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
    (void)rk;
    (void)opaque;
    fprintf(stderr, "load: librdkafka error %s: %s\n", rd_kafka_err2name((rd_kafka_resp_err_t)err), reason);
    /* transient connection errors are retried by the client; they are logged,
     * and counted only when they are fatal */
    if (err == RD_KAFKA_RESP_ERR__FATAL || err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN)
        count_error(rd_kafka_err2name((rd_kafka_resp_err_t)err));
}

static rd_kafka_conf_t *base_conf(void)
{
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    set(conf, "bootstrap.servers", opt_brokers);
    set(conf, "client.id", "kipper-bench");
    set(conf, "socket.nagle.disable", "true");
    rd_kafka_conf_set_log_cb(conf, log_cb);
    rd_kafka_conf_set_error_cb(conf, error_cb);
    return conf;
}

static void apply_extra(rd_kafka_conf_t *conf, const char *prefix)
{
    /* -X producer.k=v / consumer.k=v / k=v (both) */
    for (int i = 0; i < opt_nextra; i++) {
        char kv[512];
        snprintf(kv, sizeof(kv), "%s", opt_extra[i]);
        char *eq = strchr(kv, '=');
        if (!eq)
            die("-X wants key=value, got %s", opt_extra[i]);
        *eq = 0;
        const char *k = kv;
        if (strncmp(k, "producer.", 9) == 0 || strncmp(k, "consumer.", 9) == 0) {
            if (strncmp(k, prefix, 9) != 0)
                continue;
            k += 9;
        }
        set(conf, k, eq + 1);
    }
}

static rd_kafka_t *new_client(rd_kafka_type_t type, rd_kafka_conf_t *conf)
{
    char err[512];
    rd_kafka_t *rk = rd_kafka_new(type, conf, err, sizeof(err));
    if (!rk)
        die("rd_kafka_new: %s", err);
    return rk;
}

/* ---- the payload: [seq u64][due ns u64][filler] ---- */
#define HDR 16
static void fill_payload(char *buf, int size)
{
    for (int i = HDR; i < size; i++)
        buf[i] = (char)('a' + i % 26);
}

static void put_u64(char *p, uint64_t v) { memcpy(p, &v, 8); }
static uint64_t get_u64(const char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* ---- producer state shared with the delivery-report callback ---- */
typedef struct {
    hist_t ack;             /* delivery-report latency (from the record's due time) */
    uint64_t delivered;     /* successfully */
    uint64_t failed;
    uint64_t last_dr_ns;
    uint64_t count_from_ns; /* records due before this are not put in the histogram */
} prod_stats_t;

static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    prod_stats_t *s = opaque;
    uint64_t t = now_ns();
    s->last_dr_ns = t;
    if (m->err) {
        s->failed++;
        count_error(rd_kafka_err2name(m->err));
        return;
    }
    s->delivered++;
    uint64_t due = (uint64_t)(uintptr_t)m->_private;
    if (due >= s->count_from_ns)
        h_add(&s->ack, t - due);
    tl_add(due, t - due, 0);
}

static rd_kafka_conf_t *producer_conf(const char *linger)
{
    rd_kafka_conf_t *conf = base_conf();
    set(conf, "acks", opt_acks);
    set(conf, "linger.ms", linger);
    set(conf, "batch.size", opt_batch);
    set(conf, "batch.num.messages", "100000");
    set(conf, "compression.codec", "none");
    set(conf, "queue.buffering.max.messages", "1000000");
    set(conf, "queue.buffering.max.kbytes", "262144");
    set(conf, "enable.idempotence", opt_idempotence ? "true" : "false");
    return conf;
}

static rd_kafka_t *new_producer(prod_stats_t *st, const char *linger)
{
    rd_kafka_conf_t *conf = producer_conf(linger);
    rd_kafka_conf_set_dr_msg_cb(conf, dr_cb);
    rd_kafka_conf_set_opaque(conf, st);
    apply_extra(conf, "producer.");
    return new_client(RD_KAFKA_PRODUCER, conf);
}

/* produce one record; waits (serving delivery reports) while the client's queue is full */
static int produce_one(rd_kafka_t *rk, rd_kafka_topic_t *rkt, char *buf, uint64_t seq, uint64_t due, int poll_on_full)
{
    put_u64(buf, seq);
    put_u64(buf + 8, due);
    for (;;) {
        if (rd_kafka_produce(rkt, 0, RD_KAFKA_MSG_F_COPY, buf, (size_t)opt_size, NULL, 0,
                             (void *)(uintptr_t)due) == 0)
            return 0;
        rd_kafka_resp_err_t e = rd_kafka_last_error();
        if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
            count_error(rd_kafka_err2name(e));
            return -1;
        }
        if (poll_on_full)
            rd_kafka_poll(rk, 1);
        else
            usleep(200);
    }
}

static void print_common(const char *mode)
{
    printf("mode=%s topic=%s size=%d acks=%s", mode, opt_topic, opt_size, opt_acks);
}

/* server_*: summed over the -P processes; with more than one, also each
 * one's (in -P order, '/'-separated) */
static void print_cpu(double c0, double c1, srv_cpu_t s0, srv_cpu_t s1, double dur, uint64_t records)
{
    printf(" client_cpu_s=%.3f client_cores=%.2f", c1 - c0, dur > 0 ? (c1 - c0) / dur : 0);
    if (s0.sum < 0 || s1.sum < 0)
        return;
    printf(" server_cpu_s=%.3f server_cores=%.2f server_cpu_us_per_record=%.3f", s1.sum - s0.sum,
           dur > 0 ? (s1.sum - s0.sum) / dur : 0, records ? (s1.sum - s0.sum) * 1e6 / (double)records : 0);
    if (opt_npids < 2)
        return;
    printf(" server_pids=");
    for (int i = 0; i < opt_npids; i++)
        printf("%s%d", i ? "/" : "", opt_pids[i]);
    printf(" server_cores_each=");
    for (int i = 0; i < opt_npids; i++)
        printf("%s%.2f", i ? "/" : "", dur > 0 ? (s1.each[i] - s0.each[i]) / dur : 0);
    printf(" server_cpu_us_per_record_each=");
    for (int i = 0; i < opt_npids; i++)
        printf("%s%.3f", i ? "/" : "", records ? (s1.each[i] - s0.each[i]) * 1e6 / (double)records : 0);
}

static int mode_produce(void)
{
    static prod_stats_t st;
    rd_kafka_t *rk = new_producer(&st, opt_linger ? opt_linger : "5");
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, opt_topic, NULL);
    char *buf = malloc((size_t)opt_size);
    fill_payload(buf, opt_size);

    /* wait for the partition's leader to be known, so set-up is not timed */
    const struct rd_kafka_metadata *md = NULL;
    for (int i = 0; i < 100; i++) {
        if (rd_kafka_metadata(rk, 0, rkt, &md, 2000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
            int ok = md->topic_cnt == 1 && md->topics[0].err == 0 && md->topics[0].partition_cnt > 0 &&
                     md->topics[0].partitions[0].leader >= 0;
            rd_kafka_metadata_destroy(md);
            if (ok)
                break;
        }
        usleep(100000);
    }

    double c0 = self_cpu_s();
    srv_cpu_t s0 = srv_cpu();
    uint64_t t0 = now_ns();
    uint64_t deadline = opt_duration > 0 ? t0 + (uint64_t)(opt_duration * 1e9) : UINT64_MAX;
    uint64_t limit = opt_count > 0 ? (uint64_t)opt_count : UINT64_MAX;
    uint64_t sent = 0;
    uint64_t t = t0;
    while (sent < limit) {
        /* the clock is read every 64 records (it costs ~25 ns on this VM,
         * librdkafka reads it several times per record too) */
        if ((sent & 63) == 0 && (t = now_ns()) >= deadline)
            break;
        if (produce_one(rk, rkt, buf, sent, t, 1) < 0)
            break;
        sent++;
        if ((sent & 1023) == 0)
            rd_kafka_poll(rk, 0);
    }
    uint64_t t_sent = now_ns();
    rd_kafka_resp_err_t fe = rd_kafka_flush(rk, 120000);
    if (fe)
        count_error("FLUSH_TIMEOUT");
    uint64_t t1 = st.last_dr_ns ? st.last_dr_ns : now_ns();
    double c1 = self_cpu_s();
    srv_cpu_t s1 = srv_cpu();
    double dur = (double)(t1 - t0) / 1e9;

    print_common("produce");
    printf(" linger_ms=%s batch_size=%s idempotence=%d records=%" PRIu64 " sent=%" PRIu64 " bytes=%" PRIu64
           " duration_s=%.3f send_s=%.3f records_per_s=%.0f mb_per_s=%.2f",
           opt_linger ? opt_linger : "5", opt_batch, opt_idempotence, st.delivered, sent,
           st.delivered * (uint64_t)opt_size, dur, (double)(t_sent - t0) / 1e9, (double)st.delivered / dur,
           (double)st.delivered * opt_size / dur / 1e6);
    if (st.delivered != sent && !st.failed)
        count_error("UNDELIVERED");
    h_print("ack", &st.ack);
    print_cpu(c0, c1, s0, s1, dur, st.delivered);
    print_errors();
    printf("\n");
    fflush(stdout);
    free(buf);
    rd_kafka_topic_destroy(rkt);
    rd_kafka_destroy(rk);
    return nerrors ? 1 : 0;
}

/* ---- consumer ---- */
typedef struct {
    int64_t next_offset;    /* expected */
    _Atomic uint64_t received;
    uint64_t bytes;
    _Atomic uint64_t want;   /* latency: lowered when SIGUSR1 ends the run early */
    uint64_t seq_mismatch;
    uint64_t last_ns;
    uint64_t count_from_ns;
    int check_seq;
    hist_t e2e;
} cons_stats_t;

static void consume_cb(rd_kafka_message_t *m, void *opaque)
{
    cons_stats_t *c = opaque;
    if (m->err) {
        if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
            count_error(rd_kafka_err2name(m->err));
            fprintf(stderr, "load: consumer: %s\n", rd_kafka_message_errstr(m));
        }
        return;
    }
    uint64_t t = now_ns();
    c->last_ns = t;
    if (m->offset != c->next_offset) {
        if (c->received < c->want) {
            count_error("OFFSET_GAP");
            if (opt_verbose || nerrors < 5)
                fprintf(stderr, "load: consumer: offset %" PRId64 " where %" PRId64 " was expected\n", m->offset,
                        c->next_offset);
        }
    }
    c->next_offset = m->offset + 1;
    if (c->received >= c->want)
        return;
    c->received++;
    c->bytes += m->len;
    if (m->len != (size_t)opt_size) {
        count_error("BADLEN");
        return;
    }
    uint64_t seq = get_u64(m->payload), due = get_u64((const char *)m->payload + 8);
    if (c->check_seq && seq != (uint64_t)m->offset) {
        c->seq_mismatch++;
        if (c->seq_mismatch <= 3)
            fprintf(stderr, "load: consumer: offset %" PRId64 " holds sequence %" PRIu64 "\n", m->offset, seq);
    }
    if (due >= c->count_from_ns)
        h_add(&c->e2e, t - due);
    tl_add(due, t - due, 1);
}

static rd_kafka_t *new_consumer(int for_latency)
{
    rd_kafka_conf_t *conf = base_conf();
    set(conf, "enable.partition.eof", "false");
    set(conf, "fetch.wait.max.ms", for_latency ? "100" : "100");
    set(conf, "fetch.min.bytes", "1");
    set(conf, "fetch.error.backoff.ms", "10");
    set(conf, "fetch.message.max.bytes", "8388608");   /* per partition */
    set(conf, "fetch.max.bytes", "16777216");
    set(conf, "queued.min.messages", "1000000");
    set(conf, "queued.max.messages.kbytes", "262144");
    apply_extra(conf, "consumer.");
    return new_client(RD_KAFKA_CONSUMER, conf);
}

static int mode_consume(void)
{
    static cons_stats_t c;
    if (opt_count <= 0)
        die("consume needs -n COUNT%s", "");
    c.want = (uint64_t)opt_count;
    c.check_seq = 1;
    rd_kafka_t *rk = new_consumer(0);
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, opt_topic, NULL);
    uint64_t deadline_idle = 30ull * 1000000000u;   /* give up after 30 s without a record */

    double c0 = self_cpu_s();
    srv_cpu_t s0 = srv_cpu();
    uint64_t t0 = now_ns();
    if (rd_kafka_consume_start(rkt, 0, 0) < 0)
        die("consume_start: %s", rd_kafka_err2str(rd_kafka_last_error()));
    uint64_t last_progress = t0, seen = 0;
    while (c.received < c.want) {
        rd_kafka_consume_callback(rkt, 0, 100, consume_cb, &c);
        uint64_t t = now_ns();
        if (c.received != seen) {
            seen = c.received;
            last_progress = t;
        } else if (t - last_progress > deadline_idle) {
            count_error("STALLED");
            fprintf(stderr, "load: consumer: no record for 30 s at offset %" PRId64 " (%" PRIu64 " of %" PRIu64
                            " read)\n", c.next_offset, c.received, c.want);
            break;
        }
    }
    uint64_t t1 = c.last_ns ? c.last_ns : now_ns();
    double c1 = self_cpu_s();
    srv_cpu_t s1 = srv_cpu();
    rd_kafka_consume_stop(rkt, 0);
    double dur = (double)(t1 - t0) / 1e9;
    print_common("consume");
    printf(" records=%" PRIu64 " bytes=%" PRIu64 " duration_s=%.3f records_per_s=%.0f mb_per_s=%.2f seq_mismatch=%" PRIu64,
           c.received, c.bytes, dur, (double)c.received / dur, (double)c.bytes / dur / 1e6, c.seq_mismatch);
    print_cpu(c0, c1, s0, s1, dur, c.received);
    print_errors();
    printf("\n");
    fflush(stdout);
    rd_kafka_topic_destroy(rkt);
    rd_kafka_destroy(rk);
    return nerrors ? 1 : 0;
}

/* ---- latency: fixed-rate producer + consumer in one process ---- */
static atomic_int poll_stop;
static volatile sig_atomic_t latency_end;   /* SIGUSR1: stop sending now */

static void on_usr1(int sig)
{
    (void)sig;
    latency_end = 1;
}

static void *poll_thread(void *arg)
{
    rd_kafka_t *rk = arg;
    while (!atomic_load(&poll_stop))
        rd_kafka_poll(rk, 50);
    return NULL;
}

typedef struct {
    rd_kafka_topic_t *rkt;
    cons_stats_t *c;
    atomic_int stop;
} cons_thread_arg_t;

static void *consume_thread(void *arg)
{
    cons_thread_arg_t *a = arg;
    while (!atomic_load(&a->stop) && a->c->received < a->c->want)
        rd_kafka_consume_callback(a->rkt, 0, 50, consume_cb, a->c);
    return NULL;
}

static int mode_latency(void)
{
    static prod_stats_t st;
    static cons_stats_t c;
    if (opt_duration <= 0)
        opt_duration = 10;
    if (opt_rate <= 0)
        die("latency needs -r RATE > 0%s", "");
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);   /* wake on time, not up to 50 us late */
    struct sigaction sa = {.sa_handler = on_usr1};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);

    rd_kafka_t *prk = new_producer(&st, opt_linger ? opt_linger : "0");
    rd_kafka_topic_t *prkt = rd_kafka_topic_new(prk, opt_topic, NULL);
    rd_kafka_t *crk = new_consumer(1);
    rd_kafka_topic_t *crkt = rd_kafka_topic_new(crk, opt_topic, NULL);

    /* start the consumer at the partition's current end, once it answers */
    int64_t lo = -1, hi = -1;
    rd_kafka_resp_err_t e = RD_KAFKA_RESP_ERR__TIMED_OUT;
    for (int i = 0; i < 50 && e; i++) {
        e = rd_kafka_query_watermark_offsets(crk, opt_topic, 0, &lo, &hi, 2000);
        if (e)
            usleep(200000);
    }
    if (e)
        die("cannot read the partition's offsets: %s", rd_kafka_err2name(e));
    uint64_t total = (uint64_t)((opt_warmup + opt_duration) * opt_rate);
    c.want = total;
    c.next_offset = hi;
    c.check_seq = 0;
    if (!opt_no_consumer && rd_kafka_consume_start(crkt, 0, hi) < 0)
        die("consume_start: %s", rd_kafka_err2str(rd_kafka_last_error()));
    /* and the producer connected (metadata known) */
    const struct rd_kafka_metadata *md;
    if (rd_kafka_metadata(prk, 0, prkt, &md, 5000) == RD_KAFKA_RESP_ERR_NO_ERROR)
        rd_kafka_metadata_destroy(md);
    usleep(300000);   /* let the consumer's first fetch go out */

    pthread_t pt, ct;
    cons_thread_arg_t ca = {crkt, &c, 0};
    pthread_create(&pt, NULL, poll_thread, prk);
    if (!opt_no_consumer)
        pthread_create(&ct, NULL, consume_thread, &ca);

    double interval = 1e9 / opt_rate;
    uint64_t t0 = now_ns();
    tl_t0 = t0;
    uint64_t tw = t0 + (uint64_t)(opt_warmup * 1e9);
    st.count_from_ns = tw;
    c.count_from_ns = tw;
    double c0 = 0;
    srv_cpu_t s0 = {.sum = -1};
    int measuring = 0;
    uint64_t sent = 0, behind_max = 0;
    /* Each wake-up hands every record due by then to the client in one
     * rd_kafka_produce_batch() call (one lock and one wake-up of its I/O
     * thread for all of them, instead of one per record). */
    enum { MAXB = 4096 };
    rd_kafka_message_t *msgs = calloc(MAXB, sizeof(*msgs));
    char *bufs = malloc((size_t)MAXB * (size_t)opt_size);
    for (int i = 0; i < MAXB; i++)
        fill_payload(bufs + (size_t)i * (size_t)opt_size, opt_size);
    while (sent < total) {
        uint64_t due = t0 + (uint64_t)((double)sent * interval);
        uint64_t t = now_ns();
        if (t < due) {
            sleep_until_ns(due);
            t = now_ns();
        }
        if (latency_end) {   /* SIGUSR1: what was sent is the run */
            total = sent;
            c.want = total;
            break;
        }
        if (!measuring && due >= tw) {
            measuring = 1;
            c0 = self_cpu_s();
            s0 = srv_cpu();
            fprintf(stderr, "load: latency: measuring\n");
            fflush(stderr);
        }
        if (t - due > behind_max)
            behind_max = t - due;
        int n = 0;
        for (; n < MAXB && sent + (uint64_t)n < total; n++) {
            uint64_t d = t0 + (uint64_t)((double)(sent + (uint64_t)n) * interval);
            if (d > t)
                break;
            char *b = bufs + (size_t)n * (size_t)opt_size;
            put_u64(b, sent + (uint64_t)n);
            put_u64(b + 8, d);
            msgs[n] = (rd_kafka_message_t){.payload = b, .len = (size_t)opt_size, ._private = (void *)(uintptr_t)d};
        }
        if (opt_one_by_one) {
            for (int i = 0; i < n; i++)
                if (produce_one(prk, prkt, msgs[i].payload, get_u64(msgs[i].payload),
                                (uint64_t)(uintptr_t)msgs[i]._private, 0) < 0)
                    goto out;
        } else if (rd_kafka_produce_batch(prkt, 0, RD_KAFKA_MSG_F_COPY, msgs, n) != n) {
            for (int i = 0; i < n; i++)   /* the ones refused (queue full): one by one, waiting */
                if (msgs[i].err && produce_one(prk, prkt, msgs[i].payload, get_u64(msgs[i].payload),
                                               (uint64_t)(uintptr_t)msgs[i]._private, 0) < 0)
                    goto out;
        }
        sent += (uint64_t)n;
    }
out:
    free(msgs);
    free(bufs);
    uint64_t t_end_sched = t0 + (uint64_t)((double)total * interval);
    if (t_end_sched < tw)   /* ended during the warm-up: nothing measured */
        t_end_sched = tw;
    double c1 = self_cpu_s();
    srv_cpu_t s1 = srv_cpu();
    /* Not rd_kafka_flush(): it would serve delivery reports on this thread
     * too, at the same time as the poll thread. Wait for the client's queue
     * (messages and delivery reports not yet served) to empty instead. */
    uint64_t flush_end = now_ns() + 30ull * 1000000000u;
    while (rd_kafka_outq_len(prk) > 0 && now_ns() < flush_end)
        usleep(1000);
    /* wait for the consumer to see everything (at most 10 s more) */
    uint64_t give_up = now_ns() + 10ull * 1000000000u;
    while (!opt_no_consumer && c.received < c.want && now_ns() < give_up)
        usleep(1000);
    atomic_store(&ca.stop, 1);
    if (!opt_no_consumer)
        pthread_join(ct, NULL);
    atomic_store(&poll_stop, 1);
    pthread_join(pt, NULL);
    if (!opt_no_consumer && c.received < sent) {
        count_error("NOT_CONSUMED");
        fprintf(stderr, "load: latency: %" PRIu64 " records sent, %" PRIu64 " consumed\n", sent, c.received);
    }
    if (st.delivered + st.failed < sent)
        count_error("UNDELIVERED");
    if (timeline) {
        struct timespec rt;
        clock_gettime(CLOCK_REALTIME, &rt);
        time_t start = rt.tv_sec - (time_t)((now_ns() - t0) / 1000000000u);
        fprintf(stderr, "timeline of %s (size %d, %.0f/s), by due second: records acked, max ack ms, acked > 3 ms, "
                        "consumed, max e2e ms, e2e > 3 ms\n", opt_topic, opt_size, opt_rate);
        for (uint64_t i = 0; i < TL_MAX && (timeline[i].ack_n || timeline[i].e2e_n); i++) {
            time_t w = start + (time_t)i;
            struct tm tm;
            localtime_r(&w, &tm);
            fprintf(stderr, "  %02d:%02d:%02d +%3" PRIu64 "s %7" PRIu64 " %8.2f %6" PRIu64 " %7" PRIu64 " %8.2f %6" PRIu64 "\n",
                    tm.tm_hour, tm.tm_min, tm.tm_sec, i, timeline[i].ack_n, timeline[i].ack_max / 1e6,
                    timeline[i].ack_slow, timeline[i].e2e_n, timeline[i].e2e_max / 1e6, timeline[i].e2e_slow);
        }
    }
    double dur = (double)(t_end_sched - tw) / 1e9;

    print_common("latency");
    printf(" linger_ms=%s rate=%.0f warmup_s=%.1f duration_s=%.3f records=%" PRIu64 " delivered=%" PRIu64
           " consumed=%" PRIu64 " behind_max_ms=%.3f",
           opt_linger ? opt_linger : "0", opt_rate, opt_warmup, dur, sent, st.delivered, c.received,
           (double)behind_max / 1e6);
    h_print("ack", &st.ack);
    h_print("e2e", &c.e2e);
    print_cpu(c0, c1, s0, s1, dur, st.ack.n);
    print_errors();
    printf("\n");
    fflush(stdout);
    if (!opt_no_consumer)
        rd_kafka_consume_stop(crkt, 0);
    rd_kafka_topic_destroy(crkt);
    rd_kafka_destroy(crk);
    rd_kafka_topic_destroy(prkt);
    rd_kafka_destroy(prk);
    return nerrors ? 1 : 0;
}

/* ---- failover: acks=all to N partitions, a leader killed, time to the next acks ---- */
typedef struct {
    uint64_t first_any;    /* first successful ack after the kill, from any broker (ns; 0: none) */
    uint64_t first_new;    /* first after the kill from a broker other than the victim */
    int32_t new_broker;    /* who gave it */
    int warm;              /* acked by the victim before the kill */
} fo_part_t;

static struct {
    fo_part_t *p;
    _Atomic uint64_t t_kill;   /* monotonic ns; 0 until the signal is sent */
    _Atomic int warm;          /* partitions acked by the victim so far */
    _Atomic int recovered;     /* partitions with first_new */
    uint64_t delivered, failed, victim_after_kill, other_before_kill;
} fo;

/* delivery reports: the poll thread only */
static void fo_dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    (void)opaque;
    uint64_t t = now_ns(), tk = atomic_load(&fo.t_kill);
    if (m->err) {
        fo.failed++;
        count_error(rd_kafka_err2name(m->err));
        return;
    }
    fo.delivered++;
    if (m->partition < 0 || m->partition >= opt_partitions)
        return;
    fo_part_t *p = &fo.p[m->partition];
    int32_t by = rd_kafka_message_broker_id(m);
    if (!tk) {
        if (by == opt_victim_id && !p->warm) {
            p->warm = 1;
            atomic_fetch_add(&fo.warm, 1);
        } else if (by != opt_victim_id) {
            fo.other_before_kill++;
        }
        return;
    }
    if (!p->first_any)
        p->first_any = t;
    if (by == opt_victim_id) {
        fo.victim_after_kill++;
    } else if (!p->first_new) {
        p->first_new = t;
        p->new_broker = by;
        atomic_fetch_add(&fo.recovered, 1);
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int proc_gone(int pid)   /* exited (a zombie not yet reaped counts) */
{
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 1;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    return !p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X';
}

static int mode_failover(void)
{
    if (opt_partitions < 1)
        die("failover needs -p PARTITIONS >= 1%s", "");
    if (opt_victim_pid <= 0)
        die("failover needs -V PID (the broker to kill)%s", "");
    int sig = strcmp(opt_signal, "KILL") == 0 ? SIGKILL : strcmp(opt_signal, "TERM") == 0 ? SIGTERM : 0;
    if (!sig)
        die("-k wants KILL or TERM, not %s", opt_signal);
    if (opt_duration <= 0)
        opt_duration = 60;   /* the longest wait after the kill */
    fo.p = calloc((size_t)opt_partitions, sizeof(*fo.p));

    rd_kafka_conf_t *conf = producer_conf(opt_linger ? opt_linger : "0");
    rd_kafka_conf_set_dr_msg_cb(conf, fo_dr_cb);
    apply_extra(conf, "producer.");
    /* the client settings that shape what a failover costs it */
    static const char *const shown[] = {"topic.metadata.refresh.fast.interval.ms", "retry.backoff.ms",
                                        "reconnect.backoff.ms", "reconnect.backoff.max.ms", "message.timeout.ms",
                                        "socket.connection.setup.timeout.ms"};
    char shown_vals[6][64];
    for (int i = 0; i < 6; i++) {
        size_t len = sizeof(shown_vals[i]);
        if (rd_kafka_conf_get(conf, shown[i], shown_vals[i], &len) != RD_KAFKA_CONF_OK)
            snprintf(shown_vals[i], sizeof(shown_vals[i]), "?");
    }
    rd_kafka_t *rk = new_client(RD_KAFKA_PRODUCER, conf);
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, opt_topic, NULL);

    /* every partition known, with a leader */
    const struct rd_kafka_metadata *md = NULL;
    int ok = 0;
    for (int i = 0; i < 100 && !ok; i++) {
        if (rd_kafka_metadata(rk, 0, rkt, &md, 2000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
            ok = md->topic_cnt == 1 && md->topics[0].err == 0 && md->topics[0].partition_cnt == opt_partitions;
            for (int k = 0; ok && k < md->topics[0].partition_cnt; k++)
                ok = md->topics[0].partitions[k].leader == opt_victim_id;
            rd_kafka_metadata_destroy(md);
        }
        if (!ok)
            usleep(100000);
    }
    if (!ok)
        die("failover: topic %s has not got -p partitions all led by broker -E", opt_topic);

    pthread_t pt;
    pthread_create(&pt, NULL, poll_thread, rk);
    char *buf = malloc((size_t)opt_size);
    fill_payload(buf, opt_size);
    double interval = 1e9 / opt_rate;
    uint64_t t0 = now_ns(), sent = 0, skipped = 0, t_kill = 0, t_exit = 0, t_stop = 0, t_warm = 0;
    uint64_t warm_until = t0 + (uint64_t)(opt_warmup * 1e9), warm_limit = warm_until + 30ull * 1000000000u;
    uint64_t give_up = 0, t_done = 0;
    struct timespec kill_rt = {0, 0};
    double c_kill = 0, c_done = 0;   /* CPU from the kill until every partition is back (or the give-up) */
    srv_cpu_t s_kill = {.sum = -1}, s_done = {.sum = -1};
    for (;;) {
        uint64_t due = t0 + (uint64_t)((double)sent * interval);
        uint64_t t = now_ns();
        if (t < due) {
            sleep_until_ns(due);
            t = now_ns();
        }
        if (!t_kill) {
            if (!t_warm && atomic_load(&fo.warm) == opt_partitions)
                t_warm = t;
            if (t >= warm_until && t_warm) {
                clock_gettime(CLOCK_REALTIME, &kill_rt);
                c_kill = self_cpu_s();
                s_kill = srv_cpu();
                t_kill = now_ns();
                atomic_store(&fo.t_kill, t_kill);
                if (kill(opt_victim_pid, sig) < 0)
                    die("failover: kill: %s", strerror(errno));
                give_up = t_kill + (uint64_t)(opt_duration * 1e9);
            } else if (t >= warm_limit) {
                count_error("NOT_WARM");
                fprintf(stderr, "load: failover: only %d of %d partitions acked by broker %d within %.0f s\n",
                        atomic_load(&fo.warm), opt_partitions, opt_victim_id, opt_warmup + 30);
                break;
            }
        } else {
            if (!t_exit && proc_gone(opt_victim_pid))
                t_exit = t;
            if (!t_stop && (atomic_load(&fo.recovered) == opt_partitions || t >= give_up)) {
                t_stop = t + 500000000u;   /* half a second more */
                t_done = t;
                c_done = self_cpu_s();
                s_done = srv_cpu();
            }
            if (t_stop && t >= t_stop)
                break;
        }
        /* every record due by now, round-robin over the partitions */
        for (; t0 + (uint64_t)((double)sent * interval) <= t; sent++) {
            int32_t part = (int32_t)(sent % (uint64_t)opt_partitions);
            put_u64(buf, sent);
            put_u64(buf + 8, t0 + (uint64_t)((double)sent * interval));
            if (rd_kafka_produce(rkt, part, RD_KAFKA_MSG_F_COPY, buf, (size_t)opt_size, NULL, 0, NULL) != 0) {
                rd_kafka_resp_err_t e = rd_kafka_last_error();
                if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
                    count_error(rd_kafka_err2name(e));
                    goto out;
                }
                skipped++;   /* the client's queue is full (the outage): not sent, not counted */
            }
        }
    }
out:;
    /* what the client still holds (waiting for a leader) gets its chance */
    uint64_t flush_end = now_ns() + 30ull * 1000000000u;
    while (rd_kafka_outq_len(rk) > 0 && now_ns() < flush_end)
        usleep(1000);
    while (!t_exit && t_kill && now_ns() < flush_end) {   /* a controlled shutdown may still run */
        if (proc_gone(opt_victim_pid))
            t_exit = now_ns();
        else
            usleep(1000);
    }
    atomic_store(&poll_stop, 1);
    pthread_join(pt, NULL);
    if (rd_kafka_outq_len(rk) > 0)
        count_error("UNDELIVERED");

    /* per partition: from the kill to its first ack by another broker */
    uint64_t *lat = calloc((size_t)opt_partitions, sizeof(*lat)), any_min = 0;
    int n = 0, by[8] = {0};
    for (int i = 0; i < opt_partitions; i++) {
        fo_part_t *p = &fo.p[i];
        if (p->first_any && (!any_min || p->first_any - t_kill < any_min))
            any_min = p->first_any - t_kill;
        if (!p->first_new)
            continue;
        lat[n++] = p->first_new - t_kill;
        if (p->new_broker >= 0 && p->new_broker < 8)
            by[p->new_broker]++;
    }
    qsort(lat, (size_t)n, sizeof(*lat), cmp_u64);
    if (t_kill && n < opt_partitions) {
        count_error("NOT_RECOVERED");
        fprintf(stderr, "load: failover: %d of %d partitions had no ack from another broker:", opt_partitions - n,
                opt_partitions);
        for (int i = 0, shown_n = 0; i < opt_partitions && shown_n < 20; i++)
            if (!fo.p[i].first_new) {
                fprintf(stderr, " %d%s", i, fo.p[i].first_any ? "(acked by the victim after the kill)" : "");
                shown_n++;
            }
        fputc('\n', stderr);
    }

    printf("mode=failover topic=%s partitions=%d size=%d acks=%s linger_ms=%s rate=%.0f signal=%s victim_pid=%d "
           "victim_id=%d",
           opt_topic, opt_partitions, opt_size, opt_acks, opt_linger ? opt_linger : "0", opt_rate, opt_signal,
           opt_victim_pid, opt_victim_id);
    printf(" warm=%d warm_s=%.3f kill_unix_ms=%.3f records=%" PRIu64 " skipped_queue_full=%" PRIu64 " delivered=%" PRIu64
           " failed=%" PRIu64 " victim_acks_after_kill=%" PRIu64 " other_acks_before_kill=%" PRIu64,
           atomic_load(&fo.warm), t_warm ? (double)(t_warm - t0) / 1e9 : -1.0, (double)kill_rt.tv_sec * 1e3 + (double)kill_rt.tv_nsec / 1e6,
           sent, skipped, fo.delivered, fo.failed, fo.victim_after_kill, fo.other_before_kill);
    if (t_exit)
        printf(" victim_exit_ms=%.1f", (double)(t_exit - t_kill) / 1e6);
    printf(" recovered=%d", n);
    if (n) {
        printf(" first_ms=%.1f p50_ms=%.1f p90_ms=%.1f all_ms=%.1f", (double)lat[0] / 1e6,
               (double)lat[(n - 1) / 2] / 1e6, (double)lat[(n * 9 - 1) / 10] / 1e6,
               n == opt_partitions ? (double)lat[n - 1] / 1e6 : -1.0);
        printf(" new_leaders=");
        for (int i = 0, first = 1; i < 8; i++)
            if (by[i]) {
                printf("%s%d:%d", first ? "" : ",", i, by[i]);
                first = 0;
            }
    }
    if (any_min)
        printf(" first_any_ms=%.1f", (double)any_min / 1e6);
    if (t_done)   /* over the failover: the survivors' CPU (-P) and ours */
        print_cpu(c_kill, c_done, s_kill, s_done, (double)(t_done - t_kill) / 1e9, 0);
    for (int i = 0; i < 6; i++)
        printf(" client_%s=%s", shown[i], shown_vals[i]);
    print_errors();
    printf("\n");
    fflush(stdout);
    free(lat);
    free(buf);
    rd_kafka_topic_destroy(rkt);
    rd_kafka_destroy(rk);
    return nerrors ? 1 : 0;
}

/* ---- the machine: loopback TCP ---- */
#define CHUNK (1 << 20)

typedef struct {
    int lfd;
    uint64_t bytes;
} recv_arg_t;

static void *tcp_receiver(void *arg)
{
    recv_arg_t *r = arg;
    int fd = accept(r->lfd, NULL, NULL);
    if (fd < 0)
        return NULL;
    char *buf = malloc(CHUNK);
    for (;;) {
        ssize_t n = read(fd, buf, CHUNK);
        if (n <= 0)
            break;
        r->bytes += (uint64_t)n;
    }
    free(buf);
    close(fd);
    return NULL;
}

/* one connection for opt_duration seconds; sendfile from file_fd when >= 0 */
static double tcp_run(int file_fd, off_t file_len)
{
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof(a);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(lfd, 1) < 0 ||
        getsockname(lfd, (struct sockaddr *)&a, &alen) < 0)
        die("tcp: listen: %s", strerror(errno));
    recv_arg_t r = {lfd, 0};
    pthread_t th;
    pthread_create(&th, NULL, tcp_receiver, &r);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
        die("tcp: connect: %s", strerror(errno));
    char *buf = malloc(CHUNK);
    memset(buf, 'x', CHUNK);
    uint64_t t0 = now_ns(), deadline = t0 + (uint64_t)(opt_duration * 1e9), sent = 0;
    off_t pos = 0;
    while (now_ns() < deadline) {
        ssize_t n;
        if (file_fd >= 0) {
            if (pos >= file_len)
                pos = 0;
            size_t want = (size_t)(file_len - pos) < CHUNK ? (size_t)(file_len - pos) : CHUNK;
            n = sendfile(fd, file_fd, &pos, want);
        } else {
            n = write(fd, buf, CHUNK);
        }
        if (n < 0) {
            if (errno == EINTR)
                continue;
            die("tcp: send: %s", strerror(errno));
        }
        sent += (uint64_t)n;
    }
    shutdown(fd, SHUT_WR);
    pthread_join(th, NULL);
    uint64_t t1 = now_ns();
    close(fd);
    close(lfd);
    free(buf);
    if (r.bytes != sent)
        count_error("TCP_SHORT");
    return (double)r.bytes / ((double)(t1 - t0) / 1e9) / 1e6;
}

static int mode_tcp(void)
{
    if (opt_duration <= 0)
        opt_duration = 2;
    /* the file sendfile reads: 64 MiB in DIR, written (so page-cached) just before */
    char path[4096];
    snprintf(path, sizeof(path), "%s/kipper-bench-tcp.%d", opt_dir, (int)getpid());
    int ffd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (ffd < 0)
        die("tcp: cannot create the sendfile source: %s", strerror(errno));
    unlink(path);
    char *buf = malloc(CHUNK);
    memset(buf, 'y', CHUNK);
    off_t len = 64 * (off_t)CHUNK;
    for (off_t o = 0; o < len; o += CHUNK)
        if (write(ffd, buf, CHUNK) != CHUNK)
            die("tcp: writing the sendfile source: %s", strerror(errno));
    free(buf);
    double c0 = self_cpu_s();
    double w = tcp_run(-1, 0);
    double s = tcp_run(ffd, len);
    double c1 = self_cpu_s();
    close(ffd);
    printf("mode=tcp seconds_each=%.1f connections=1 chunk=%d write_mb_per_s=%.1f sendfile_mb_per_s=%.1f cpu_s=%.2f",
           opt_duration, CHUNK, w, s, c1 - c0);
    print_errors();
    printf("\n");
    return nerrors ? 1 : 0;
}

/* ---- the machine: sequential writes to the log dir's file system ---- */
static int mode_disk(void)
{
    char path[4096];
    static unsigned serial;
    snprintf(path, sizeof(path), "%s/kipper-bench-disk.%d.%u", opt_dir, (int)getpid(), serial++);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        die("disk: cannot create a file in the log dir: %s", strerror(errno));
    char *buf = malloc(CHUNK);
    for (int i = 0; i < CHUNK; i++)
        buf[i] = (char)(i * 31 + 7);
    uint64_t total = (uint64_t)opt_disk_mib * CHUNK;
    uint64_t t0 = now_ns(), th = 0;
    for (uint64_t done = 0; done < total;) {
        ssize_t n = write(fd, buf, CHUNK);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            unlink(path);
            die("disk: write: %s", strerror(errno));
        }
        done += (uint64_t)n;
        if (!th && done >= total / 2)
            th = now_ns();
    }
    uint64_t t1 = now_ns();
    if (fdatasync(fd) < 0) {
        unlink(path);
        die("disk: fdatasync: %s", strerror(errno));
    }
    uint64_t t2 = now_ns();
    close(fd);
    if (!opt_keep_file)
        unlink(path);
    free(buf);
    double half = (double)(total - total / 2);
    printf("mode=disk file=%s kept=%d mib=%ld write_s=%.3f fdatasync_s=%.3f durable_mb_per_s=%.1f pagecache_mb_per_s=%.1f"
           " pagecache_first_half_mb_per_s=%.1f pagecache_second_half_mb_per_s=%.1f",
           path, opt_keep_file, opt_disk_mib, (double)(t1 - t0) / 1e9, (double)(t2 - t1) / 1e9,
           (double)total / ((double)(t2 - t0) / 1e9) / 1e6, (double)total / ((double)(t1 - t0) / 1e9) / 1e6,
           (double)(total / 2) / ((double)(th - t0) / 1e9) / 1e6, half / ((double)(t1 - th) / 1e9) / 1e6);
    print_errors();
    printf("\n");
    return 0;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: load produce|consume|latency|failover|tcp|disk|version [options]\n"
            "  -b host:port   bootstrap servers (default 127.0.0.1:9092)\n"
            "  -t topic       (default bench); partition 0 is used\n"
            "  -s bytes       record size (default 100; at least 16)\n"
            "  -n records     produce: at most; consume: exactly\n"
            "  -d seconds     produce: at most; latency: measured; tcp: each test\n"
            "  -W seconds     latency: warm-up, not counted (default 1)\n"
            "  -r rate        latency: records per second (default 10000)\n"
            "  -a acks        0, 1 or all (default all)\n"
            "  -l ms          linger.ms (default produce 5, latency 0)\n"
            "  -B bytes       batch.size (default 1048576)\n"
            "  -I             enable.idempotence=true\n"
            "  -X k=v         any librdkafka property; producer.k=v / consumer.k=v for one side\n"
            "  -P pid[,pid]   report these processes' CPU time, summed and each (the brokers')\n"
            "  -D dir         tcp, disk: where the files go\n"
            "  -S mib         disk: MiB to write (default 2048)\n"
            "  -K             disk: keep the file written (default: removed)\n"
            "  -1             latency: one rd_kafka_produce() per record instead of one\n"
            "                 rd_kafka_produce_batch() per wake-up\n"
            "  -N             latency: no consumer (acknowledgement latency only)\n"
            "  -T             latency: a per-second timeline on stderr (wall clock, by due time)\n"
            "                 (latency: SIGUSR1 ends the run early; -d is then an upper bound)\n"
            "  -p partitions  failover: produce to partitions 0..N-1, round-robin\n"
            "  -V pid         failover: the broker to kill (its leader)\n"
            "  -E id          failover: that broker's id (default 1)\n"
            "  -k KILL|TERM   failover: the signal (default KILL)\n"
            "  -v             more diagnostics on stderr\n");
    exit(2);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        usage();
    const char *mode = argv[1];
    optind = 2;
    int ch;
    while ((ch = getopt(argc, argv, "b:t:s:n:d:W:r:a:l:B:IX:P:D:S:KNvT1hp:V:E:k:")) != -1) {
        switch (ch) {
        case 'b': opt_brokers = optarg; break;
        case 't': opt_topic = optarg; break;
        case 's': opt_size = atoi(optarg); break;
        case 'n': opt_count = atoll(optarg); break;
        case 'd': opt_duration = atof(optarg); break;
        case 'W': opt_warmup = atof(optarg); break;
        case 'r': opt_rate = atof(optarg); break;
        case 'a': opt_acks = optarg; break;
        case 'l': opt_linger = optarg; break;
        case 'B': opt_batch = optarg; break;
        case 'I': opt_idempotence = 1; break;
        case 'X':
            if (opt_nextra < 32)
                opt_extra[opt_nextra++] = optarg;
            break;
        case 'P':
            for (char *tok = strtok(optarg, ","); tok; tok = strtok(NULL, ","))
                if (opt_npids < MAX_PIDS)
                    opt_pids[opt_npids++] = atoi(tok);
            break;
        case 'D': opt_dir = optarg; break;
        case 'S': opt_disk_mib = atol(optarg); break;
        case 'v': opt_verbose = 1; break;
        case '1': opt_one_by_one = 1; break;
        case 'K': opt_keep_file = 1; break;
        case 'N': opt_no_consumer = 1; break;
        case 'p': opt_partitions = atoi(optarg); break;
        case 'V': opt_victim_pid = atoi(optarg); break;
        case 'E': opt_victim_id = atoi(optarg); break;
        case 'k': opt_signal = optarg; break;
        case 'T': timeline = calloc(TL_MAX, sizeof(*timeline)); break;
        default: usage();
        }
    }
    if (opt_size < HDR)
        die("-s must be at least 16 (the sequence number and the due time)%s", "");
    if (strcmp(mode, "produce") == 0)
        return mode_produce();
    if (strcmp(mode, "consume") == 0)
        return mode_consume();
    if (strcmp(mode, "latency") == 0)
        return mode_latency();
    if (strcmp(mode, "failover") == 0)
        return mode_failover();
    if (strcmp(mode, "tcp") == 0)
        return mode_tcp();
    if (strcmp(mode, "disk") == 0)
        return mode_disk();
    if (strcmp(mode, "version") == 0) {
        printf("librdkafka %s\n", rd_kafka_version_str());
        return 0;
    }
    usage();
    return 2;
}
