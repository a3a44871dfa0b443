/*
 * hal.h - the cycle-counter hardware abstraction layer of the kem benchmark.
 *
 * The seed (libcrux-ml-kem's benches/cycle_counter/hal.c) picks its counter at compile
 * time (-DPMU_CYCLES, -DPERF_CYCLES, -DMAC_CYCLES). Here every counter the platform can
 * have is compiled in and one is chosen at run time, so that a machine without a PMU
 * (a VM) is detected and reported instead of crashing or silently counting something
 * else:
 *
 *   PBK_PERF_CYCLES  core cycles through perf_event_open(2) (Linux), one read(2) per
 *                    sample;
 *   PBK_PMU_CYCLES   core cycles read directly from user space (x86-64 rdpmc, arm64
 *                    PMCCNTR_EL0) on a perf event the kernel lets user space read
 *                    (perf_event_mmap_page.cap_user_rdpmc); Linux;
 *   PBK_MAC_CYCLES   core cycles through Apple's private kperf framework (macOS, root);
 *                    compiled only on macOS;
 *   PBK_TSC          rdtscp: x86-64 time-stamp counter ticks, i.e. reference cycles at
 *                    a constant rate, NOT core cycles;
 *   PBK_TIMER        clock_gettime(CLOCK_MONOTONIC), nanoseconds.
 *
 * Which counter is active is process-wide state (one measuring thread per process):
 * open one with pbk_hal_open(), read it with pbk_hal_read(), close it with
 * pbk_hal_close(). Which one to open ($CYCLE_COUNTER, or the best available) is decided
 * by the Rust side (src/cycle_counter.rs), in one place.
 */
#ifndef PBK_HAL_H
#define PBK_HAL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    PBK_PERF_CYCLES = 0,
    PBK_PMU_CYCLES = 1,
    PBK_MAC_CYCLES = 2,
    PBK_TSC = 3,
    PBK_TIMER = 4,
    PBK_COUNTER_COUNT = 5
} pbk_counter;

/* The counter's name as $CYCLE_COUNTER spells it ("PERF_CYCLES", ...), or NULL. */
const char *pbk_counter_name(int counter);

/* What one tick of the counter is: "cycles" (core clock cycles), "tsc_ticks"
 * (reference cycles of the constant-rate TSC) or "ns". NULL for an unknown counter. */
const char *pbk_counter_unit(int counter);

/* 1 when `counter` can be opened here, else 0 with the reason written to `why`
 * (always NUL-terminated when why_len > 0). Opens and closes the counter to find out;
 * does not change the active counter. */
int pbk_hal_probe(int counter, char *why, size_t why_len);

/* Make `counter` the active one: 0 on success, -1 (reason in `why`) if it cannot be
 * opened. Closes the previously active counter first. */
int pbk_hal_open(int counter, char *why, size_t why_len);

/* The active counter's current value (0 when none is open). */
uint64_t pbk_hal_read(void);

/* The active counter, or -1. */
int pbk_hal_active(void);

/* Release the active counter (perf file descriptor, mapping, kperf state). */
void pbk_hal_close(void);

/* x86-64: TSC ticks per second, measured against CLOCK_MONOTONIC over `ms`
 * milliseconds; 0.0 elsewhere. */
double pbk_hal_tsc_hz(unsigned ms);

/* x86-64: 1 when CPUID says the TSC is invariant (constant rate in every P-, C- and
 * T-state), 0 when it does not, -1 elsewhere. */
int pbk_hal_tsc_invariant(void);

#ifdef __cplusplus
}
#endif

#endif /* PBK_HAL_H */
