"""dispatch: the seed's function-as-a-service platform (MPCSFaaS, seed 003) in its local,
pull and push modes, the seed's push design (push-naive) with its anomaly explained,
against ProcessPoolExecutor, Dask, Celery and Ray. The study is the
class `study.Dispatch`."""

from parbench.studies.dispatch.study import Dispatch

STUDY = Dispatch()
