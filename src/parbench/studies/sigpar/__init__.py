"""sigpar: sign/verify throughput of classical and post-quantum signatures across
worker counts, threading against multiprocessing (seed 000). The
study is the class `study.Sigpar`."""

from parbench.studies.sigpar.study import Sigpar

STUDY = Sigpar()
