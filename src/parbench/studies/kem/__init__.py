"""kem: ML-KEM-512/768/1024 keypair, encaps and decaps per call with their percentile
distributions, from the seed's own library (libcrux-ml-kem, portable and AVX2 or NEON)
beside liboqs' ML-KEM and OpenSSL's X25519, counted by a chosen counter (core cycles
where the machine has one, else TSC ticks or nanoseconds); and encaps or decaps per
second across threads (seed 002). The study is the class `study.Kem`."""

from parbench.studies.kem.study import Kem

STUDY = Kem()
