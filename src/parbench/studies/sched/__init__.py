"""sched: native C schedulers (LIFO, work stealing, synchronizing work stealing) and
their peers (OpenMP tasks, TBB) on parallel quicksort and Mandelbrot rendering."""
