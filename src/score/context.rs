//! What the answer key alone decides (the guards, and per group of key
//! columns the values answer cells may snap or resolve onto), and the
//! canonical value of one cell in each tier (`docs/SCORING.md`, "Cells").
//!
//! Nothing here holds a `String` per cell: key texts are borrowed from the
//! table they are in, canonical numbers are written into one text, and a
//! cell's canonical values are [`Val`]s, borrowed or in a row's scratch
//! text. The key is read once ([`key_cell`] with a [`KeyScan`] gathering
//! what the guards need), and the guards are then decided from what was
//! gathered ([`KeyContext::finish`]), in sorted runs rather than through a
//! table probed once per cell.

use std::borrow::Cow;
use std::hash::Hasher;

use rayon::prelude::*;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet, FxHasher};

use super::guard::{self, KeyNumberIndex, Reach};
use super::number::{self, Decimal};
use super::tolerance::{self, Reading, Target, Tolerance};
use super::{ScoreOptions, cell};
use crate::table::Rows;

/// Index of the strict tier in a pair of canonical values.
pub(super) const STRICT: usize = 0;
/// Index of the normalized tier in a pair of canonical values.
pub(super) const NORMALIZED: usize = 1;

/// Rows per unit of parallel work.
pub(super) const CHUNK: usize = 4096;

/// Key IRIs whose texts are loaded together when compared.
const WINDOW: usize = 64;

/// A canonical value: text borrowed from a table or from the key's
/// context, or a byte range of the scratch text of the row it belongs to.
#[derive(Debug, Clone, Copy)]
pub(super) enum Val<'v> {
    Text(&'v str),
    Scratch(u32, u32),
}

impl<'v> Val<'v> {
    /// The value's text, given its row's scratch text.
    pub(super) fn resolve<'s>(self, scratch: &'s str) -> &'s str
    where
        'v: 's,
    {
        match self {
            Val::Text(text) => text,
            Val::Scratch(start, end) => scratch
                .get(start as usize..end as usize)
                .unwrap_or_default(),
        }
    }

    /// True when both are the very same text (not merely equal).
    pub(super) fn is(self, other: Val<'_>) -> bool {
        match (self, other) {
            (Val::Text(a), Val::Text(b)) => std::ptr::eq(a, b),
            (Val::Scratch(a, b), Val::Scratch(c, d)) => (a, b) == (c, d),
            _ => false,
        }
    }
}

/// Appends `text` to `scratch`, as a value.
fn push<'x>(scratch: &mut String, text: &str) -> Val<'x> {
    let start = scratch.len() as u32;
    scratch.push_str(text);
    Val::Scratch(start, scratch.len() as u32)
}

/// `text` as a value: borrowed when it is.
fn whole<'x>(text: &Cow<'x, str>, scratch: &mut String) -> Val<'x> {
    match text {
        Cow::Borrowed(t) => Val::Text(t),
        Cow::Owned(t) => push(scratch, t),
    }
}

/// The last `len` bytes of `text` (a suffix found in it), as a value.
fn suffix<'x>(text: &Cow<'x, str>, len: usize, scratch: &mut String) -> Val<'x> {
    let at = text.len().saturating_sub(len);
    match text {
        Cow::Borrowed(t) => Val::Text(t.get(at..).unwrap_or_default()),
        Cow::Owned(t) => push(scratch, t.get(at..).unwrap_or_default()),
    }
}

/// A copy in `scratch` of a value that borrows what is about to go.
fn detach<'v>(value: Val<'_>, scratch: &mut String) -> Val<'v> {
    match value {
        Val::Text(text) => push(scratch, text),
        Val::Scratch(start, end) => Val::Scratch(start, end),
    }
}

/// `text` in NFC as a value: `text`'s own when it is already.
fn nfc_val<'x>(text: &Cow<'x, str>, scratch: &mut String) -> Val<'x> {
    match cell::nfc(text) {
        Cow::Borrowed(_) => whole(text, scratch),
        Cow::Owned(n) => push(scratch, &n),
    }
}

/// A key cell trimmed and without literal or IRI syntax, borrowed from the
/// table wherever the cell is.
fn unwrapped<'v>(cell: &Cow<'v, str>) -> Cow<'v, str> {
    match cell {
        Cow::Borrowed(text) => cell::unwrap_syntax(text.trim()),
        Cow::Owned(text) => Cow::Owned(cell::unwrap_syntax(text.trim()).into_owned()),
    }
}

/// A number's value as the nearest `f64`, for tolerance comparisons.
fn approx(text: &str) -> f64 {
    text.parse::<f64>()
        .unwrap_or_else(|_| Decimal::parse(text).map_or(f64::NAN, |d| d.to_f64()))
}

/// The local name (in NFC) an answer cell reads when it is `local`
/// written bare, when that is not `local` itself (`x:Paris` → `Paris`).
fn bare_reading(local: &str) -> Option<String> {
    let unwrapped = cell::unwrap_syntax(local);
    let inner = cell::local_name(&unwrapped)?;
    let inner = cell::nfc(inner);
    (*inner != *cell::nfc(local)).then(|| inner.into_owned())
}

/// A hash of one canonical value (not of its place).
pub(super) fn hash(text: &str) -> u64 {
    let mut h = FxHasher::default();
    h.write(text.as_bytes());
    h.write_usize(text.len());
    h.finish()
}

/// A bijective mixing of 64 bits (the finalizer of MurmurHash3).
pub(super) fn mix(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// The hash a local name is looked up by within its group.
fn local_key(group: usize, local: &str) -> u64 {
    mix(hash(local) ^ (group as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

/// Key IRIs by local name within one group, the first IRI seen under
/// each: the exact reading of the guard, used when a key IRI is not text
/// of the table as written or when the guard must name what broke it.
#[derive(Default)]
struct LocalNames<'v> {
    borrowed: HashMap<&'v str, &'v str>,
    /// Names of IRIs that are not text of the table as written (a literal
    /// with escapes, a quoted CSV field with a doubled quote).
    owned: HashMap<String, String>,
}

impl<'v> LocalNames<'v> {
    fn is_empty(&self) -> bool {
        self.borrowed.is_empty() && self.owned.is_empty()
    }

    fn get(&self, local: &str) -> Option<&str> {
        self.borrowed
            .get(local)
            .copied()
            .or_else(|| self.owned.get(local).map(String::as_str))
    }

    /// Records `iri` under `local` unless an IRI is recorded already.
    fn insert_first(&mut self, local: Cow<'v, str>, iri: Cow<'v, str>) {
        if self.get(&local).is_some() {
            return;
        }
        match (local, iri) {
            (Cow::Borrowed(local), Cow::Borrowed(iri)) => {
                self.borrowed.insert(local, iri);
            }
            (local, iri) => {
                self.owned.insert(local.into_owned(), iri.into_owned());
            }
        }
    }
}

/// What the exact reading of the injectivity guard looks at.
struct Guard<'m, 'v> {
    /// Per group, the first key IRI under each local name.
    maps: &'m [LocalNames<'v>],
    /// Per group, the plain key values (in NFC) that are a local name.
    plain: &'m [HashSet<String>],
    /// Per group: it holds IRIs and plain values.
    mixed: &'m [bool],
    /// The key's numbers, when a local name of a group reads as one.
    numbers: Option<&'m KeyNumberIndex>,
}

/// The key's IRIs by local name, for the answer cells that need them.
enum Locals<'v> {
    /// None: no key IRI has a local name, or the reduction is withdrawn.
    None,
    /// One IRI per distinct `(group, local name)` ([`local_key`]), and an
    /// open-addressing index of them (`slots[i]` is an entry's position
    /// + 1, 0 when free).
    Index {
        entries: Vec<IriCell<'v>>,
        slots: Vec<u32>,
    },
    /// Per group, as [`LocalNames`].
    Maps(Vec<LocalNames<'v>>),
}

impl<'v> Locals<'v> {
    /// The first indexed IRI under `key` ([`local_key`]) that `is` the
    /// one looked for; `None` without an index.
    fn probe(&self, key: u64, mut is: impl FnMut(&'v str) -> bool) -> Option<&'v str> {
        let Locals::Index { entries, slots } = self else {
            return None;
        };
        let mask = slots.len() - 1;
        let mut i = key as usize & mask;
        loop {
            let at = slots[i] as usize;
            if at == 0 {
                return None;
            }
            let IriCell { key: k, iri } = entries[at - 1];
            if k == key && is(iri) {
                return Some(iri);
            }
            i = (i + 1) & mask;
        }
    }

    /// True when the index holds an entry under `key` ([`local_key`]): a
    /// local name of that key, or another one sharing its hash. False
    /// without an index.
    fn has_key(&self, key: u64) -> bool {
        self.probe(key, |_| true).is_some()
    }

    /// The key IRI of `group` whose local name is `local`.
    fn get(&self, group: usize, local: &str) -> Option<&str> {
        match self {
            Locals::None => None,
            // The same local name in two groups never has the same key
            // (`local_key` is a bijection of the name's hash for each
            // group), so an entry of this key and name is this group's.
            Locals::Index { .. } => self.probe(local_key(group, local), |iri| {
                cell::local_name(iri) == Some(local)
            }),
            Locals::Maps(maps) => maps.get(group).and_then(|m| m.get(local)),
        }
    }
}

/// A key decimal where it was found, for the closeness guard.
struct KeyDecimal {
    value: f64,
    row: u32,
    /// The column, and in the top bit whether its `f64` tells it from
    /// every other decimal ([`number::Reading::f64_is_exact_key`]).
    column: u32,
}

/// Marks a [`KeyDecimal`] whose `f64` tells it apart.
const EXACT: u32 = 1 << 31;

impl KeyDecimal {
    fn column(&self) -> u32 {
        self.column & !EXACT
    }

    fn exact(&self) -> bool {
        self.column & EXACT != 0
    }
}

/// A key IRI with a local name, for the injectivity guard: its
/// [`local_key`] (which says its group) and the IRI.
#[derive(Clone, Copy)]
struct IriCell<'v> {
    key: u64,
    iri: &'v str,
}

/// What reading key cells gathers for the guards (one per chunk of rows,
/// in row order within it).
pub(super) struct KeyScan<'v> {
    decimals: Vec<KeyDecimal>,
    iris: Vec<IriCell<'v>>,
    /// Per group: holds an absolute IRI with a local name; holds a value
    /// that is not an absolute IRI.
    kinds: Vec<(bool, bool)>,
    /// Some key IRI is not text of the table as written.
    owned_iri: bool,
    /// Some key IRI was read by its local name.
    pub(super) reduced_any: bool,
    /// Per group: holds a plain value with a local name that is not all
    /// of it.
    ambiguous: Vec<bool>,
    /// Per group: the first bytes of its IRIs' local names, as
    /// [`Group::first_bytes`].
    first_bytes: Vec<[u64; 4]>,
    /// Per group: some IRI's local name reads as a number.
    numeric_locals: Vec<bool>,
    /// Some IRI's local name, written bare, reads as another local name
    /// (`x:Paris` of `urn:x:Paris`).
    compound_locals: bool,
    /// The [`local_key`] of every value that is not an absolute IRI, in
    /// NFC, and of its local name: a value that is a key IRI's local name
    /// in its group has one of the keys that IRI has
    /// ([`KeyContext::plain_value_is_a_local_name`] then says whether one
    /// is, in a second reading of the key that most keys are spared).
    plain_keys: Vec<u64>,
}

impl KeyScan<'_> {
    /// Room for what `cells` cells may add, so that the lists are not
    /// copied as they grow. Memory reserved and not written to is not
    /// taken; lists grown by doubling left every smaller copy behind in
    /// the allocator (mimalloc keeps freed pages a while), which took
    /// `score`'s peak memory from 1.97× its inputs to 2.5× (issue 26,
    /// section 4; docs/PERFORMANCE.md, "Scoring a large answer").
    pub(super) fn reserve(&mut self, cells: usize) {
        self.iris.reserve(cells);
        self.plain_keys.reserve(2 * cells);
    }

    pub(super) fn new(groups: usize) -> Self {
        KeyScan {
            decimals: Vec::new(),
            iris: Vec::new(),
            kinds: vec![(false, false); groups],
            ambiguous: vec![false; groups],
            first_bytes: vec![[0; 4]; groups],
            numeric_locals: vec![false; groups],
            compound_locals: false,
            plain_keys: Vec::new(),
            owned_iri: false,
            reduced_any: false,
        }
    }
}

/// What the guards learn from one key cell.
enum Facts<'x> {
    /// A value that is not an absolute IRI (and not a decimal);
    /// `ambiguous`: it has a local name that is not the whole of it, so an
    /// answer cell of the same text might read as that name; `keys`, as
    /// [`KeyScan::plain_keys`] gathers them.
    Plain { ambiguous: bool, keys: NameKeys },
    /// A non-integral number, with its value (and `keys`, as for plain).
    Decimal {
        value: f64,
        exact: bool,
        keys: NameKeys,
    },
    /// An absolute IRI with a local name (`key`, its first byte, whether
    /// it reads as a number, whether written bare it reads as another
    /// local name); the IRI when borrowed and its local name in NFC.
    Iri {
        key: u64,
        first: u8,
        numeric: bool,
        compound: bool,
        iri: Option<&'x str>,
    },
    /// An absolute IRI without a local name.
    Neither,
}

/// A key cell read: its canonical values and, when its normalized value
/// is a local name, the IRI it names.
pub(super) struct KeyCell<'x> {
    pub(super) values: [Val<'x>; 2],
    pub(super) iri: Option<Val<'x>>,
    /// The cell is written in literal or IRI syntax.
    pub(super) unwrapped: bool,
    facts: Facts<'x>,
}

/// Where in the key a cell read by [`key_cell`] is, with what gathers its
/// facts.
pub(super) struct Place<'s, 'v> {
    pub(super) scan: &'s mut KeyScan<'v>,
    pub(super) row: u32,
    pub(super) column: u32,
}

/// Canonical values of a key cell of `group` as `[strict, normalized]`
/// (`docs/SCORING.md`, "Cells"): in the normalized tier a key IRI is its
/// local name when `reduce` (the reduction is in force), and text is in
/// Unicode NFC; non-integral numbers are rounded to `figures`. With a
/// `place`, what the guards need is gathered there.
pub(super) fn key_cell<'v>(
    text: &Cow<'v, str>,
    group: usize,
    (reduce, figures): (bool, u32),
    scratch: &mut String,
    place: Option<Place<'_, 'v>>,
) -> KeyCell<'v> {
    let gather = place.is_some();
    let read = match text {
        Cow::Borrowed(text) => key_cell_in(text, (group, reduce, gather), figures, scratch),
        Cow::Owned(text) => {
            let read = key_cell_in(text, (group, reduce, gather), figures, scratch);
            KeyCell {
                values: read.values.map(|v| detach(v, scratch)),
                iri: read.iri.map(|v| detach(v, scratch)),
                unwrapped: read.unwrapped,
                facts: match read.facts {
                    Facts::Iri {
                        key,
                        first,
                        numeric,
                        compound,
                        ..
                    } => Facts::Iri {
                        key,
                        first,
                        numeric,
                        compound,
                        iri: None,
                    },
                    Facts::Decimal { value, exact, keys } => Facts::Decimal { value, exact, keys },
                    Facts::Plain { ambiguous, keys } => Facts::Plain { ambiguous, keys },
                    Facts::Neither => Facts::Neither,
                },
            }
        }
    };
    if let Some(Place { scan, row, column }) = place {
        let kinds = &mut scan.kinds[group];
        match read.facts {
            Facts::Plain { ambiguous, keys } => {
                kinds.1 = true;
                scan.ambiguous[group] |= ambiguous;
                scan.plain_keys.extend(keys.0.into_iter().flatten());
            }
            Facts::Decimal { value, exact, keys } => {
                kinds.1 = true;
                scan.plain_keys.extend(keys.0.into_iter().flatten());
                scan.decimals.push(KeyDecimal {
                    value,
                    row,
                    column: column | if exact { EXACT } else { 0 },
                });
            }
            Facts::Iri {
                key,
                first,
                numeric,
                compound,
                iri,
            } => {
                kinds.0 = true;
                scan.numeric_locals[group] |= numeric;
                scan.compound_locals |= compound;
                scan.first_bytes[group][usize::from(first >> 6)] |= 1 << (first & 63);
                match iri {
                    Some(iri) => scan.iris.push(IriCell { key, iri }),
                    None => scan.owned_iri = true,
                }
            }
            Facts::Neither => {}
        }
        scan.reduced_any |= read.iri.is_some();
    }
    read
}

/// A number's canonical value (borrowed when the text is already
/// canonical), and whether it is a decimal (not integral).
fn number_val<'x>(text: &'x str, figures: u32, scratch: &mut String) -> Option<(Val<'x>, bool)> {
    if number::is_canonical_integer(text.as_bytes()) {
        return Some((Val::Text(text), false));
    }
    let reading = number::read(text)?;
    let start = scratch.len() as u32;
    reading.push_canonical_at(figures, scratch);
    Some((
        Val::Scratch(start, scratch.len() as u32),
        !reading.is_integral(),
    ))
}

/// The facts of a number of `text` in `group`: a decimal's value, or
/// plain (and nothing to learn unless `gather`).
fn number_facts<'x>(text: &str, decimal: bool, (group, gather): (usize, bool)) -> Facts<'x> {
    let local = if gather { cell::local_name(text) } else { None };
    let keys = NameKeys::of(group, text, local, gather);
    if !decimal || !gather {
        return Facts::Plain {
            ambiguous: false,
            keys,
        };
    }
    let value = approx(text);
    if !tolerance::a_double_holds(value) {
        // Never snapped onto, so it needs no guard (issue 24, item 3).
        return Facts::Plain {
            ambiguous: false,
            keys,
        };
    }
    let exact = number::read(text).is_some_and(|r| r.f64_is_exact_key(value));
    Facts::Decimal { value, exact, keys }
}

/// The [`local_key`]s a key value that is not an absolute IRI could share
/// with a key IRI of its group, were it that IRI's local name: of the
/// value's own local name and of the value, each in NFC (as
/// [`KeyContext::plain_value_is_a_local_name`] looks them up). None
/// unless `gather`.
#[derive(Clone, Copy, Default)]
pub(super) struct NameKeys([Option<u64>; 2]);

impl NameKeys {
    /// The keys of `value`, whose local name ([`cell::local_name`]) is
    /// `local`.
    fn of(group: usize, value: &str, local: Option<&str>, gather: bool) -> NameKeys {
        if !gather {
            return NameKeys::default();
        }
        let whole = local_key(group, &cell::nfc(value));
        let local = local
            .filter(|l| l.len() != value.len())
            .map(|l| local_key(group, &cell::nfc(l)));
        NameKeys([Some(whole), local])
    }
}

/// [`key_cell`] of a cell's text; `(group, reduce, gather)`: the cell's
/// group, whether IRIs are read by local name, whether the guards' facts
/// are wanted.
fn key_cell_in<'x>(
    text: &'x str,
    (group, reduce, gather): (usize, bool, bool),
    figures: u32,
    scratch: &mut String,
) -> KeyCell<'x> {
    let t = cell::trim(text);
    let strict_number = number_val(t, figures, scratch);
    let strict = strict_number.map_or(Val::Text(t), |(v, _)| v);
    let value = cell::unwrap_syntax(t);
    let unchanged = matches!(value, Cow::Borrowed(v) if v.len() == t.len());
    let number = if unchanged {
        strict_number
    } else {
        number_val_of(&value, figures, scratch)
    };
    if let Some((normalized, decimal)) = number {
        return KeyCell {
            values: [strict, normalized],
            iri: None,
            unwrapped: !unchanged,
            facts: number_facts(&value, decimal, (group, gather)),
        };
    }
    if cell::is_absolute_iri(&value) {
        let Some(local) = cell::local_name_of_iri(&value) else {
            return KeyCell {
                values: [strict, nfc_val(&value, scratch)],
                iri: None,
                unwrapped: !unchanged,
                facts: Facts::Neither,
            };
        };
        let numeric = guard::numeric(local);
        // Local names are compared in NFC, as text is. One that is not in
        // NFC is read by the exact reading of the guard (its IRI counts as
        // not borrowed), which keys local names by their NFC.
        let name = cell::nfc(local);
        let in_nfc = matches!(name, Cow::Borrowed(_));
        let facts = Facts::Iri {
            key: if gather { local_key(group, &name) } else { 0 },
            first: name.as_bytes().first().copied().unwrap_or_default(),
            numeric,
            compound: cell::local_name(&cell::unwrap_syntax(local)) != Some(local),
            iri: match value {
                Cow::Borrowed(v) if in_nfc => Some(v),
                _ => None,
            },
        };
        if reduce {
            // A local name that reads as a number stands for its IRI, so
            // that no number of the same value can equal it (issue 24,
            // item 2).
            let len = local.len();
            let iri = whole(&value, scratch);
            let normalized = if numeric {
                iri
            } else if in_nfc {
                suffix(&value, len, scratch)
            } else {
                push(scratch, &name)
            };
            return KeyCell {
                values: [strict, normalized],
                iri: Some(iri),
                unwrapped: !unchanged,
                facts,
            };
        }
        return KeyCell {
            values: [strict, nfc_val(&value, scratch)],
            iri: None,
            unwrapped: !unchanged,
            facts,
        };
    }
    let ascii = t.is_ascii();
    let normalized = if unchanged && ascii {
        strict
    } else {
        nfc_val(&value, scratch)
    };
    // A plain value an answer cell of the same text could read otherwise:
    // its local name is not the whole text.
    let local = if gather {
        cell::local_name(&value)
    } else {
        None
    };
    let ambiguous = local.is_some_and(|l| l.len() != value.len() || !ascii);
    KeyCell {
        values: [strict, normalized],
        iri: None,
        unwrapped: !unchanged,
        facts: Facts::Plain {
            ambiguous,
            keys: NameKeys::of(group, &value, local, gather),
        },
    }
}

/// [`number_val`] of an unwrapped value, borrowed or not.
fn number_val_of<'x>(
    value: &Cow<'x, str>,
    figures: u32,
    scratch: &mut String,
) -> Option<(Val<'x>, bool)> {
    match value {
        Cow::Borrowed(v) => number_val(v, figures, scratch),
        Cow::Owned(v) => number_val(v, figures, scratch).map(|(n, d)| (detach(n, scratch), d)),
    }
}

/// What one group of key columns offers answer cells.
#[derive(Default)]
pub(super) struct Group<'v> {
    /// Key decimals a double holds (non-integral numbers), the snapping
    /// targets, sorted by value, one per distinct value; empty while
    /// snapping is withdrawn.
    decimals: Vec<Target<'v>>,
    /// Canonical text of every numeric key cell: an answer number equal to
    /// one of them is taken at its word and never snapped.
    numbers: HashSet<&'v str>,
    /// The group's key IRIs are read by local name (it has some, and the
    /// reduction is in force).
    pub(super) reduced: bool,
    /// Bit `b` is set when some local name of the group starts with byte
    /// `b`: most cells that are not one are told so without a lookup.
    first_bytes: [u64; 4],
}

impl Group<'_> {
    fn might_hold(&self, local: &str) -> bool {
        local
            .as_bytes()
            .first()
            .is_some_and(|&b| self.first_bytes[usize::from(b >> 6)] & (1 << (b & 63)) != 0)
    }

    fn note_first_byte(&mut self, local: &str) {
        if let Some(&b) = local.as_bytes().first() {
            self.first_bytes[usize::from(b >> 6)] |= 1 << (b & 63);
        }
    }
}

/// What the key alone decides. A group is one key column when columns are
/// matched by name (a cell is only compared with its own column), and all
/// columns together for sorted tuples.
pub(super) struct KeyContext<'v> {
    pub(super) groups: Vec<Group<'v>>,
    locals: Locals<'v>,
    /// Snapping is in force (not withdrawn for the question).
    pub(super) snapping: bool,
    /// IRI local-name reduction is in force (not withdrawn).
    pub(super) iri_normalization: bool,
    pub(super) notes: Vec<String>,
    /// Two cells of the same text (trimmed) have the same canonical values
    /// in both tiers, whichever is the key's: no group read by local name
    /// holds a plain value that has a local name other than itself.
    pub(super) same_text_is_same: bool,
    by_name: bool,
    pub(super) figures: u32,
    tol: Tolerance,
}

/// A numeric key cell, as [`KeyNumbers`] keeps it (ranges of its text).
struct KeyNumber {
    group: u32,
    canonical: (u32, u32),
    /// A decimal a double holds: its value and its text as written.
    decimal: Option<(f64, (u32, u32))>,
}

/// The canonical numbers of the key's cells, in one text, for
/// [`KeyContext::with_numbers`] (only read while snapping is in force).
#[derive(Default)]
pub(super) struct KeyNumbers {
    text: String,
    /// Each numeric key cell: its group, where its canonical text is and,
    /// for a decimal a double holds, its value and where its text as
    /// written is.
    entries: Vec<KeyNumber>,
}

impl<'v> KeyContext<'v> {
    /// The guards, from what reading the key's cells gathered (`scans`,
    /// in row order): the closeness of its decimals (`docs/SCORING.md`,
    /// "Snapping withdrawn") and the injectivity of its IRIs' local names
    /// ("Injectivity guard"), with the local names. `by_name` says whether
    /// each key column is its own group.
    pub(super) fn finish<K: Rows + ?Sized + Sync>(
        key: &'v K,
        scans: Vec<KeyScan<'v>>,
        by_name: bool,
        options: &ScoreOptions,
    ) -> KeyContext<'v> {
        let count = groups_of(key, by_name);
        let mut context = KeyContext {
            groups: (0..count).map(|_| Group::default()).collect(),
            locals: Locals::None,
            snapping: true,
            iri_normalization: true,
            notes: Vec::new(),
            same_text_is_same: false,
            by_name,
            figures: options.significant_figures,
            tol: Tolerance::new(options.numeric_rel_tol),
        };
        let mut ambiguous = vec![false; count];
        let mut numeric_locals = vec![false; count];
        let mut compound = false;
        let mut kinds = vec![(false, false); count];
        let mut owned = false;
        let mut decimals = Vec::with_capacity(scans.iter().map(|s| s.decimals.len()).sum());
        let mut iris = Vec::with_capacity(scans.iter().map(|s| s.iris.len()).sum());
        let mut plain_keys = Vec::with_capacity(scans.len());
        for scan in scans {
            for (all, chunk) in kinds.iter_mut().zip(&scan.kinds) {
                all.0 |= chunk.0;
                all.1 |= chunk.1;
            }
            owned |= scan.owned_iri;
            for (group, first) in context.groups.iter_mut().zip(&scan.first_bytes) {
                for (all, chunk) in group.first_bytes.iter_mut().zip(first) {
                    *all |= chunk;
                }
            }
            for (all, chunk) in ambiguous.iter_mut().zip(&scan.ambiguous) {
                *all |= chunk;
            }
            for (all, chunk) in numeric_locals.iter_mut().zip(&scan.numeric_locals) {
                *all |= chunk;
            }
            compound |= scan.compound_locals;
            decimals.extend(scan.decimals);
            iris.extend(scan.iris);
            plain_keys.push(scan.plain_keys);
        }
        context.check_closeness(key, decimals);
        let mixed: Vec<bool> = kinds.iter().map(|&(iri, plain)| iri && plain).collect();
        let iri_groups: Vec<bool> = kinds.iter().map(|&(iri, _)| iri).collect();
        // Groups where a local name that reads as a number may name a key
        // number.
        let numeric: Vec<bool> = numeric_locals
            .iter()
            .zip(&mixed)
            .map(|(&n, &m)| n && m)
            .collect();
        if owned
            || !context.index_local_names(key, iris, (iri_groups, &mixed), &plain_keys)
            || context.numeric_local_is_a_key_number(key, &numeric)
            || (compound && context.bare_local_name_is_another(key))
        {
            context.exact_local_names(key, (&mixed, &numeric));
        }
        context.same_text_is_same = context
            .groups
            .iter()
            .zip(&ambiguous)
            .all(|(group, &ambiguous)| !(group.reduced && ambiguous));
        context
    }

    /// The group key column `column` belongs to.
    pub(super) fn group_of(&self, column: usize) -> usize {
        if self.by_name {
            column.min(self.groups.len() - 1)
        } else {
            0
        }
    }

    /// The closeness guard: two distinct key decimals within the tolerance
    /// of each other, adjacent in the order of their values (ties by
    /// text), withdraw snapping for the question; the note names the text
    /// each value first appears as.
    fn check_closeness<K: Rows + ?Sized>(&mut self, key: &K, mut decimals: Vec<KeyDecimal>) {
        decimals.par_sort_unstable_by(|a, b| {
            a.value
                .total_cmp(&b.value)
                .then(a.row.cmp(&b.row))
                .then(a.column().cmp(&b.column()))
        });
        let mut previous: Option<(f64, Spot)> = None;
        let mut start = 0;
        while start < decimals.len() {
            let value = decimals[start].value;
            let end = start
                + decimals[start..]
                    .iter()
                    .take_while(|d| d.value.total_cmp(&value).is_eq())
                    .count();
            let run = &decimals[start..end];
            start = end;
            let distinct: Vec<Spot> = if run.iter().all(KeyDecimal::exact) {
                vec![Spot::At(run[0].row, run[0].column())]
            } else {
                distinct_texts(key, run)
            };
            for spot in distinct {
                if let Some((before, first)) = &previous
                    && tolerance::within_by(
                        *before,
                        value,
                        (before.abs() >= value.abs(), &self.tol),
                        || {
                            Some((
                                Decimal::parse(&first.text(key))?,
                                Decimal::parse(&spot.text(key))?,
                            ))
                        },
                    )
                {
                    self.snapping = false;
                    self.notes.push(format!(
                        "decimal snapping withdrawn: the key's own values {} and {} are within relative {} of each other",
                        first.text(key),
                        spot.text(key),
                        self.tol.value
                    ));
                    return;
                }
                previous = Some((value, spot));
            }
        }
    }

    /// The local names of the key's IRIs (`iris`, all borrowed; the groups
    /// holding any, `iri_groups`), from runs of equal local names: true
    /// when they are injective and no plain value of a `mixed` group is
    /// one of them (then they are indexed for lookups), false when the
    /// exact reading must say what broke the guard. `plain_keys` are the
    /// scans' [`KeyScan::plain_keys`]: the key is read again for its plain
    /// values only when one of them is an indexed local name's key.
    fn index_local_names<K: Rows + ?Sized + Sync>(
        &mut self,
        key: &K,
        mut iris: Vec<IriCell<'v>>,
        (iri_groups, mixed): (Vec<bool>, &[bool]),
        plain_keys: &[Vec<u64>],
    ) -> bool {
        if iris.is_empty() {
            return true;
        }
        iris.par_sort_unstable_by_key(|c| c.key);
        // Equal local-name keys must be the same IRI, else the guard is
        // broken (or two local names share a hash): the exact reading
        // decides. Comparing reads IRIs all over the key's text: a window
        // of them is loaded at once, so that the waits overlap.
        let same = iris.par_chunks(WINDOW).enumerate().all(|(w, window)| {
            let loaded = window.iter().fold(0u8, |acc, c| {
                acc ^ c.iri.as_bytes().last().copied().unwrap_or_default()
            });
            std::hint::black_box(loaded);
            window.iter().enumerate().all(|(k, c)| {
                let i = w * WINDOW + k;
                i == 0 || iris[i - 1].key != c.key || iris[i - 1].iri == c.iri
            })
        });
        if !same {
            return false;
        }
        // One entry per local name: the first of each run, kept in place.
        iris.dedup_by_key(|c| c.key);
        iris.shrink_to_fit();
        let entries = iris;
        for (group, scanned) in self.groups.iter_mut().zip(iri_groups) {
            group.reduced = scanned;
        }
        let mut slots = vec![0u32; (entries.len() + entries.len() / 3 + 1).next_power_of_two()];
        let mask = slots.len() - 1;
        for (at, c) in entries.iter().enumerate() {
            let mut i = c.key as usize & mask;
            while slots[i] != 0 {
                i = (i + 1) & mask;
            }
            slots[i] = at as u32 + 1;
        }
        self.locals = Locals::Index { entries, slots };
        // A plain value that is a local name has that name's key; one that
        // only shares a hash with one is told apart by the exact reading.
        let candidate = plain_keys
            .par_iter()
            .any(|keys| keys.iter().any(|&k| self.locals.has_key(k)));
        !(candidate && self.plain_value_is_a_local_name(key, mixed))
    }

    /// True when some value of a `mixed` group that is not an absolute IRI
    /// (in NFC), or its own local name, is the local name of one of the
    /// group's IRIs.
    fn plain_value_is_a_local_name<K: Rows + ?Sized + Sync>(
        &self,
        key: &K,
        mixed: &[bool],
    ) -> bool {
        if !mixed.iter().any(|&m| m) {
            return false;
        }
        let rows = key.row_count();
        (0..rows.div_ceil(CHUNK)).into_par_iter().any(|c| {
            let mut cells = Vec::new();
            (c * CHUNK..((c + 1) * CHUNK).min(rows)).any(|row| {
                key.row_into(row, &mut cells);
                cells.iter().enumerate().any(|(column, text)| {
                    let g = self.group_of(column);
                    if !mixed[g] {
                        return false;
                    }
                    let value = unwrapped(text);
                    if cell::is_absolute_iri(&value) {
                        return false;
                    }
                    // Its own local name is a key IRI's: an answer of the
                    // same text would read as that IRI.
                    let group = &self.groups[g];
                    if let Some(name) = cell::local_name(&value).map(cell::nfc)
                        && group.might_hold(&name)
                        && self.locals.get(g, &name).is_some()
                    {
                        return true;
                    }
                    let value = cell::nfc(&value);
                    group.might_hold(&value) && self.locals.get(g, &value).is_some()
                })
            })
        })
    }

    /// The injectivity guard read exactly, in row order (as
    /// `docs/SCORING.md` states it): within a group, two distinct key IRIs
    /// may not share a local name, and no IRI's local name may equal
    /// another key value of the group (a bare name could stand for
    /// either). Either withdraws the reduction for the question, with a
    /// note naming the first IRI, in row order, that breaks it.
    fn exact_local_names<K: Rows + ?Sized>(
        &mut self,
        key: &'v K,
        (mixed, numeric): (&[bool], &[bool]),
    ) {
        let mut maps: Vec<LocalNames<'v>> = (0..self.groups.len())
            .map(|_| LocalNames::default())
            .collect();
        let mut cells = Vec::new();
        for row in 0..key.row_count() {
            key.row_into(row, &mut cells);
            for (column, text) in cells.iter().enumerate() {
                let value = unwrapped(text);
                if !cell::is_absolute_iri(&value) {
                    continue;
                }
                let Some(local) = cell::local_name(&value) else {
                    continue;
                };
                // Keyed by the local name in NFC (borrowed when it is).
                let local = match (&value, cell::nfc(local)) {
                    (Cow::Borrowed(v), Cow::Borrowed(_)) => {
                        Cow::Borrowed(v.get(v.len() - local.len()..).unwrap_or_default())
                    }
                    (_, name) => Cow::Owned(name.into_owned()),
                };
                maps[self.group_of(column)].insert_first(local, value);
            }
        }
        let mut plain: Vec<HashSet<String>> =
            (0..self.groups.len()).map(|_| HashSet::default()).collect();
        for row in 0..key.row_count() {
            key.row_into(row, &mut cells);
            for (column, text) in cells.iter().enumerate() {
                let g = self.group_of(column);
                if !mixed[g] {
                    continue;
                }
                let value = unwrapped(text);
                if cell::is_absolute_iri(&value) {
                    continue;
                }
                let value = cell::nfc(&value);
                if maps[g].get(&value).is_some() {
                    plain[g].insert(value.into_owned());
                }
            }
        }
        for (group, map) in self.groups.iter_mut().zip(&maps) {
            *group = Group::default();
            group.reduced = !map.is_empty();
            for local in map
                .borrowed
                .keys()
                .copied()
                .chain(map.owned.keys().map(String::as_str))
            {
                group.note_first_byte(local);
            }
        }
        let numbers = numeric
            .iter()
            .any(|&n| n)
            .then(|| self.key_number_index(key, numeric));
        let guard = Guard {
            maps: &maps,
            plain: &plain,
            mixed,
            numbers: numbers.as_ref(),
        };
        match self.first_collision(key, &guard) {
            Some(why) => {
                self.iri_normalization = false;
                self.notes.push(format!(
                    "IRI normalization withdrawn: {why}, so IRIs are compared in full"
                ));
                self.locals = Locals::None;
                for group in &mut self.groups {
                    *group = Group::default();
                }
            }
            None => self.locals = Locals::Maps(maps),
        }
    }

    /// The first key cell, in row order, that breaks the guard, and why:
    /// a plain value whose own local name is a key IRI's; an IRI whose
    /// local name is a plain key value of its group, reads as a key number
    /// of its group, or is shared with an earlier key IRI.
    fn first_collision<K: Rows + ?Sized>(&self, key: &K, guard: &Guard<'_, '_>) -> Option<String> {
        let mut cells = Vec::new();
        for row in 0..key.row_count() {
            key.row_into(row, &mut cells);
            for (column, text) in cells.iter().enumerate() {
                let value = unwrapped(text);
                let g = self.group_of(column);
                if !cell::is_absolute_iri(&value) {
                    if guard.mixed[g]
                        && let Some(local) = cell::local_name(&value)
                        && let Some(iri) = guard.maps[g].get(&cell::nfc(local))
                    {
                        return Some(if *local == *value {
                            format!(
                                "the local name of key IRI {iri} is also the key value '{local}'"
                            )
                        } else {
                            format!(
                                "the key value '{value}' has the local name '{local}' of key IRI {iri}"
                            )
                        });
                    }
                    continue;
                }
                let Some(local) = cell::local_name(&value) else {
                    continue;
                };
                let name = cell::nfc(local);
                if guard.plain[g].contains(&*name) {
                    return Some(format!(
                        "the local name of key IRI {value} is also the key value '{local}'"
                    ));
                }
                if let Some(numbers) = guard.numbers
                    && guard::numeric(local)
                    && let Some(why) = numbers.reads_as_key_number(g, local, &self.tol)
                {
                    return Some(format!("the local name of key IRI {value} {why}"));
                }
                match guard.maps[g].get(&name) {
                    Some(existing) if *existing != *value => {
                        let (first, second) = if *existing < *value {
                            (existing, &*value)
                        } else {
                            (&*value, existing)
                        };
                        return Some(format!(
                            "key IRIs {first} and {second} share the local name '{local}'"
                        ));
                    }
                    _ => {}
                }
                if let Some(inner) = bare_reading(local)
                    && let Some(other) = guard.maps[g].get(&inner)
                {
                    let written = cell::local_name(&cell::unwrap_syntax(local))
                        .map(str::to_string)
                        .unwrap_or_default();
                    return Some(format!(
                        "the local name '{local}' of key IRI {value}, written bare, reads as the local name '{written}' of key IRI {other}"
                    ));
                }
            }
        }
        None
    }

    /// True when a key IRI's local name, written bare and read as an answer
    /// cell, is cut to the local name of another key IRI of its group
    /// (`x:Paris` of `urn:x:Paris` reads as `Paris`, beside
    /// `http://a.org/Paris`).
    fn bare_local_name_is_another<K: Rows + ?Sized>(&self, key: &K) -> bool {
        let mut cells = Vec::new();
        for row in 0..key.row_count() {
            key.row_into(row, &mut cells);
            for (column, text) in cells.iter().enumerate() {
                let value = unwrapped(text);
                if !cell::is_absolute_iri(&value) {
                    continue;
                }
                if let Some(local) = cell::local_name(&value)
                    && let Some(inner) = bare_reading(local)
                    && self.locals.get(self.group_of(column), &inner).is_some()
                {
                    return true;
                }
            }
        }
        false
    }

    /// True when, in a `numeric` group, a key IRI's local name that reads
    /// as a number is a key number of the group, or snaps onto one.
    fn numeric_local_is_a_key_number<K: Rows + ?Sized>(&self, key: &K, numeric: &[bool]) -> bool {
        if !numeric.iter().any(|&n| n) {
            return false;
        }
        let numbers = self.key_number_index(key, numeric);
        let mut cells = Vec::new();
        for row in 0..key.row_count() {
            key.row_into(row, &mut cells);
            for (column, text) in cells.iter().enumerate() {
                let g = self.group_of(column);
                if !numeric[g] {
                    continue;
                }
                let value = unwrapped(text);
                if !cell::is_absolute_iri(&value) {
                    continue;
                }
                if let Some(local) = cell::local_name(&value)
                    && guard::numeric(local)
                    && numbers.reads_as_key_number(g, local, &self.tol).is_some()
                {
                    return true;
                }
            }
        }
        false
    }

    /// The key's numbers of the `wanted` groups, as the guard reads them.
    fn key_number_index<K: Rows + ?Sized>(&self, key: &K, wanted: &[bool]) -> KeyNumberIndex {
        let group_of = |column: usize| self.group_of(column);
        KeyNumberIndex::read(
            key,
            Reach {
                wanted,
                group_of: &group_of,
                figures: self.figures,
                snapping: self.snapping,
            },
            |text| cell::unwrap_syntax(text.trim()).into_owned(),
        )
    }

    /// With the key's numbers: what snapping needs (targets and the values
    /// taken at their word), per group.
    pub(super) fn with_numbers(mut self, numbers: &'v KeyNumbers) -> KeyContext<'v> {
        let text = |(start, end): (u32, u32)| numbers.text.get(start as usize..end as usize);
        for entry in &numbers.entries {
            let Some(canonical) = text(entry.canonical) else {
                continue;
            };
            let group = &mut self.groups[entry.group as usize];
            group.numbers.insert(canonical);
            if let Some((value, written)) = entry.decimal
                && let Some(written) = text(written)
            {
                group.decimals.push((value, canonical, written));
            }
        }
        for group in &mut self.groups {
            group
                .decimals
                .sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.cmp(b.1)));
            // While snapping is in force, equal values are one decimal.
            group.decimals.dedup_by(|a, b| a.0.total_cmp(&b.0).is_eq());
        }
        self
    }

    /// The key IRI of `group` whose local name is `local`, if any.
    pub(super) fn local_iri(&self, group: usize, local: &str) -> Option<&str> {
        if !self.groups[group].might_hold(local) {
            return None;
        }
        self.locals.get(group, local)
    }

    /// Canonical values of an answer cell compared against `group`, as
    /// `[strict, normalized]`, with what adjusted it (normalized tier)
    /// counted in `tally`.
    ///
    /// With `speculate`, a cell that is not a number and whose local name
    /// might be a key IRI's takes that local name as its normalized value
    /// without looking it up; the returned text (the cell without literal
    /// syntax) says so, and the caller must confirm it ([`Self::local_iri`],
    /// or a key cell it equals that is such an IRI) and count it in the
    /// tally.
    pub(super) fn answer_cell(
        &self,
        text: &Cow<'v, str>,
        group: usize,
        speculate: bool,
        scratch: &mut String,
        tally: &mut Tally,
    ) -> ([Val<'v>; 2], Option<Val<'v>>) {
        match text {
            Cow::Borrowed(text) => self.answer_cell_in(text, group, speculate, scratch, tally),
            Cow::Owned(text) => {
                let (values, speculated) =
                    self.answer_cell_in(text, group, speculate, scratch, tally);
                (
                    values.map(|v| detach(v, scratch)),
                    speculated.map(|v| detach(v, scratch)),
                )
            }
        }
    }

    fn answer_cell_in<'x>(
        &self,
        text: &'x str,
        group: usize,
        speculate: bool,
        scratch: &mut String,
        tally: &mut Tally,
    ) -> ([Val<'x>; 2], Option<Val<'x>>)
    where
        'v: 'x,
    {
        let t = cell::trim(text);
        let g = &self.groups[group];
        let number = self.answer_number(t, g, scratch);
        let strict = number.map_or(Val::Text(t), |(v, _)| v);
        let value = cell::unwrap_syntax(t);
        // Reading literal or IRI syntax always shortens the text.
        let unchanged = matches!(value, Cow::Borrowed(v) if v.len() == t.len());
        if !unchanged {
            tally.unwrapped += 1;
        }
        // An answer cell naming a key IRI by its local name (in any of the
        // forms servers print) is that local name, like the key's IRI.
        let local = g.reduced.then(|| cell::local_name(&value)).flatten();
        let name = local.map(cell::nfc);
        if let (Some(local), Some(name)) = (local, name)
            && g.might_hold(&name)
        {
            let len = local.len();
            let in_nfc = matches!(name, Cow::Borrowed(_));
            let is_number = if unchanged {
                number.is_some()
            } else {
                number::read(&value).is_some()
            };
            let numeric = guard::numeric(local);
            if speculate && !is_number && !numeric && in_nfc {
                return (
                    [strict, suffix(&value, len, scratch)],
                    Some(whole(&value, scratch)),
                );
            }
            if let Some(iri) = self.locals.get(group, &name) {
                if *iri != *value {
                    tally.by_local_name += 1;
                }
                // As the key's IRI is: its local name in NFC, or the IRI
                // itself when that name reads as a number.
                let normalized = if numeric {
                    push(scratch, iri)
                } else if in_nfc {
                    suffix(&value, len, scratch)
                } else {
                    push(scratch, &name)
                };
                return ([strict, normalized], None);
            }
        }
        if unchanged {
            if let Some((v, snapped)) = number {
                tally.snapped += usize::from(snapped);
                return ([strict, v], None);
            }
            if t.is_ascii() {
                return ([strict, strict], None);
            }
            return ([strict, nfc_val(&value, scratch)], None);
        }
        let number = match &value {
            Cow::Borrowed(v) => self.answer_number(v, g, scratch),
            Cow::Owned(v) => self
                .answer_number(v, g, scratch)
                .map(|(n, s)| (detach(n, scratch), s)),
        };
        if let Some((v, snapped)) = number {
            tally.snapped += usize::from(snapped);
            return ([strict, v], None);
        }
        ([strict, nfc_val(&value, scratch)], None)
    }

    /// `text` read as an answer number of group `g`: its canonical value,
    /// or the key decimal it snaps onto (then `true`); `None` for text
    /// that is not a number.
    fn answer_number<'x>(
        &self,
        text: &'x str,
        g: &Group<'v>,
        scratch: &mut String,
    ) -> Option<(Val<'x>, bool)>
    where
        'v: 'x,
    {
        let (own, _) = number_val(text, self.figures, scratch)?;
        if self.snapping
            && !g.numbers.contains(own.resolve(scratch))
            && let Some(target) = tolerance::snap_target(
                &g.decimals,
                Reading {
                    value: approx(text),
                    text,
                },
                &self.tol,
            )
        {
            if let Val::Scratch(start, _) = own {
                scratch.truncate(start as usize);
            }
            return Some((Val::Text(target), true));
        }
        Some((own, false))
    }
}

/// How many groups the key's columns form.
pub(super) fn groups_of<K: Rows + ?Sized>(key: &K, by_name: bool) -> usize {
    if by_name {
        key.column_names().len().max(1)
    } else {
        1
    }
}

impl KeyNumbers {
    /// The canonical text of every numeric key cell, with its group and,
    /// for a decimal, its value, in row order. Chunks of rows are read in
    /// parallel and joined (issue 26, section 4: read on one core, this
    /// pass was a fixed cost of every score of a large key).
    pub(super) fn read<K: Rows + ?Sized + Sync>(key: &K, context: &KeyContext<'_>) -> KeyNumbers {
        let rows = key.row_count();
        let parts: Vec<KeyNumbers> = (0..rows.div_ceil(CHUNK))
            .into_par_iter()
            .map(|c| Self::read_rows(key, context, c * CHUNK..((c + 1) * CHUNK).min(rows)))
            .collect();
        let mut numbers = KeyNumbers {
            text: String::with_capacity(parts.iter().map(|p| p.text.len()).sum()),
            entries: Vec::with_capacity(parts.iter().map(|p| p.entries.len()).sum()),
        };
        for part in parts {
            let base = numbers.text.len() as u32;
            let at = |(start, end): (u32, u32)| (start + base, end + base);
            numbers.text.push_str(&part.text);
            numbers
                .entries
                .extend(part.entries.into_iter().map(|entry| KeyNumber {
                    group: entry.group,
                    canonical: at(entry.canonical),
                    decimal: entry.decimal.map(|(value, text)| (value, at(text))),
                }));
        }
        numbers
    }

    /// [`KeyNumbers::read`] over key rows `range`, the ranges in the
    /// entries relative to the text returned.
    fn read_rows<K: Rows + ?Sized>(
        key: &K,
        context: &KeyContext<'_>,
        range: std::ops::Range<usize>,
    ) -> KeyNumbers {
        let mut numbers = KeyNumbers::default();
        let mut cells = Vec::new();
        for row in range {
            key.row_into(row, &mut cells);
            for (column, text) in cells.iter().enumerate() {
                let unwrapped_text = unwrapped(text);
                let Some(reading) = number::read(&unwrapped_text) else {
                    continue;
                };
                let start = numbers.text.len() as u32;
                reading.push_canonical_at(context.figures, &mut numbers.text);
                let canonical = (start, numbers.text.len() as u32);
                let decimal = if reading.is_integral() {
                    None
                } else {
                    let value = approx(&unwrapped_text);
                    tolerance::a_double_holds(value).then(|| {
                        let start = numbers.text.len() as u32;
                        numbers.text.push_str(&unwrapped_text);
                        (value, (start, numbers.text.len() as u32))
                    })
                };
                numbers.entries.push(KeyNumber {
                    group: context.group_of(column) as u32,
                    canonical,
                    decimal,
                });
            }
        }
        numbers
    }
}

/// Where a key decimal's text is: a cell, or (for values told apart by
/// their exact digits) the text itself.
enum Spot {
    At(u32, u32),
    Text(String),
}

impl Spot {
    fn text<K: Rows + ?Sized>(&self, key: &K) -> String {
        match self {
            Spot::At(row, column) => {
                let mut cells = Vec::new();
                key.row_into(*row as usize, &mut cells);
                cells
                    .get(*column as usize)
                    .map(|c| unwrapped(c).into_owned())
                    .unwrap_or_default()
            }
            Spot::Text(text) => text.clone(),
        }
    }
}

/// The distinct values among key decimals of one `f64` (a run of the
/// sorted decimals), each as the text it first appears as (the run is in
/// row order), ordered by value.
fn distinct_texts<K: Rows + ?Sized>(key: &K, run: &[KeyDecimal]) -> Vec<Spot> {
    let mut seen: Vec<(Decimal, String)> = Vec::new();
    for d in run {
        let text = Spot::At(d.row, d.column()).text(key);
        let Some(exact) = Decimal::parse(&text) else {
            continue;
        };
        if !seen.iter().any(|(e, _)| e.cmp_value(&exact).is_eq()) {
            seen.push((exact, text));
        }
    }
    seen.sort_by(|a, b| a.0.cmp_value(&b.0));
    seen.into_iter().map(|(_, text)| Spot::Text(text)).collect()
}

/// What adjusted answer cells in the normalized tier.
#[derive(Default, Debug, Clone, Copy)]
pub(super) struct Tally {
    pub(super) snapped: usize,
    pub(super) by_local_name: usize,
    pub(super) unwrapped: usize,
}

impl Tally {
    pub(super) fn add(&mut self, other: Tally) {
        self.snapped += other.snapped;
        self.by_local_name += other.by_local_name;
        self.unwrapped += other.unwrapped;
    }
}
