//! The seed's statistics of a sample of counter readings: the median is the middle
//! element of the sorted sample (`sorted[n / 2]`) and percentile p the element at
//! `min(n * p / 100, n - 1)`, at the percentiles the seed prints.

/// The percentiles of the seed's table.
pub const PERCENTILES: [usize; 11] = [1, 10, 20, 30, 40, 50, 60, 70, 80, 90, 99];

/// The seed's median of an ascending, non-empty sample.
pub fn median(sorted: &[u64]) -> u64 {
    sorted[sorted.len() / 2]
}

/// The seed's percentile `p` (0..=100) of an ascending, non-empty sample.
pub fn percentile(sorted: &[u64], p: usize) -> u64 {
    sorted[(sorted.len() * p / 100).min(sorted.len() - 1)]
}

/// Every percentile of `PERCENTILES`.
pub fn percentiles(sorted: &[u64]) -> Vec<(usize, u64)> {
    PERCENTILES.iter().map(|&p| (p, percentile(sorted, p))).collect()
}

/// A sorted copy.
pub fn sorted(sample: &[u64]) -> Vec<u64> {
    let mut s = sample.to_vec();
    s.sort_unstable();
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_rules_on_a_small_sample() {
        let s: Vec<u64> = (1..=10).collect();
        assert_eq!(median(&s), 6); // sorted[10 / 2]
        assert_eq!(percentile(&s, 1), 1); // index 0
        assert_eq!(percentile(&s, 10), 2); // index 1
        assert_eq!(percentile(&s, 99), 10); // index 9
        assert_eq!(percentile(&s, 100), 10); // clamped
        assert_eq!(percentiles(&s).len(), 11);
        assert_eq!(percentile(&[7], 50), 7);
    }
}
