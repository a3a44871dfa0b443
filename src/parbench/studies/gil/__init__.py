"""gil: the same CPU-bound Python work sequential, in threads and in processes, on
several Python runtimes (CPython, CPython's default and free-threaded builds made from
source here when the machine has none, PyPy, Jython, the seed's protoPython) beside a
native control: what the GIL costs and what a GIL-free runtime gains (seed 001). The
study is the class `study.Gil`."""

from parbench.studies.gil.study import Gil

STUDY = Gil()
