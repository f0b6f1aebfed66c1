//! Snapping decided on decimal values (`docs/SCORING.md`, "Snapping"):
//! whether an answer number lies within the relative tolerance of a key
//! decimal, which key decimal is nearest, and whether two key decimals are
//! too close to be told apart.
//!
//! Doubles are only a fast first reading. A value a double cannot hold to
//! full precision (zero, subnormal, beyond `f64::MAX`: `1.5e-400`,
//! `-7e-500` and `0` are all `0.0`) never snaps and is never snapped onto,
//! so it is compared exactly (issue 24, item 3). For values a double does
//! hold, a decision the doubles make with a margin far above their
//! rounding error stands; one within that margin of the boundary is made
//! again on the decimal digits ([`number::within_tolerance`]), so
//! `0.9995` is within 5e-4 of `1` as its digits say, though the doubles
//! put it a hair outside.

use std::cmp::Ordering;

use super::number::{self, Decimal};

/// Relative distance below which two doubles' readings of a comparison
/// are not trusted: far above the error of reading two decimals into
/// doubles and subtracting them (about 4.4e-16 of their magnitude).
const MARGIN: f64 = 1e-12;

/// The tolerance, as a double and as the decimal it is written as.
#[derive(Debug, Clone)]
pub(super) struct Tolerance {
    pub(super) value: f64,
    exact: Option<Decimal>,
}

impl Tolerance {
    pub(super) fn new(value: f64) -> Tolerance {
        Tolerance {
            value,
            exact: number::tolerance(value),
        }
    }
}

/// True when a double holds a number to full precision: only such a
/// number snaps or is snapped onto.
pub(super) fn a_double_holds(value: f64) -> bool {
    value.is_normal()
}

/// A number as the comparisons read it: its nearest double and its text
/// (for the exact reading, made only when the double cannot decide).
#[derive(Debug, Clone, Copy)]
pub(super) struct Reading<'t> {
    pub(super) value: f64,
    pub(super) text: &'t str,
}

impl Reading<'_> {
    fn exact(&self) -> Option<Decimal> {
        Decimal::parse(self.text)
    }
}

/// True when `|a − b| ≤ tol × |scale|`, `scale` being `a` or `b`
/// (`scale_is_a`), on the decimal values.
pub(super) fn within(a: Reading<'_>, b: Reading<'_>, scale_is_a: bool, tol: &Tolerance) -> bool {
    within_by(a.value, b.value, (scale_is_a, tol), || {
        Some((a.exact()?, b.exact()?))
    })
}

/// [`within`] of two numbers given by their doubles `a` and `b`, and by
/// `exact`, which gives their decimal values when the doubles cannot
/// decide (`None`: they are not numbers; the doubles then decide).
pub(super) fn within_by(
    a: f64,
    b: f64,
    (scale_is_a, tol): (bool, &Tolerance),
    exact: impl FnOnce() -> Option<(Decimal, Decimal)>,
) -> bool {
    let scale = if scale_is_a { a } else { b };
    let distance = (a - b).abs();
    let bound = tol.value * scale.abs();
    let margin = MARGIN * (a.abs() + b.abs());
    if (distance - bound).abs() > margin || !distance.is_finite() || !bound.is_finite() {
        return distance <= bound;
    }
    match (exact(), &tol.exact) {
        (Some((x, y)), Some(t)) => {
            let s = if scale_is_a { &x } else { &y };
            number::within_tolerance(&x, &y, t, s)
        }
        _ => distance <= bound,
    }
}

/// Which of `first` and `second` is nearer to `a`, on the decimal values
/// (`Less`: `first`).
fn nearer(a: Reading<'_>, first: Reading<'_>, second: Reading<'_>) -> Ordering {
    let d1 = (a.value - first.value).abs();
    let d2 = (a.value - second.value).abs();
    let margin = MARGIN * (a.value.abs() + first.value.abs() + second.value.abs());
    if (d1 - d2).abs() > margin {
        return d1.total_cmp(&d2);
    }
    match (a.exact(), first.exact(), second.exact()) {
        (Some(x), Some(f), Some(s)) => x.abs_diff(&f).cmp_abs(&x.abs_diff(&s)),
        _ => d1.total_cmp(&d2),
    }
}

/// A snapping target: a key decimal's double, its canonical text (what
/// an answer snapping onto it takes) and its text as written.
pub(super) type Target<'v> = (f64, &'v str, &'v str);

/// The key decimal among `targets` (sorted by value, every one held by a
/// double, no two within the tolerance of each other) nearest to `answer`
/// and within the tolerance of it, the lower of two as near; `None` when
/// there is none or a double cannot hold the answer.
pub(super) fn snap_target<'v>(
    targets: &[Target<'v>],
    answer: Reading<'_>,
    tol: &Tolerance,
) -> Option<&'v str> {
    if !a_double_holds(answer.value) {
        return None;
    }
    // The doubles of the targets rise strictly (two targets with one
    // double would be within the tolerance), and rounding to a double
    // keeps order: the exact neighbours of the answer are among the
    // targets around its double's place, at most one of which has the
    // answer's double.
    let at = targets.partition_point(|(t, _, _)| *t < answer.value);
    let mut best: Option<(Reading<'_>, &'v str)> = None;
    for &(value, canonical, text) in targets[at.saturating_sub(1)..].iter().take(3) {
        let target = Reading { value, text };
        if !within(answer, target, false, tol) {
            continue;
        }
        if best.is_none_or(|(b, _)| nearer(answer, target, b).is_lt()) {
            best = Some((target, canonical));
        }
    }
    best.map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(text: &str) -> Reading<'_> {
        Reading {
            value: text.parse().unwrap(),
            text,
        }
    }

    /// `1 − 0.9995` is `5e-4` exactly; the doubles make it a hair more.
    #[test]
    fn the_boundary_is_decided_on_the_digits() {
        let tol = Tolerance::new(5e-4);
        assert!(within(reading("0.9995"), reading("1"), false, &tol));
        assert!(within(reading("1.0005"), reading("1"), false, &tol));
        assert!(!within(reading("0.99949999"), reading("1"), false, &tol));
        assert!(!within(reading("1.00050001"), reading("1"), false, &tol));
    }

    /// Issue 24, item 3: values a double reads as `0.0` do not snap.
    #[test]
    fn values_a_double_cannot_hold_never_snap() {
        let tol = Tolerance::new(5e-4);
        let targets = [(0.0, "1.5e-400", "1.5e-400")];
        assert_eq!(snap_target(&targets, reading("-7e-500"), &tol), None);
        assert_eq!(snap_target(&targets, reading("0"), &tol), None);
        let targets = [(0.453562, "4.53562e-1", "0.453562")];
        assert_eq!(
            snap_target(&targets, reading("0.45356"), &tol),
            Some("4.53562e-1")
        );
    }

    /// Of two targets both within the tolerance, the nearer on the digits
    /// wins, and the lower when they are as near.
    #[test]
    fn the_nearest_target_wins() {
        let tol = Tolerance::new(5e-4);
        let targets = [(1.0, "1", "1.0"), (1.0009, "1.0009", "1.0009")];
        assert_eq!(snap_target(&targets, reading("1.0004"), &tol), Some("1"));
        assert_eq!(
            snap_target(&targets, reading("1.0005"), &tol),
            Some("1.0009")
        );
        assert_eq!(snap_target(&targets, reading("1.00045"), &tol), Some("1"));
    }
}
