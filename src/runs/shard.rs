//! Sharded sweeps: `run --shard K/N` plays the K-th of N disjoint slices of
//! a condition's (question, attempt) pairs (`docs/SCALING.md`).
//!
//! The pairs are numbered in the order a serial run plays them: question
//! by question in the selection's order, attempt 1 to `--repeat` within
//! each, so pair `p = position × repeat + (attempt − 1)`. Shard K holds the
//! pairs with `p mod N = K − 1`. The slice depends only on the selection
//! and `--repeat`, so it is the same on every machine and every day while
//! the corpus does not change, and the N slices are disjoint and cover
//! every pair. Inside a shard the seed's rule still holds: episodes run one
//! at a time.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The most shards `--shard K/N` takes: more than any sweep's pairs.
pub const MAX_SHARDS: u32 = 100_000;

/// One slice of N: `index` in `1..=count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// Which slice, from 1.
    pub index: u32,
    /// How many slices, at least 2 (`1/1` is no sharding at all).
    pub count: u32,
}

impl Shard {
    /// Whether this shard plays `attempt` (from 1) of the question at
    /// `position` (from 0) in the selection, under `repeat` attempts.
    /// A shard outside `1..=count` (a record edited by hand) holds none,
    /// never a panic.
    pub fn holds(&self, position: usize, repeat: u32, attempt: u32) -> bool {
        let pair = position as u64 * u64::from(repeat) + u64::from(attempt.saturating_sub(1));
        match (
            self.index.checked_sub(1),
            pair.checked_rem(u64::from(self.count)),
        ) {
            (Some(slot), Some(rest)) if self.index <= self.count => rest == u64::from(slot),
            _ => false,
        }
    }

    /// `--shard K/N` parsed: `None` for `1/1`, which is a serial run.
    ///
    /// Errors: text that is not `K/N` with `1 <= K <= N`, as a sentence
    /// for clap to print.
    pub fn parse(text: &str) -> Result<Option<Shard>, String> {
        let usage = || {
            format!(
                "'{text}' is not a shard: give K/N, the K-th of N slices, with 1 <= K <= N \
                 (e.g. 2/4; with Slurm, $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT)"
            )
        };
        let (k, n) = text.trim().split_once('/').ok_or_else(usage)?;
        let k: u32 = k.trim().parse().map_err(|_| usage())?;
        let n: u32 = n.trim().parse().map_err(|_| usage())?;
        if k == 0 || n == 0 || k > n {
            return Err(usage());
        }
        if n > MAX_SHARDS {
            return Err(format!(
                "'{text}': at most {MAX_SHARDS} shards (a slice holds at least one of a \
                 condition's (question, attempt) pairs only when N is at most their number)"
            ));
        }
        Ok((n > 1).then_some(Shard { index: k, count: n }))
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// What `--shard` clap takes: `K/N`, with `1/1` meaning no shard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardArg(pub Option<Shard>);

impl FromStr for ShardArg {
    type Err = String;
    fn from_str(text: &str) -> Result<ShardArg, String> {
        Shard::parse(text).map(ShardArg)
    }
}

/// What a shard's condition file records of its slice (`conditions/NAME.json`
/// member `shard`, `docs/FORMAT.md`): which slice it is and the whole
/// selection the slices were cut from, so `merge` can name every attempt
/// a missing shard would have played.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShardRecord {
    /// Which slice, from 1.
    pub index: u32,
    /// How many slices.
    pub count: u32,
    /// Every question id of the selection, in the order pairs are
    /// numbered.
    pub questions: Vec<String>,
}

impl ShardRecord {
    /// The shard this record describes.
    pub fn shard(&self) -> Shard {
        Shard {
            index: self.index,
            count: self.count,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_k_of_n_and_refuses_the_rest() {
        assert_eq!(Shard::parse("2/3"), Ok(Some(Shard { index: 2, count: 3 })));
        assert_eq!(Shard::parse(" 1 / 1 "), Ok(None));
        for bad in ["0/3", "4/3", "3", "a/b", "1/0", "-1/3", "", "1/3/4"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
        assert!(Shard::parse("4/3").unwrap_err().contains("1 <= K <= N"));
        assert!(
            Shard::parse("1/4294967295")
                .unwrap_err()
                .contains("at most 100000 shards")
        );
        assert!(Shard::parse("100000/100000").is_ok());
    }

    #[test]
    fn the_slices_are_disjoint_cover_every_pair_and_balance() {
        for (questions, repeat, count) in [(12usize, 3u32, 3u32), (5, 1, 4), (7, 2, 3), (1, 1, 2)] {
            let mut seen = vec![0u32; questions * repeat as usize];
            let mut sizes = vec![0usize; count as usize];
            for index in 1..=count {
                let shard = Shard { index, count };
                for position in 0..questions {
                    for attempt in 1..=repeat {
                        if shard.holds(position, repeat, attempt) {
                            seen[position * repeat as usize + attempt as usize - 1] += 1;
                            sizes[index as usize - 1] += 1;
                        }
                    }
                }
            }
            assert!(
                seen.iter().all(|&n| n == 1),
                "{questions}×{repeat} in {count}"
            );
            let (min, max) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
            assert!(max - min <= 1, "{sizes:?}");
        }
        // The order a serial run plays: 12 questions × 3 attempts in 3
        // shards puts attempt k of every question in shard k.
        let second = Shard { index: 2, count: 3 };
        assert!(second.holds(0, 3, 2) && second.holds(11, 3, 2));
        assert!(!second.holds(0, 3, 1) && !second.holds(5, 3, 3));
    }
}
