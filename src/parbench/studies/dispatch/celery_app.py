"""The Celery peer's application: the three workloads as Celery tasks, with the Redis
of the run (`PARBENCH_DISPATCH_CELERY_REDIS`) as broker and result backend. Celery's
workers import this module (`celery -A parbench.studies.dispatch.celery_app worker`)."""

from __future__ import annotations

import os

from celery import Celery

from parbench.studies.dispatch import workloads

REDIS_ENV = "PARBENCH_DISPATCH_CELERY_REDIS"

_url = os.environ.get(REDIS_ENV, "redis://127.0.0.1:6379/0")
app = Celery("parbench_dispatch", broker=_url, backend=_url)
# JSON (Celery's default): the workloads take and return numbers; Celery also refuses to
# run pickle-accepting workers as root, as CI does
app.conf.update(task_serializer="json", result_serializer="json", accept_content=["json"],
                worker_hijack_root_logger=False, broker_connection_retry_on_startup=True,
                result_expires=3600, worker_send_task_events=False)


@app.task(name="noop")
def noop():
    return workloads.noop()


@app.task(name="cpu")
def cpu(n=1000):
    return workloads.cpu(n)


@app.task(name="io")
def io(seconds=0.1):
    return workloads.io(seconds)


TASKS = {"noop": noop, "cpu": cpu, "io": io}
