/* kafka_seeds.c -- one synthetic request frame per API and version the
 * codec knows, for the kafka_request corpus (fuzz/make-seeds.py runs it).
 *
 * Real clients send a handful of versions of each API, and flexible
 * versions (compact strings and arrays, tagged fields) of few of them; the
 * fuzzer changes a header's version in one step but needs far longer to
 * re-encode a body for it. So each version gets a frame whose body fills
 * every array with two elements and every string with its field's name,
 * recursively, encoded by kafka_request_encode (without its size prefix).
 *
 * Usage: kafka-seeds DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "broker/wire/kafka_codec.h"

static void fill(kafka_arena_t *a, kafka_value_t *v, const kafka_struct_t *s, int depth)
{
    for (int i = 0; i < s->nfields && depth < 8; i++) {
        const kafka_field_t *f = &s->fields[i];
        if (f->type == KT_STRING) {
            kv_set_str_at(a, v, s, i, f->name);
        } else if (f->type == KT_STRUCT) {
            fill(a, kv_field(v, s, i), f->sub, depth + 1);
        } else if (f->type == KT_ARRAY) {
            kafka_value_t *arr = kv_set_array_at(a, v, s, i, 2);
            if (!arr)
                abort();
            for (uint32_t k = 0; k < arr->n; k++) {
                kafka_value_t *e = kv_at(arr, k);
                if (f->elem == KT_STRUCT)
                    fill(a, e, f->sub, depth + 1);
                else if (f->elem == KT_STRING) {
                    e->u.s = f->name;
                    e->n = (uint32_t)strlen(f->name);
                    e->is_null = 0;
                }
            }
        }
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    int written = 0;
    for (int i = 0; i < kafka_napis; i++) {
        const kafka_api_t *api = &kafka_apis[i];
        for (int16_t v = api->min; v <= api->max; v++) {
            kafka_arena_t a;
            kafka_arena_init(&a, 0);
            kafka_value_t *body = kv_new_struct(&a, api->request);
            if (!body)
                abort();
            fill(&a, body, api->request, 0);
            buf_t out;
            buf_init(&out);
            if (kafka_request_encode(&out, api, v, 1000 + v, "kafka-seeds", body) != KAFKA_OK) {
                fprintf(stderr, "kafka-seeds: %s v%d does not encode\n", api->name, v);
            } else {
                char path[1024];
                snprintf(path, sizeof(path), "%s/%s-v%d", argv[1], api->name, v);
                FILE *fp = fopen(path, "wb");
                if (!fp || fwrite(out.data + 4, 1, out.len - 4, fp) != out.len - 4 || fclose(fp) != 0) {
                    perror(path);
                    return 1;
                }
                written++;
            }
            buf_free(&out);
            kafka_arena_free(&a);
        }
    }
    printf("kafka-seeds: %d frames in %s\n", written, argv[1]);
    return 0;
}
