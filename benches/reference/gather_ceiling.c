// The ceiling of the CPU engine's adds, measured without the engine: how many random
// k-float rows a machine reads and adds per second when nothing else is done. Each thread
// sums rows of a table at indices drawn beforehand (xorshift, uniform over the table, 2^20
// of them, walked `passes` times), four rows to a lane and 64 lanes in turn, as the
// engine's accumulation contract adds them; with a prefetch distance d > 0 it first asks
// for the row d draws ahead, as the engine's prefetched walk does. No generator runs, so
// if this rate is below a share of the raw Philox+Lemire rate (`stats bench`), no walk of
// the engine can reach that share on this machine.
//
//   cc -O3 -march=native -pthread benches/reference/gather_ceiling.c -o /tmp/gather_ceiling
//   /tmp/gather_ceiling ROWS K THREADS SHARED PREFETCH [PASSES]
//
// ROWS rows of K floats (1, 2, 4, 8 or 16) per table; SHARED = 1 gives every thread the same table
// (the engine's one-stratum-at-a-time order), 0 one table per thread (one stratum each);
// PREFETCH = draws ahead (0: none). Tables are 2 MiB-aligned and advised for huge pages,
// as the engine's are. Prints the best of five timed runs, in million rows per second.
// Example (the large workload at k = 4: two strata of 500,000 rows, 8 MB a table):
//   /tmp/gather_ceiling 500000 4 2 1 64
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#define DRAWS (1u << 20)
#define LANES 64
#define KMAX 16

static size_t rows, k, prefetch, passes;

typedef struct {
    const float *table;
    const uint32_t *draws;
    float out[KMAX];
} job_t;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

// One thread's adds with K known to the compiler: per block of four draws, the lane's K
// sums are loaded, the four rows added in order, and the sums stored back, as in the
// engine.
#define WALK(K)                                                                         \
    static void walk##K(job_t *job) {                                                   \
        float acc[LANES][K] = {{0}};                                                    \
        const float *t = job->table;                                                    \
        const uint32_t *d = job->draws;                                                 \
        for (size_t p = 0; p < passes; p++) {                                           \
            for (size_t i = 0; i < DRAWS; i += 4) {                                     \
                float a[K];                                                             \
                for (size_t c = 0; c < K; c++) a[c] = acc[(i / 4) % LANES][c];          \
                for (size_t w = i; w < i + 4; w++) {                                    \
                    if (prefetch) {                                                     \
                        const float *ahead = t + (size_t)d[w + prefetch] * K;           \
                        __builtin_prefetch(ahead, 0, 3);                                \
                        if (16 % (4 * K) != 0) __builtin_prefetch(ahead + K - 1, 0, 3); \
                    }                                                                   \
                    const float *row = t + (size_t)d[w] * K;                            \
                    for (size_t c = 0; c < K; c++) a[c] += row[c];                      \
                }                                                                       \
                for (size_t c = 0; c < K; c++) acc[(i / 4) % LANES][c] = a[c];          \
            }                                                                           \
        }                                                                               \
        for (size_t c = 0; c < K; c++) {                                                \
            job->out[c] = 0;                                                            \
            for (size_t l = 0; l < LANES; l++) job->out[c] += acc[l][c];                \
        }                                                                               \
    }
WALK(1)
WALK(2)
WALK(4)
WALK(8)
WALK(16)

static void *walk(void *arg) {
    switch (k) {
    case 1: walk1(arg); break;
    case 2: walk2(arg); break;
    case 4: walk4(arg); break;
    case 8: walk8(arg); break;
    default: walk16(arg); break;
    }
    return NULL;
}

static float *table(uint64_t seed) {
    size_t bytes = rows * k * sizeof(float);
    void *mem = NULL;
    if (posix_memalign(&mem, 2u << 20, bytes) != 0) {
        perror("posix_memalign");
        exit(1);
    }
    madvise(mem, bytes, MADV_HUGEPAGE);
    float *t = mem;
    for (size_t i = 0; i < rows * k; i++) t[i] = (float)((i * 2654435761u + seed) % 1000) * 1e-3f;
    return t;
}

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: %s ROWS K THREADS SHARED PREFETCH [PASSES]\n", argv[0]);
        return 2;
    }
    rows = strtoul(argv[1], NULL, 10);
    k = strtoul(argv[2], NULL, 10);
    size_t threads = strtoul(argv[3], NULL, 10);
    int shared = atoi(argv[4]);
    prefetch = strtoul(argv[5], NULL, 10);
    passes = argc > 6 ? strtoul(argv[6], NULL, 10) : 40;
    if (rows == 0 || (k != 1 && k != 2 && k != 4 && k != 8 && k != 16) || threads == 0 || threads > 256 || prefetch > 4096 ||
        passes == 0) {
        fprintf(stderr, "ROWS >= 1, K one of 1, 2, 4, 8, 16, THREADS in 1..256, PREFETCH <= 4096, PASSES >= 1\n");
        return 2;
    }
    job_t *jobs = calloc(threads, sizeof(job_t));
    pthread_t *ids = calloc(threads, sizeof(pthread_t));
    for (size_t j = 0; j < threads; j++) {
        jobs[j].table = shared && j > 0 ? jobs[0].table : table(j);
        uint32_t *d = malloc(sizeof(uint32_t) * (DRAWS + 4096));
        uint64_t x = 0x9E3779B97F4A7C15ull ^ (j + 1);
        for (size_t i = 0; i < DRAWS + 4096; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            d[i] = (uint32_t)(((x >> 32) * (uint64_t)rows) >> 32);
        }
        jobs[j].draws = d;
    }
    double best = 1e300;
    for (int run = 0; run < 6; run++) {
        double t0 = now();
        for (size_t j = 0; j < threads; j++) pthread_create(&ids[j], NULL, walk, &jobs[j]);
        for (size_t j = 0; j < threads; j++) pthread_join(ids[j], NULL);
        double dt = now() - t0;
        if (run > 0 && dt < best) best = dt;  // run 0 warms the tables and the page tables
    }
    double mrows = (double)DRAWS * passes * threads / best / 1e6;
    printf("rows %zu, k %zu (%.1f MB a table), threads %zu, %s, prefetch %zu: %.1f M rows/s "
           "(checksum %g)\n",
           rows, k, rows * k * 4 / 1e6, threads, shared ? "one shared table" : "a table each",
           prefetch, mrows, jobs[0].out[0]);
    return 0;
}
