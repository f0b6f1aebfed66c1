//! The statistics a published study reports beside its rates: percentile
//! bootstrap intervals over questions for a condition's rate and for the
//! paired difference between two conditions, and pass@k and pass^k under
//! repeats.
//!
//! Everything is deterministic: the bootstrap draws from a fixed-seed
//! SplitMix64 generator, so the same episodes give the same interval, byte
//! for byte, on every machine (ARCHITECTURE.md, "Invariants").

/// Bootstrap resamples drawn for every interval.
pub const BOOTSTRAP_RESAMPLES: usize = 2000;

/// The fixed seed of every bootstrap.
pub const BOOTSTRAP_SEED: u64 = 0x6f6b_6e2d_6265_6e63;

/// A closed interval `[low, high]`, both fractions (or differences of
/// fractions) on the same scale as the estimate.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Interval {
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
}

impl From<Interval> for (f64, f64) {
    /// `(low, high)`, as `crate::format::interval` takes it.
    fn from(i: Interval) -> (f64, f64) {
        (i.low, i.high)
    }
}

/// `C(n, k)` as a float (exact for the small counts of repeats; the
/// McNemar test of `report::compare` sums it over discordant questions).
pub fn choose(n: u32, k: u32) -> f64 {
    if k > n {
        return 0.0;
    }
    let k = k.min(n - k);
    (0..k).fold(1.0, |acc, i| acc * f64::from(n - i) / f64::from(i + 1))
}

/// pass@k: the chance that at least one of `k` attempts drawn without
/// replacement from `n` recorded attempts, `c` of them exact, is exact —
/// the unbiased estimator `1 − C(n−c, k) / C(n, k)` of Chen et al. (2021,
/// "Evaluating Large Language Models Trained on Code"). `None` when
/// `k` is 0 or exceeds `n`.
pub fn pass_at_k(n: u32, c: u32, k: u32) -> Option<f64> {
    if k == 0 || k > n {
        return None;
    }
    let c = c.min(n);
    Some(1.0 - choose(n - c, k) / choose(n, k))
}

/// pass^k: the chance that all of `k` attempts drawn without replacement
/// are exact, `C(c, k) / C(n, k)` (Yao et al. 2024, τ-bench): how reliably
/// a condition answers, where pass@k says how often it can. `None` when `k`
/// is 0 or exceeds `n`.
pub fn pass_hat_k(n: u32, c: u32, k: u32) -> Option<f64> {
    if k == 0 || k > n {
        return None;
    }
    Some(choose(c.min(n), k) / choose(n, k))
}

/// SplitMix64 (Steele, Lea and Flood 2014): a tiny generator whose output
/// is fixed by its seed on every platform.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator from `seed`.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A uniform index below `n` (`n` > 0), by rejection so there is no
    /// modulo bias.
    pub fn below(&mut self, n: usize) -> usize {
        let n = n as u64;
        let zone = u64::MAX - u64::MAX % n;
        loop {
            let x = self.next_u64();
            if x < zone {
                return (x % n) as usize;
            }
        }
    }
}

/// The mean of `values`; `None` when empty.
pub fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// A paired difference between two conditions over the questions both
/// measured: `estimate` is the mean over those questions of
/// `candidate rate − baseline rate`, with a 95% percentile bootstrap
/// interval from [`BOOTSTRAP_RESAMPLES`] resamples of questions (the unit
/// that was sampled; attempts within a question are not independent).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct PairedDelta {
    /// Questions both conditions measured.
    pub questions: usize,
    /// Mean paired difference.
    pub estimate: f64,
    /// 95% percentile bootstrap interval; `None` with fewer than 2 questions.
    pub interval: Option<Interval>,
}

/// The paired delta of `pairs` (`(baseline, candidate)` rates per question,
/// in a stable order). `None` when `pairs` is empty.
pub fn paired_delta(pairs: &[(f64, f64)]) -> Option<PairedDelta> {
    let diffs: Vec<f64> = pairs.iter().map(|(b, c)| c - b).collect();
    let estimate = mean(&diffs)?;
    Some(PairedDelta {
        questions: diffs.len(),
        estimate,
        interval: bootstrap_mean(&diffs),
    })
}

/// The 95% percentile bootstrap interval of the mean of `values` (one per
/// question, in a stable order): [`BOOTSTRAP_RESAMPLES`] resamples of the
/// values with replacement from [`SplitMix64`] seeded with
/// [`BOOTSTRAP_SEED`], so the same values give the same interval. `None`
/// with fewer than 2 values. Questions are the unit that was sampled;
/// attempts within one are not independent, which is why a condition's
/// rate (a mean over questions) is given this interval rather than one
/// over attempts.
pub fn bootstrap_mean(values: &[f64]) -> Option<Interval> {
    (values.len() >= 2).then(|| {
        let mut rng = SplitMix64::new(BOOTSTRAP_SEED);
        let mut means: Vec<f64> = (0..BOOTSTRAP_RESAMPLES)
            .map(|_| {
                (0..values.len())
                    .map(|_| values[rng.below(values.len())])
                    .sum::<f64>()
                    / values.len() as f64
            })
            .collect();
        means.sort_by(f64::total_cmp);
        let at = |q: f64| means[((q * (means.len() - 1) as f64).round()) as usize];
        Interval {
            low: at(0.025),
            high: at(0.975),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 5e-4
    }

    #[test]
    fn bootstrap_mean_brackets_the_mean_and_is_deterministic() {
        let rates = [1.0, 2.0 / 3.0, 0.0, 1.0, 1.0 / 3.0, 1.0, 2.0 / 3.0, 1.0];
        let i = bootstrap_mean(&rates).unwrap();
        let m = mean(&rates).unwrap();
        assert!(i.low < m && m < i.high, "{i:?} around {m}");
        assert!(i.low >= 0.0 && i.high <= 1.0, "{i:?}");
        assert_eq!(bootstrap_mean(&rates), Some(i));
        assert_eq!(bootstrap_mean(&[0.5]), None);
        // Every question alike: no spread at all.
        assert_eq!(
            bootstrap_mean(&[0.5; 6]),
            Some(Interval {
                low: 0.5,
                high: 0.5
            })
        );
    }

    #[test]
    fn pass_at_k_and_pass_hat_k() {
        // n = 3, c = 1: pass@1 = 1/3, pass@2 = 2/3, pass@3 = 1.
        assert!(close(pass_at_k(3, 1, 1).unwrap(), 1.0 / 3.0));
        assert!(close(pass_at_k(3, 1, 2).unwrap(), 2.0 / 3.0));
        assert_eq!(pass_at_k(3, 1, 3), Some(1.0));
        assert_eq!(pass_at_k(3, 0, 3), Some(0.0));
        // pass^k: c = 2 of 3: pass^1 = 2/3, pass^2 = 1/3, pass^3 = 0.
        assert!(close(pass_hat_k(3, 2, 1).unwrap(), 2.0 / 3.0));
        assert!(close(pass_hat_k(3, 2, 2).unwrap(), 1.0 / 3.0));
        assert_eq!(pass_hat_k(3, 2, 3), Some(0.0));
        assert_eq!(pass_hat_k(3, 3, 3), Some(1.0));
        assert_eq!(pass_at_k(3, 1, 4), None);
        assert_eq!(pass_hat_k(3, 1, 0), None);
    }

    #[test]
    fn paired_delta_is_deterministic_and_brackets_the_estimate() {
        let pairs: Vec<(f64, f64)> = (0..12)
            .map(|i| (f64::from(i % 3) / 2.0, f64::from(i % 2)))
            .collect();
        let a = paired_delta(&pairs).unwrap();
        let b = paired_delta(&pairs).unwrap();
        assert_eq!(a, b);
        let i = a.interval.unwrap();
        assert!(i.low <= a.estimate && a.estimate <= i.high, "{a:?}");
        assert!(i.low < i.high);
        // No variation, no width.
        let same = paired_delta(&[(0.0, 1.0), (0.0, 1.0), (0.0, 1.0)]).unwrap();
        assert_eq!(same.estimate, 1.0);
        assert_eq!(
            same.interval,
            Some(Interval {
                low: 1.0,
                high: 1.0
            })
        );
        assert_eq!(paired_delta(&[]), None);
        assert_eq!(paired_delta(&[(0.5, 1.0)]).unwrap().interval, None);
    }

    #[test]
    fn splitmix_is_fixed_by_its_seed() {
        // Reference output of SplitMix64 seeded with 0 (Vigna's splitmix64.c).
        let mut rng = SplitMix64::new(0);
        assert_eq!(rng.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(rng.next_u64(), 0x6e78_9e6a_a1b9_65f4);
    }
}
