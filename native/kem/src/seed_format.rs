//! The seed's output: one `ML-KEM-<level> Benchmark Results` block per security level,
//! as the seed's README shows it:
//!
//! ```text
//! ML-KEM-512 Benchmark Results
//! ============================
//! keypair cycles = 34938
//! encaps cycles = 38331
//! decaps cycles = 43913
//!           percentile     1    10    20    30    40    50    60    70    80    90    99
//! keypair percentiles: 34129 34462 34632 34754 34848 34938 35039 35154 35286 35497 37627
//! encaps  percentiles: 37450 37895 38046 38152 38243 38331 38443 38547 38680 38946 43106
//! decaps  percentiles: 43110 43420 43591 43698 43811 43913 44016 44142 44283 44510 46454
//! ```
//!
//! The medians, then the percentile rows: the operation left-aligned in 7 characters,
//! then each value right-aligned in a column of 5 after one space. A value wider than 5
//! digits widens every column of the table alike, so the columns stay aligned. The
//! values are counter ticks in the counter's unit; the lines before the block (see
//! `preamble`) name the counter and its unit. `parbench.studies.kem.seed_format` is
//! the same writer in Python, with its parser.

use crate::stats::{median, percentile, PERCENTILES};

/// One operation's ascending sample.
pub struct OpSample<'a> {
    pub operation: &'a str,
    pub sorted: &'a [u64],
}

/// The block for `title` (e.g. "ML-KEM-512").
pub fn block(title: &str, ops: &[OpSample]) -> String {
    let heading = format!("{title} Benchmark Results");
    let mut out = format!("{heading}\n{}\n", "=".repeat(heading.len()));
    for op in ops {
        out += &format!("{} cycles = {}\n", op.operation, median(op.sorted));
    }
    let width = ops
        .iter()
        .flat_map(|op| {
            PERCENTILES
                .iter()
                .map(move |&p| percentile(op.sorted, p).to_string().len())
        })
        .chain(std::iter::once(5))
        .max()
        .unwrap_or(5);
    out += &format!("{:>20}", "percentile");
    for p in PERCENTILES {
        out += &format!(" {:>width$}", p);
    }
    out.push('\n');
    for op in ops {
        out += &format!("{:<7} percentiles:", op.operation);
        for p in PERCENTILES {
            out += &format!(" {:>width$}", percentile(op.sorted, p));
        }
        out.push('\n');
    }
    out
}

/// The lines the seed's benchmark prints before its blocks, and one naming the counter.
pub fn preamble(implementation: &str, iterations: usize, counter_line: &str) -> String {
    format!(
        "Running ML-KEM benchmarks with {implementation} implementation\nIterations per test: {iterations}\n{counter_line}\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Samples whose seed percentiles are exactly the README's rows (one value per
    /// percentile index of a 100-element sample).
    fn readme_sample(rows: [u64; 11], median: u64) -> Vec<u64> {
        let ranks = [1usize, 10, 20, 30, 40, 50, 60, 70, 80, 90, 99];
        let mut s: Vec<u64> = (0..100)
            .map(|i| match ranks.iter().rposition(|&r| r <= i) {
                Some(k) => rows[k],
                None => rows[0],
            })
            .collect();
        s[50] = median;
        s
    }

    #[test]
    fn reproduces_the_readme_block_exactly() {
        let kp = readme_sample(
            [
                34129, 34462, 34632, 34754, 34848, 34938, 35039, 35154, 35286, 35497, 37627,
            ],
            34938,
        );
        let en = readme_sample(
            [
                37450, 37895, 38046, 38152, 38243, 38331, 38443, 38547, 38680, 38946, 43106,
            ],
            38331,
        );
        let de = readme_sample(
            [
                43110, 43420, 43591, 43698, 43811, 43913, 44016, 44142, 44283, 44510, 46454,
            ],
            43913,
        );
        let text = block(
            "ML-KEM-512",
            &[
                OpSample {
                    operation: "keypair",
                    sorted: &kp,
                },
                OpSample {
                    operation: "encaps",
                    sorted: &en,
                },
                OpSample {
                    operation: "decaps",
                    sorted: &de,
                },
            ],
        );
        let expected = "ML-KEM-512 Benchmark Results
============================
keypair cycles = 34938
encaps cycles = 38331
decaps cycles = 43913
          percentile     1    10    20    30    40    50    60    70    80    90    99
keypair percentiles: 34129 34462 34632 34754 34848 34938 35039 35154 35286 35497 37627
encaps  percentiles: 37450 37895 38046 38152 38243 38331 38443 38547 38680 38946 43106
decaps  percentiles: 43110 43420 43591 43698 43811 43913 44016 44142 44283 44510 46454
";
        assert_eq!(text, expected);
    }

    #[test]
    fn wide_values_widen_every_column() {
        let s: Vec<u64> = (0..100).map(|i| 100_000 + i).collect();
        let text = block(
            "ML-KEM-1024",
            &[OpSample {
                operation: "decaps",
                sorted: &s,
            }],
        );
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1].len(), "ML-KEM-1024 Benchmark Results".len());
        assert_eq!(lines[3].len(), lines[4].len());
        assert!(lines[3].ends_with("     99") && lines[4].ends_with(" 100099"));
    }
}
