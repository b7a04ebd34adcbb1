/*
 * fuzz.h -- what every fuzz target shares (test/fuzz/README.md).
 *
 * A target is one libFuzzer entry point over pure modules only (no Redis, no sockets). Besides
 * the sanitizers' own findings, each checks properties the code promises (round trips, agreement
 * with an independent reference, limits kept); a broken one aborts with FUZZ_CHECK's message, so
 * libFuzzer saves the input as a crash artifact.
 */
#ifndef RANKD_FUZZ_H
#define RANKD_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/** The entry point libFuzzer calls (and test/fuzz/replay.c, for the seed corpus). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/** Abort with a message when `cond` is false (a property broke). */
#define FUZZ_CHECK(cond, ...)                                                                      \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz property broken at %s:%d: %s: ", __FILE__, __LINE__, #cond);     \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/** Bytes taken from the front of an input to choose parameters; 0 once it is used up. */
struct fuzz_in {
    const uint8_t *p;
    size_t n;
};

static inline unsigned fuzz_byte(struct fuzz_in *in)
{
    if (!in->n)
        return 0;
    in->n--;
    return *in->p++;
}

static inline uint64_t fuzz_u64(struct fuzz_in *in)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = (v << 8) | fuzz_byte(in);
    return v;
}

#endif
