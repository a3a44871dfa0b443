/*
 * pbs_lifo.c - the LIFO scheduler: every worker pushes to and pops from one shared
 * stack (pbs_stack.c). pbs_wait() starts the workers and joins them once the stack
 * is empty and no task is running; steal counters stay 0 (there is no stealing).
 */
#include <pthread.h>
#include <stdlib.h>

#include "pbs_internal.h"
#include "pbs_stack.h"

typedef struct pbs_lifo pbs_lifo;

typedef struct pbs_lifo_worker {
    pbs_lifo *sched;
    unsigned index;
    pthread_t thread;
} pbs_lifo_worker;

struct pbs_lifo {
    pbs_sched base; /* first: a pbs_lifo * is a pbs_sched * */
    pbs_stack stack;
    pbs_lifo_worker *workers;
};

static void *pbs_lifo_worker_main(void *p)
{
    pbs_lifo_worker *w = p;
    pbs_lifo *l = w->sched;
    pbs_tls_current = (pbs_tls_slot){&l->base, w->index};
    unsigned finished = 0;
    pbs_task t;
    while (pbs_stack_next(&l->stack, finished, &t)) {
        t.fn(&l->base, t.arg);
        pbs_stat_add(&l->base.stats[w->index].tasks_executed, 1);
        finished = 1;
    }
    pbs_tls_current = (pbs_tls_slot){NULL, 0};
    return NULL;
}

static int pbs_lifo_spawn(pbs_sched *s, pbs_task_fn fn, void *arg)
{
    pbs_lifo *l = (pbs_lifo *)s;
    int rc = pbs_stack_push(&l->stack, (pbs_task){fn, arg});
    if (rc == PBS_OK)
        pbs_count_spawn(s, pbs_self_index(s));
    return rc;
}

static int pbs_lifo_wait(pbs_sched *s)
{
    pbs_lifo *l = (pbs_lifo *)s;
    if (pbs_stack_pending(&l->stack) == 0)
        return PBS_OK;
    /* The workers are started here, so two concurrent waits would start two sets
     * of threads on the same worker slots: refuse the second. */
    if (atomic_exchange(&s->in_wait, true))
        return PBS_ESTATE;
    unsigned started = 0;
    for (; started < s->cfg.threads; started++) {
        if (pthread_create(&l->workers[started].thread, NULL, pbs_lifo_worker_main,
                           &l->workers[started]) != 0)
            break;
    }
    /* With at least one worker the batch still completes, on fewer threads; with
     * none, the caller runs it as worker 0. */
    if (started == 0)
        pbs_lifo_worker_main(&l->workers[0]);
    for (unsigned i = 0; i < started; i++)
        pthread_join(l->workers[i].thread, NULL);
    atomic_store(&s->in_wait, false);
    return started == s->cfg.threads ? PBS_OK : PBS_ETHREAD;
}

static void pbs_lifo_destroy(pbs_sched *s)
{
    pbs_lifo *l = (pbs_lifo *)s;
    pbs_lifo_wait(s);
    pbs_stack_destroy(&l->stack);
    free(l->workers);
    pbs_base_release(s);
    free(l);
}

static const pbs_sched_ops pbs_lifo_ops = {
    .spawn = pbs_lifo_spawn,
    .wait = pbs_lifo_wait,
    .destroy = pbs_lifo_destroy,
};

int pbs_lifo_create(pbs_sched **out, const pbs_config *cfg, char *msg, size_t msg_len)
{
    pbs_lifo *l = calloc(1, sizeof *l);
    if (l == NULL)
        goto oom;
    if (pbs_base_init(&l->base, &pbs_lifo_ops, cfg) != PBS_OK)
        goto oom_base;
    l->workers = calloc(cfg->threads, sizeof *l->workers);
    if (l->workers == NULL)
        goto oom_workers;
    for (unsigned i = 0; i < cfg->threads; i++) {
        l->workers[i].sched = l;
        l->workers[i].index = i;
    }
    if (pbs_stack_init(&l->stack) != PBS_OK) {
        free(l->workers);
        pbs_base_release(&l->base);
        free(l);
        pbs_set_msg(msg, msg_len, "could not initialise the LIFO stack's mutex");
        return PBS_ETHREAD;
    }
    *out = &l->base;
    return PBS_OK;

oom_workers:
    pbs_base_release(&l->base);
oom_base:
    free(l);
oom:
    pbs_set_msg(msg, msg_len, "out of memory creating a LIFO scheduler");
    return PBS_ENOMEM;
}
