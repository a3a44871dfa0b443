"""What the dispatcher and the worker share about their life: running their loops until
they are told to stop."""

from __future__ import annotations

import asyncio


async def run_until_stopped(stopping: asyncio.Event, tasks: list[asyncio.Task]) -> None:
    """Wait until `stopping` is set or one of `tasks` ends; then cancel the tasks, and
    raise the exception of one that ended by failing (a loop that dies stops the
    process instead of leaving it half alive)."""
    stop = asyncio.create_task(stopping.wait())
    done, _ = await asyncio.wait([*tasks, stop], return_when=asyncio.FIRST_COMPLETED)
    for task in tasks:
        task.cancel()
    for task in done:
        if task is not stop and task.exception():
            raise task.exception()
