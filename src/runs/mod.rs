//! The runs root: where episodes are recorded and judged (`docs/FORMAT.md`).
//! This module records and judges; `report` reads what it recorded.
//!
//! - [`layout`]: where everything lives in a root, and the types of the
//!   attempt folder's files (the crate-level [`crate::layout`], which the
//!   proxy writes into too: it sits below both).
//! - [`identity`]: condition names and identities (the collision guard).
//! - [`prompt`]: what the agent is asked.
//! - [`records`]: the JSON files and `summary.csv` rows as types, and the
//!   aggregation rules.
//! - [`recorded`]: what a root recorded, read by one set of rules (a
//!   damaged file is refused by name, never read as absent).
//! - [`judge`]: one attempt judged from its files alone.
//! - [`lock`]: one run per condition at a time.
//! - [`trajectory`]: what an attempt's calls say of how it went about it.
//! - [`run`]: one condition over a corpus, resumable (the `harness`
//!   feature, Cargo.toml).
//! - [`resume`]: what `run --resume` may reuse, and the refusal to delete
//!   a recorded attempt it may not (`harness`).
//! - [`frozen`]: frozen roots and the refusal to write into them.
//! - [`shard`]: the slice of a condition `run --shard K/N` plays.
//! - [`merge`]: shard roots joined into one.
//! - [`rescore`]: every attempt judged again, and freezing a root.
//! - [`verified`]: when the ground truth a root was judged by was last
//!   verified against its endpoint.

pub mod frozen;
pub mod identity;
pub mod judge;
pub use crate::layout;
pub mod lock;
pub mod merge;
pub mod prompt;
pub mod recorded;
pub mod records;
pub mod rescore;
#[cfg(feature = "harness")]
pub mod resume;
#[cfg(feature = "harness")]
pub mod run;
pub mod shard;
pub mod trajectory;
pub mod verified;
