//! The runs root: where episodes are recorded and judged (seed 000, "Where
//! the results go"). This module owns the on-disk model; `report` reads it.
//!
//! - [`layout`]: paths inside a root.
//! - [`identity`]: condition names and identities (the collision guard).
//! - [`prompt`]: what the agent is asked.
//! - [`records`]: the JSON files and `summary.csv` rows as types, and the
//!   aggregation rules.
//! - [`judge`]: one attempt judged from its files alone.
//! - [`run`]: one condition over a corpus, resumable.
//! - [`rescore`]: every attempt judged again, and freezing a root.

pub mod identity;
pub mod judge;
pub mod layout;
pub mod prompt;
pub mod records;
pub mod rescore;
pub mod run;
