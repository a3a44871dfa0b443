//! Criterion benchmarks of libcrux-ml-kem's keypair, encaps and decaps for ML-KEM-512,
//! 768 and 1024 on each backend this CPU runs (portable, and AVX2 or NEON):
//!
//!     cargo bench --bench ml-kem
//!     cargo bench --bench ml-kem -- encaps/ML-KEM-768      # a filter, as Criterion takes
//!
//! Inputs (key pairs, randomness, ciphertexts) are made outside the timed routine.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use parbench_kem::implementation::Implementation;
use parbench_kem::kem::{Kem, Level, LEVELS};
use parbench_kem::with_kem;

fn random<const N: usize>() -> [u8; N] {
    let mut b = [0u8; N];
    getrandom::getrandom(&mut b).expect("OS randomness");
    b
}

fn bench_one<K: Kem>(c: &mut Criterion, mut kem: K, name: &str, level: Level) {
    let mut group = c.benchmark_group(format!("{level}/{name}"));
    group.bench_function("keypair", |b| {
        let mut kp = kem.new_keypair();
        b.iter_batched(
            random::<64>,
            |seed| kem.keypair(&seed, &mut kp).unwrap(),
            BatchSize::SmallInput,
        )
    });
    let mut kp = kem.new_keypair();
    kem.keypair(&random(), &mut kp).unwrap();
    group.bench_function("encaps", |b| {
        let (mut ct, mut ss) = (kem.new_ciphertext(), [0u8; 32]);
        b.iter_batched(
            random::<32>,
            |r| kem.encaps(&kp, &r, &mut ct, &mut ss).unwrap(),
            BatchSize::SmallInput,
        )
    });
    let (mut ct, mut ss) = (kem.new_ciphertext(), [0u8; 32]);
    kem.encaps(&kp, &random(), &mut ct, &mut ss).unwrap();
    group.bench_function("decaps", |b| {
        let mut out = [0u8; 32];
        b.iter(|| kem.decaps(&kp, std::hint::black_box(&ct), &mut out).unwrap())
    });
    group.finish();
}

fn ml_kem(c: &mut Criterion) {
    for imp in [
        Implementation::LibcruxPortable,
        Implementation::LibcruxAvx2,
        Implementation::LibcruxNeon,
    ] {
        for level in LEVELS {
            let ran = with_kem!(imp, level, None::<&parbench_kem::liboqs::Liboqs>, |make| {
                bench_one(c, make().unwrap(), imp.name(), level)
            });
            if let Err(why) = ran {
                eprintln!("{} {level}: not benchmarked: {why}", imp.name());
                break;
            }
        }
    }
}

criterion_group!(benches, ml_kem);
criterion_main!(benches);
