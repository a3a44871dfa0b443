"""The function-as-a-service platform of the dispatch study (seed 003, MPCSFaaS): a real
service, started and stopped by `launcher.Platform`.

- `gateway`: the FastAPI app (served by uvicorn) that clients talk to over HTTP;
- `store`: the state in Redis (functions, tasks and their status, results, the channels
  that announce new and finished tasks);
- `dispatcher`: takes announced tasks and runs them in one of four modes (`local`,
  `pull`, `push`, `push-naive`);
- `worker`: a process with a pool of N processes that runs tasks for the dispatcher;
- `pool`: that pool (and the local mode's), which outlives any task: a process that
  dies or runs past a task's time limit fails that task alone and is replaced;
- `zygote`: the pool's fork server, which forks its processes from a clean interpreter;
- `executor`: what a pool process runs (a chunk of tasks, timed and checked, each
  failure with its kind, under the process's memory limit);
- `lifecycle`: how the dispatcher and a worker run their loops until told to stop;
- `serialization`, `protocol`: cloudpickle for functions, arguments and results; msgpack
  for the platform's own messages;
- `launcher`: redis-server, the gateway, the dispatcher and the workers as one process
  group on loopback addresses, stopped again on success, failure, Ctrl+C and SIGTERM;
- `client`: a small synchronous client of the gateway's API.
"""
