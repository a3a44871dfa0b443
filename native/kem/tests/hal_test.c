/*
 * hal_test.c - the cycle-counter HAL on its own, built by tests/test_kem_native.py with
 * AddressSanitizer and UndefinedBehaviorSanitizer:
 *
 *   cc -std=c11 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all \
 *      -Isrc/cycle_counter src/cycle_counter/hal.c tests/hal_test.c -o hal_test
 *
 * Every counter is probed (with full, tiny, empty and absent reason buffers), every
 * available one opened, read (it must not go backwards) and closed, twice; unknown
 * counters are refused. Prints one line per counter; exits 1 on a failed expectation.
 */
#include "hal.h"

#include <stdio.h>
#include <string.h>

static int failures = 0;

#define EXPECT(cond)                                                              \
    do {                                                                          \
        if (!(cond)) {                                                            \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);   \
            failures++;                                                           \
        }                                                                         \
    } while (0)

int main(void) {
    for (int c = 0; c < PBK_COUNTER_COUNT; c++) {
        char why[512], tiny[4];
        int ok = pbk_hal_probe(c, why, sizeof why);
        EXPECT(pbk_hal_probe(c, tiny, sizeof tiny) == ok);
        EXPECT(strlen(tiny) < sizeof tiny);
        EXPECT(pbk_hal_probe(c, why, 0) == ok);
        EXPECT(pbk_hal_probe(c, NULL, 0) == ok);
        EXPECT(pbk_counter_name(c) != NULL && pbk_counter_unit(c) != NULL);
        if (!ok) {
            pbk_hal_probe(c, why, sizeof why);
            EXPECT(why[0] != '\0');
            EXPECT(pbk_hal_open(c, why, sizeof why) == -1 && pbk_hal_active() == -1);
            printf("%-11s unavailable: %s\n", pbk_counter_name(c), why);
            continue;
        }
        for (int round = 0; round < 2; round++) {
            EXPECT(pbk_hal_open(c, why, sizeof why) == 0 && pbk_hal_active() == c);
            uint64_t prev = pbk_hal_read();
            for (int i = 0; i < 10000; i++) {
                uint64_t now = pbk_hal_read();
                EXPECT(now >= prev);
                prev = now;
            }
            pbk_hal_close();
            EXPECT(pbk_hal_active() == -1 && pbk_hal_read() == 0);
        }
        printf("%-11s available (%s)\n", pbk_counter_name(c), pbk_counter_unit(c));
    }
    char why[64];
    EXPECT(pbk_hal_open(PBK_COUNTER_COUNT, why, sizeof why) == -1 && strstr(why, "unknown counter"));
    EXPECT(pbk_hal_open(-1, why, sizeof why) == -1);
    EXPECT(pbk_counter_name(PBK_COUNTER_COUNT) == NULL && pbk_counter_unit(-1) == NULL);
    EXPECT(pbk_hal_tsc_invariant() >= -1);
    pbk_hal_close();
    pbk_hal_close(); /* twice is harmless */
    if (failures) fprintf(stderr, "%d expectation(s) failed\n", failures);
    return failures ? 1 : 0;
}
