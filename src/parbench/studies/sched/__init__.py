"""sched: native C schedulers (LIFO, work stealing, synchronizing work stealing) and
their peers (OpenMP tasks, TBB) on parallel quicksort and Mandelbrot rendering (seed 004),
and the seed's fractal explorer (fracsteal) replaying a zoom on ws_sync. The study is the
class `study.Sched`."""

from parbench.studies.sched.study import Sched

STUDY = Sched()
