/*
 * hal.c - cycle counters for the kem benchmark, chosen at run time (see hal.h).
 *
 * Process-wide state: the active counter and, for the perf-based ones, its file
 * descriptor and mapping. Only the measuring thread touches it (the benchmark measures
 * cycles on one thread; the thread sweep times with CLOCK_MONOTONIC instead), so there
 * is no locking.
 */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE
#endif

#include "hal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__linux__)
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#if defined(__APPLE__)
#include <dlfcn.h>
#endif

#if defined(__x86_64__)
#include <cpuid.h>
#endif

static const char *const PBK_NAMES[PBK_COUNTER_COUNT] = {
    "PERF_CYCLES", "PMU_CYCLES", "MAC_CYCLES", "TSC", "TIMER"};
static const char *const PBK_UNITS[PBK_COUNTER_COUNT] = {
    "cycles", "cycles", "cycles", "tsc_ticks", "ns"};

const char *pbk_counter_name(int counter) {
    return counter >= 0 && counter < PBK_COUNTER_COUNT ? PBK_NAMES[counter] : NULL;
}

const char *pbk_counter_unit(int counter) {
    return counter >= 0 && counter < PBK_COUNTER_COUNT ? PBK_UNITS[counter] : NULL;
}

static void pbk_say(char *why, size_t why_len, const char *fmt, ...) {
    if (!why || !why_len) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, why_len, fmt, ap);
    va_end(ap);
}

/* --- state of the active counter ---------------------------------------------------- */

static int pbk_active = -1;
#if defined(__linux__)
static int pbk_perf_fd = -1;
static struct perf_event_mmap_page *pbk_perf_page = NULL;
static size_t pbk_perf_page_len = 0;
#endif

/* --- TIMER: CLOCK_MONOTONIC ------------------------------------------------------------ */

static inline uint64_t pbk_timer_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* --- TSC: rdtscp ------------------------------------------------------------------------ */

#if defined(__x86_64__)
static int pbk_has_rdtscp(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000001u, &a, &b, &c, &d)) return 0;
    return (d >> 27) & 1u; /* CPUID.80000001H:EDX.RDTSCP[bit 27] */
}

static inline uint64_t pbk_rdtscp(void) {
    uint32_t lo, hi, aux;
    /* rdtscp reads the TSC only after every earlier instruction has executed, so an end
     * read cannot happen before the measured call has finished. It does not stop later
     * instructions from starting early; the lfence after it does, so the measured call
     * cannot begin before a start read. The "memory" clobbers keep the compiler from
     * moving loads and stores across the reads. */
    __asm__ volatile("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux) : : "memory");
    __asm__ volatile("lfence" ::: "memory");
    (void)aux;
    return ((uint64_t)hi << 32) | lo;
}
#endif

int pbk_hal_tsc_invariant(void) {
#if defined(__x86_64__)
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000007u, &a, &b, &c, &d)) return 0;
    return (d >> 8) & 1u; /* CPUID.80000007H:EDX.InvariantTSC[bit 8] */
#else
    return -1;
#endif
}

double pbk_hal_tsc_hz(unsigned ms) {
#if defined(__x86_64__)
    if (!pbk_has_rdtscp()) return 0.0;
    if (ms == 0) ms = 1;
    uint64_t t0 = pbk_timer_ns(), c0 = pbk_rdtscp();
    uint64_t t1, c1;
    do {
        t1 = pbk_timer_ns();
        c1 = pbk_rdtscp();
    } while (t1 - t0 < (uint64_t)ms * 1000000u);
    return (double)(c1 - c0) * 1e9 / (double)(t1 - t0);
#else
    (void)ms;
    return 0.0;
#endif
}

/* --- PERF_CYCLES and PMU_CYCLES: perf_event_open ----------------------------------------- */

#if defined(__linux__)
static int pbk_perf_open_cycles(int user_read, char *why, size_t why_len) {
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.type = PERF_TYPE_HARDWARE;
    attr.size = sizeof attr;
    attr.config = PERF_COUNT_HW_CPU_CYCLES;
    attr.disabled = 1;
    /* user-space cycles only: allowed at the default perf_event_paranoid (2) without
     * root, and the measured code never enters the kernel */
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
#if defined(__aarch64__)
    /* arm64 PMU format: config1 bit 0 = 64-bit counter, bit 1 = user-space access */
    if (user_read) attr.config1 = 0x3;
#else
    (void)user_read; /* x86: rdpmc access is per system (sysfs), not per event */
#endif
    int fd = (int)syscall(SYS_perf_event_open, &attr, 0 /* this thread */, -1, -1, 0);
    if (fd < 0) {
        int err = errno;
        if (err == ENOENT || err == EOPNOTSUPP || err == ENODEV) {
            pbk_say(why, why_len,
                    "perf_event_open(PERF_COUNT_HW_CPU_CYCLES) failed: %s: this kernel offers no "
                    "hardware cycle event (a virtual machine without a virtual PMU?)",
                    strerror(err));
        } else if (err == EACCES || err == EPERM) {
            pbk_say(why, why_len,
                    "perf_event_open(PERF_COUNT_HW_CPU_CYCLES) failed: %s: run as root or lower "
                    "/proc/sys/kernel/perf_event_paranoid",
                    strerror(err));
        } else {
            pbk_say(why, why_len, "perf_event_open(PERF_COUNT_HW_CPU_CYCLES) failed: %s",
                    strerror(err));
        }
        return -1;
    }
    if (ioctl(fd, PERF_EVENT_IOC_RESET, 0) != 0 || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
        pbk_say(why, why_len, "cannot enable the perf cycle event: %s", strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

static uint64_t pbk_perf_read(void) {
    uint64_t value = 0;
    if (read(pbk_perf_fd, &value, sizeof value) != (ssize_t)sizeof value) return 0;
    return value;
}

#if defined(__x86_64__) || defined(__aarch64__)
static inline uint64_t pbk_read_pmc(uint32_t counter) {
#if defined(__x86_64__)
    uint32_t lo, hi;
    __asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(counter) : "memory");
    return ((uint64_t)hi << 32) | lo;
#else
    /* only the dedicated cycle counter (perf's user index 32, counter 31) is read here;
     * pbk_pmu_open refuses any other placement */
    (void)counter;
    uint64_t value;
    __asm__ volatile("isb; mrs %0, pmccntr_el0" : "=r"(value) : : "memory");
    return value;
#endif
}

/* The perf seqlock protocol of linux/perf_event.h: read index, offset and the counter
 * between two reads of `lock`, and retry if the kernel updated the page meanwhile. The
 * compiler barriers keep those reads between the two loads of `lock`; the kernel side
 * only changes the page on this CPU (at a context switch), so no CPU fence is needed. */
static uint64_t pbk_pmu_read(void) {
    volatile struct perf_event_mmap_page *pc = pbk_perf_page;
    uint32_t seq, idx;
    uint64_t count;
    do {
        seq = pc->lock;
        __asm__ volatile("" ::: "memory");
        idx = pc->index;
        count = (uint64_t)pc->offset;
        if (pc->cap_user_rdpmc && idx) {
            uint16_t width = pc->pmc_width;
            uint64_t raw = pbk_read_pmc(idx - 1);
            /* sign-extend the counter's width, as the kernel's own example does */
            raw <<= 64 - width;
            count += (uint64_t)((int64_t)raw >> (64 - width));
        }
        __asm__ volatile("" ::: "memory");
    } while (pc->lock != seq);
    return count;
}
#endif

static void pbk_perf_close(void) {
    if (pbk_perf_page) munmap((void *)pbk_perf_page, pbk_perf_page_len);
    if (pbk_perf_fd >= 0) close(pbk_perf_fd);
    pbk_perf_page = NULL;
    pbk_perf_fd = -1;
}

static int pbk_pmu_open(char *why, size_t why_len) {
#if defined(__x86_64__) || defined(__aarch64__)
    int fd = pbk_perf_open_cycles(1, why, why_len);
    if (fd < 0) return -1;
    size_t len = (size_t)sysconf(_SC_PAGESIZE);
    void *page = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
    if (page == MAP_FAILED) {
        pbk_say(why, why_len, "cannot map the perf event page: %s", strerror(errno));
        close(fd);
        return -1;
    }
    struct perf_event_mmap_page *pc = page;
    if (!pc->cap_user_rdpmc || pc->index == 0) {
        pbk_say(why, why_len,
                "the kernel does not let user space read the cycle counter directly "
                "(cap_user_rdpmc=%u, index=%u; x86: /sys/bus/event_source/devices/cpu/rdpmc, "
                "arm64: sysctl kernel.perf_user_access=1)",
                (unsigned)pc->cap_user_rdpmc, (unsigned)pc->index);
        munmap(page, len);
        close(fd);
        return -1;
    }
#if defined(__aarch64__)
    if (pc->index != 32) {
        pbk_say(why, why_len,
                "the kernel placed the cycle event on general counter %u, not on PMCCNTR_EL0",
                (unsigned)pc->index - 1);
        munmap(page, len);
        close(fd);
        return -1;
    }
#endif
    pbk_perf_fd = fd;
    pbk_perf_page = pc;
    pbk_perf_page_len = len;
    return 0;
#else
    pbk_say(why, why_len, "direct counter reads are implemented for x86-64 and arm64 only");
    return -1;
#endif
}
#endif /* __linux__ */

/* --- MAC_CYCLES: Apple's private kperf framework ---------------------------------------- */

#if defined(__APPLE__)
#define PBK_KPC_CLASS_FIXED_MASK 1u
#define PBK_KPC_CLASS_CONFIGURABLE_MASK 2u
#define PBK_KPC_MASK (PBK_KPC_CLASS_FIXED_MASK | PBK_KPC_CLASS_CONFIGURABLE_MASK)
#define PBK_KPC_MAX_COUNTERS 32
#if defined(__aarch64__)
/* Apple silicon: configurable counter 0 (the third counter after two fixed ones) set to
 * the core-cycle event, counting at EL0 */
#define PBK_KPC_CYCLES_INDEX 2
#define PBK_CPMU_CORE_CYCLE 0x02u
#define PBK_CFGWORD_EL0A64EN 0x20000u
#else
/* Intel: fixed counter 1 counts unhalted core cycles */
#define PBK_KPC_CYCLES_INDEX 1
#endif

static int (*pbk_kpc_get_thread_counters)(int, unsigned, uint64_t *);
static int (*pbk_kpc_set_counting)(uint32_t);
static int (*pbk_kpc_set_thread_counting)(uint32_t);
static int (*pbk_kpc_force_all_ctrs_set)(int);
static void *pbk_kperf;

static int pbk_mac_open(char *why, size_t why_len) {
    if (!pbk_kperf) {
        pbk_kperf = dlopen("/System/Library/PrivateFrameworks/kperf.framework/kperf", RTLD_LAZY);
        if (!pbk_kperf) {
            pbk_say(why, why_len, "cannot load kperf: %s", dlerror());
            return -1;
        }
    }
    int (*set_config)(uint32_t, uint64_t *) = dlsym(pbk_kperf, "kpc_set_config");
    pbk_kpc_force_all_ctrs_set = dlsym(pbk_kperf, "kpc_force_all_ctrs_set");
    pbk_kpc_set_counting = dlsym(pbk_kperf, "kpc_set_counting");
    pbk_kpc_set_thread_counting = dlsym(pbk_kperf, "kpc_set_thread_counting");
    pbk_kpc_get_thread_counters = dlsym(pbk_kperf, "kpc_get_thread_counters");
    if (!set_config || !pbk_kpc_force_all_ctrs_set || !pbk_kpc_set_counting ||
        !pbk_kpc_set_thread_counting || !pbk_kpc_get_thread_counters) {
        pbk_say(why, why_len, "kperf lacks the kpc_* functions this HAL needs");
        return -1;
    }
    if (pbk_kpc_force_all_ctrs_set(1) != 0) {
        pbk_say(why, why_len, "kpc_force_all_ctrs_set failed: kperf needs root (run with sudo)");
        return -1;
    }
    uint64_t config[PBK_KPC_MAX_COUNTERS] = {0};
#if defined(__aarch64__)
    config[0] = PBK_CPMU_CORE_CYCLE | PBK_CFGWORD_EL0A64EN;
#endif
    if (set_config(PBK_KPC_MASK, config) != 0 || pbk_kpc_set_counting(PBK_KPC_MASK) != 0 ||
        pbk_kpc_set_thread_counting(PBK_KPC_MASK) != 0) {
        pbk_say(why, why_len, "cannot configure the kperf cycle counter (run with sudo)");
        return -1;
    }
    return 0;
}

static uint64_t pbk_mac_read(void) {
    uint64_t counters[PBK_KPC_MAX_COUNTERS];
    if (pbk_kpc_get_thread_counters(0, PBK_KPC_MAX_COUNTERS, counters) != 0) return 0;
    return counters[PBK_KPC_CYCLES_INDEX];
}

static void pbk_mac_close(void) {
    if (pbk_kpc_set_counting) pbk_kpc_set_counting(0);
    if (pbk_kpc_set_thread_counting) pbk_kpc_set_thread_counting(0);
    if (pbk_kpc_force_all_ctrs_set) pbk_kpc_force_all_ctrs_set(0);
}
#endif /* __APPLE__ */

/* --- the active counter ----------------------------------------------------------------- */

void pbk_hal_close(void) {
#if defined(__linux__)
    if (pbk_active == PBK_PERF_CYCLES || pbk_active == PBK_PMU_CYCLES) pbk_perf_close();
#endif
#if defined(__APPLE__)
    if (pbk_active == PBK_MAC_CYCLES) pbk_mac_close();
#endif
    pbk_active = -1;
}

int pbk_hal_open(int counter, char *why, size_t why_len) {
    pbk_hal_close();
    if (why && why_len) why[0] = '\0';
    int ok = -1;
    switch (counter) {
    case PBK_PERF_CYCLES:
#if defined(__linux__)
        pbk_perf_fd = pbk_perf_open_cycles(0, why, why_len);
        ok = pbk_perf_fd >= 0 ? 0 : -1;
#else
        pbk_say(why, why_len, "perf_event_open is Linux-only");
#endif
        break;
    case PBK_PMU_CYCLES:
#if defined(__linux__)
        ok = pbk_pmu_open(why, why_len);
#else
        pbk_say(why, why_len, "direct PMU reads through perf are Linux-only");
#endif
        break;
    case PBK_MAC_CYCLES:
#if defined(__APPLE__)
        ok = pbk_mac_open(why, why_len);
#else
        pbk_say(why, why_len, "kperf is macOS-only");
#endif
        break;
    case PBK_TSC:
#if defined(__x86_64__)
        if (pbk_has_rdtscp()) ok = 0;
        else pbk_say(why, why_len, "this CPU has no rdtscp instruction");
#else
        pbk_say(why, why_len, "rdtscp is an x86-64 instruction");
#endif
        break;
    case PBK_TIMER:
        ok = 0;
        break;
    default:
        pbk_say(why, why_len, "unknown counter %d", counter);
        return -1;
    }
    if (ok != 0) return -1;
    pbk_active = counter;
    /* a counter that opens but does not move is not available either */
    uint64_t first = pbk_hal_read();
    volatile uint64_t spin = 0;
    for (int i = 0; i < 100000; i++) spin += (uint64_t)i;
    if (pbk_hal_read() == first) {
        pbk_say(why, why_len, "%s opened but did not advance", PBK_NAMES[counter]);
        pbk_hal_close();
        return -1;
    }
    return 0;
}

int pbk_hal_probe(int counter, char *why, size_t why_len) {
    int previous = pbk_active;
    int ok = pbk_hal_open(counter, why, why_len) == 0;
    pbk_hal_close();
    if (previous >= 0) {
        char ignored[8];
        pbk_hal_open(previous, ignored, sizeof ignored);
    }
    return ok;
}

int pbk_hal_active(void) { return pbk_active; }

uint64_t pbk_hal_read(void) {
    switch (pbk_active) {
#if defined(__linux__)
    case PBK_PERF_CYCLES:
        return pbk_perf_read();
#if defined(__x86_64__) || defined(__aarch64__)
    case PBK_PMU_CYCLES:
        return pbk_pmu_read();
#endif
#endif
#if defined(__APPLE__)
    case PBK_MAC_CYCLES:
        return pbk_mac_read();
#endif
#if defined(__x86_64__)
    case PBK_TSC:
        return pbk_rdtscp();
#endif
    case PBK_TIMER:
        return pbk_timer_ns();
    default:
        return 0;
    }
}
