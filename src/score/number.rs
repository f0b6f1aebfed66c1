//! Exact decimal numbers for scoring: parsing a cell as a number, and the
//! canonical text two cells must share to count as the same number.
//!
//! Numbers are kept as decimal digits, never as binary floats, so integers
//! past 2^53 compare exactly (`9007199254740993` ≠ `9007199254740992`) and
//! rounding to significant figures is decimal rounding. The rules are in
//! `docs/SCORING.md`, section "Numbers".

use std::cmp::Ordering;

/// A finite decimal number: `(-1)^negative × digits × 10^exponent`.
///
/// `digits` has no leading or trailing zeros (each byte is `0..=9`); zero is
/// the empty digit string with `negative == false` and `exponent == 0`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Decimal {
    negative: bool,
    digits: Vec<u8>,
    exponent: i64,
}

/// Values whose decimal exponent (of their leading digit, in scientific
/// form) lies beyond this are not read as numbers (the text stays text);
/// it keeps canonical forms short and arithmetic in range.
const MAX_EXPONENT: i64 = 10_000;

/// True when `digits × 10^exponent` (`len` significant digits) has its
/// leading digit beyond 10^±[`MAX_EXPONENT`]: the rule is on the value's
/// decimal exponent, however many digits it is written with (`1.5e-10000`
/// and `1.50e-10000` are one number; issue 24 red team).
fn beyond_exponent_limit(exponent: i64, len: usize) -> bool {
    (exponent + len as i64 - 1).abs() > MAX_EXPONENT
}

/// Integral values with more than this many digits print in scientific form.
const MAX_PLAIN_DIGITS: i64 = 40;

impl Decimal {
    /// Parses a whole cell as a number: `[+-]? (D+ (. D*)? | . D+) ([eE] [+-]? D+)?`.
    ///
    /// Returns `None` for anything else (`72,`, `NaN`, `1 000`, an empty
    /// cell), and for an integer part with a leading zero (`007`, `00.5`):
    /// such text is an identifier, not a number (`docs/SCORING.md`; case
    /// `032-leading-zero-identifiers`).
    pub fn parse(text: &str) -> Option<Decimal> {
        let Lexed {
            negative,
            int_part,
            frac_part,
            mut exponent,
        } = lex(text)?;
        let mut digits: Vec<u8> = int_part.iter().chain(frac_part).map(|b| b - b'0').collect();
        exponent -= frac_part.len() as i64;
        let leading = digits.iter().take_while(|&&d| d == 0).count();
        digits.drain(..leading);
        while digits.last() == Some(&0) {
            digits.pop();
            exponent += 1;
        }
        if digits.is_empty() {
            return Some(Decimal::zero());
        }
        if beyond_exponent_limit(exponent, digits.len()) {
            return None;
        }
        Some(Decimal {
            negative,
            digits,
            exponent,
        })
    }

    fn zero() -> Decimal {
        Decimal {
            negative: false,
            digits: Vec::new(),
            exponent: 0,
        }
    }

    /// True when the value is a whole number (`5`, `5.000`, `1e3`).
    pub fn is_integral(&self) -> bool {
        self.exponent >= 0
    }

    /// The value as the nearest `f64` (for tolerance comparisons only).
    /// Where the original text is at hand, `text.parse::<f64>()` gives the
    /// same value faster (every text [`Decimal::parse`] accepts is a valid
    /// Rust float literal).
    pub fn to_f64(&self) -> f64 {
        let mut text = String::with_capacity(self.digits.len() + 8);
        if self.negative {
            text.push('-');
        }
        if self.digits.is_empty() {
            return 0.0;
        }
        text.extend(self.digits.iter().map(|d| char::from(b'0' + d)));
        text.push('e');
        text.push_str(&self.exponent.to_string());
        text.parse().unwrap_or(f64::NAN)
    }

    /// Rounds to `figures` significant figures, half away from zero, on the
    /// decimal digits. `figures == 0` is treated as 1.
    pub fn round_to(&self, figures: u32) -> Decimal {
        let figures = figures.max(1) as usize;
        if self.digits.len() <= figures {
            return self.clone();
        }
        let dropped = self.digits.len() - figures;
        let round_up = self.digits[figures] >= 5;
        let mut digits = self.digits[..figures].to_vec();
        let mut exponent = self.exponent + dropped as i64;
        if round_up {
            let mut i = digits.len();
            loop {
                if i == 0 {
                    digits.insert(0, 1);
                    break;
                }
                i -= 1;
                if digits[i] == 9 {
                    digits[i] = 0;
                } else {
                    digits[i] += 1;
                    break;
                }
            }
        }
        while digits.last() == Some(&0) {
            digits.pop();
            exponent += 1;
        }
        Decimal {
            negative: self.negative,
            digits,
            exponent,
        }
    }

    /// The canonical text of this exact value: integral values in plain
    /// digits (`-12`, `1000`; scientific past 40 digits), others in
    /// scientific form with no trailing zeros (`4.53562e-1`, `1e-7`).
    pub fn canonical(&self) -> String {
        if self.digits.is_empty() {
            return "0".to_string();
        }
        let mut out = String::new();
        if self.negative {
            out.push('-');
        }
        let len = self.digits.len() as i64;
        if self.exponent >= 0 && len + self.exponent <= MAX_PLAIN_DIGITS {
            out.extend(self.digits.iter().map(|d| char::from(b'0' + d)));
            out.extend(std::iter::repeat_n('0', self.exponent as usize));
            return out;
        }
        out.push(char::from(b'0' + self.digits[0]));
        if self.digits.len() > 1 {
            out.push('.');
            out.extend(self.digits[1..].iter().map(|d| char::from(b'0' + d)));
        }
        out.push('e');
        out.push_str(&(self.exponent + len - 1).to_string());
        out
    }

    /// This value in plain decimal digits, never in scientific form
    /// (`0.45356`, `-12.5`, `0.0000001`, `1200`): how a person or an agent
    /// writes it.
    pub fn plain(&self) -> String {
        let text = self.canonical();
        let Some((mantissa, exponent)) = text.split_once('e') else {
            return text;
        };
        let exponent: i64 = exponent.parse().unwrap_or(0);
        let (sign, mantissa) = mantissa
            .strip_prefix('-')
            .map_or(("", mantissa), |m| ("-", m));
        let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
        // Digits before the decimal point.
        let point = 1 + exponent;
        if point <= 0 {
            format!("{sign}0.{}{digits}", "0".repeat((-point) as usize))
        } else if point as usize >= digits.len() {
            format!(
                "{sign}{digits}{}",
                "0".repeat(point as usize - digits.len())
            )
        } else {
            let (a, b) = digits.split_at(point as usize);
            format!("{sign}{a}.{b}")
        }
    }

    /// The canonical text used for comparison: integral values exactly,
    /// others rounded to `figures` significant figures first.
    pub fn canonical_at(&self, figures: u32) -> String {
        if self.is_integral() {
            self.canonical()
        } else {
            self.round_to(figures).canonical()
        }
    }
}

impl Decimal {
    /// True for zero.
    pub fn is_zero(&self) -> bool {
        self.digits.is_empty()
    }

    /// The exact order of two values (`-1 < -0.5 < 0 < 1e-400 < 2`).
    pub fn cmp_value(&self, other: &Decimal) -> Ordering {
        match (self.sign(), other.sign()) {
            (a, b) if a != b => a.cmp(&b),
            (0, _) => Ordering::Equal,
            (1, _) => self.cmp_abs(other),
            _ => other.cmp_abs(self),
        }
    }

    /// -1, 0 or 1.
    fn sign(&self) -> i8 {
        match (self.is_zero(), self.negative) {
            (true, _) => 0,
            (false, true) => -1,
            (false, false) => 1,
        }
    }

    /// The exponent of the leading digit (`1234.5` → 3, `0.05` → -2);
    /// `None` for zero.
    fn magnitude(&self) -> Option<i64> {
        (!self.is_zero()).then(|| self.exponent + self.digits.len() as i64 - 1)
    }

    /// The exact order of the absolute values.
    pub fn cmp_abs(&self, other: &Decimal) -> Ordering {
        match (self.magnitude(), other.magnitude()) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (Some(a), Some(b)) if a != b => a.cmp(&b),
            // Same leading position: the digit strings compare from the
            // left, a missing digit being a zero (no trailing zeros).
            _ => self.digits.cmp(&other.digits),
        }
    }

    /// `|self − other|`, exactly.
    pub fn abs_diff(&self, other: &Decimal) -> Decimal {
        let exponent = self.exponent.min(other.exponent);
        let a = aligned(self, exponent);
        let b = aligned(other, exponent);
        let digits = if self.negative != other.negative && !self.is_zero() && !other.is_zero() {
            add_le(&a, &b)
        } else if self.cmp_abs(other) == Ordering::Less {
            sub_le(&b, &a)
        } else {
            sub_le(&a, &b)
        };
        from_le(false, digits, exponent)
    }

    /// `self × other`, exactly.
    pub fn mul(&self, other: &Decimal) -> Decimal {
        if self.is_zero() || other.is_zero() {
            return Decimal::zero();
        }
        let mut product = vec![0u32; self.digits.len() + other.digits.len()];
        for (i, &a) in self.digits.iter().rev().enumerate() {
            for (j, &b) in other.digits.iter().rev().enumerate() {
                product[i + j] += u32::from(a) * u32::from(b);
            }
            // Carry after each row keeps every slot below 10 * 10 * 2.
            let mut carry = 0;
            for slot in product.iter_mut() {
                let v = *slot + carry;
                *slot = v % 10;
                carry = v / 10;
            }
        }
        let digits = product.into_iter().map(|d| d as u8).collect();
        from_le(
            self.negative != other.negative,
            digits,
            self.exponent + other.exponent,
        )
    }
}

/// True when `|a − b| ≤ tol × |scale|`, decided on the decimal values
/// (`docs/SCORING.md`, "Snapping": a tolerance is never decided on binary
/// floats, which cannot tell `1.5e-400` from `0`; issue 24, item 3).
pub fn within_tolerance(a: &Decimal, b: &Decimal, tol: &Decimal, scale: &Decimal) -> bool {
    // With a tolerance below 1, values of other signs or leading digits
    // two places apart are never within it: decided before any digit
    // arithmetic, which then stays within the digits the values have.
    if tol.cmp_abs(&Decimal::one()) == Ordering::Less {
        if a.sign() != b.sign() {
            return false;
        }
        if let (Some(x), Some(y)) = (a.magnitude(), b.magnitude())
            && (x - y).abs() > 1
        {
            return false;
        }
    }
    a.abs_diff(b).cmp_abs(&tol.mul(scale)) != Ordering::Greater
}

/// A tolerance as the decimal value it is written as (the shortest text
/// that reads back as the same `f64`: `5e-4` is `0.0005`); `None` for a
/// value that is not finite.
pub fn tolerance(tol: f64) -> Option<Decimal> {
    tol.is_finite()
        .then(|| Decimal::parse(&format!("{}", tol.abs())))
        .flatten()
}

impl Decimal {
    fn one() -> Decimal {
        Decimal {
            negative: false,
            digits: vec![1],
            exponent: 0,
        }
    }
}

/// The digits of `d`'s absolute value as an integer times `10^exponent`
/// (`exponent` at most `d`'s), least significant first.
fn aligned(d: &Decimal, exponent: i64) -> Vec<u8> {
    let shift = (d.exponent - exponent).max(0) as usize;
    let mut out = vec![0u8; shift];
    out.extend(d.digits.iter().rev());
    out
}

/// `a + b`, digits least significant first.
fn add_le(a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(a.len().max(b.len()) + 1);
    let mut carry = 0u8;
    for i in 0..a.len().max(b.len()) {
        let v = a.get(i).copied().unwrap_or(0) + b.get(i).copied().unwrap_or(0) + carry;
        out.push(v % 10);
        carry = v / 10;
    }
    if carry > 0 {
        out.push(carry);
    }
    out
}

/// `a − b` for `a ≥ b`, digits least significant first.
fn sub_le(a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(a.len());
    let mut borrow = 0i8;
    for (i, &x) in a.iter().enumerate() {
        let mut v = x as i8 - b.get(i).copied().unwrap_or(0) as i8 - borrow;
        borrow = i8::from(v < 0);
        if v < 0 {
            v += 10;
        }
        out.push(v as u8);
    }
    out
}

/// A [`Decimal`] from digits least significant first, times
/// `10^exponent`, without leading or trailing zeros.
fn from_le(negative: bool, mut digits: Vec<u8>, mut exponent: i64) -> Decimal {
    while digits.last() == Some(&0) {
        digits.pop();
    }
    let trailing = digits.iter().take_while(|&&d| d == 0).count();
    digits.drain(..trailing);
    exponent += trailing as i64;
    if digits.is_empty() {
        return Decimal::zero();
    }
    digits.reverse();
    Decimal {
        negative,
        digits,
        exponent,
    }
}

/// Significant digits a number may have for [`push_canonical_at`] to read
/// it without allocating; longer ones go through [`Decimal`].
const INLINE_DIGITS: usize = 64;

/// A number read by [`read`]: its digits inline, or (past
/// [`INLINE_DIGITS`]) a [`Decimal`].
pub(crate) enum Reading {
    /// `(-1)^negative × digits[..len] × 10^exponent`, as in [`Decimal`].
    Inline {
        negative: bool,
        digits: [u8; INLINE_DIGITS],
        len: usize,
        exponent: i64,
    },
    /// Too many digits to hold inline.
    Long(Decimal),
}

impl Reading {
    /// True when the value is a whole number ([`Decimal::is_integral`]).
    pub(crate) fn is_integral(&self) -> bool {
        match self {
            Reading::Inline { exponent, .. } => *exponent >= 0,
            Reading::Long(d) => d.is_integral(),
        }
    }

    /// True when the value has at most 15 significant digits and its
    /// magnitude is that of a normal `f64`: then no other such value has
    /// the same nearest `f64` (15 decimal digits survive a round trip
    /// through binary64), so equal `f64`s mean equal values.
    pub(crate) fn f64_is_exact_key(&self, approx: f64) -> bool {
        matches!(self, Reading::Inline { len, .. } if *len <= 15) && approx.is_normal()
    }

    /// Appends [`Decimal::canonical_at`] of this value to `out`.
    pub(crate) fn push_canonical_at(&self, figures: u32, out: &mut String) {
        match self {
            Reading::Inline {
                negative,
                digits,
                len,
                exponent,
            } => {
                let (mut digits, mut len, mut exponent) = (*digits, *len, *exponent);
                if exponent < 0 {
                    round_inline(&mut digits, &mut len, &mut exponent, figures);
                }
                push_canonical(*negative, &digits[..len], exponent, out);
            }
            Reading::Long(d) => out.push_str(&d.canonical_at(figures)),
        }
    }
}

/// A number's text cut into its parts: the sign, the digits before and
/// after the point (either may be empty, not both) and the exponent.
struct Lexed<'t> {
    negative: bool,
    int_part: &'t [u8],
    frac_part: &'t [u8],
    exponent: i64,
}

/// The number syntax of [`Decimal::parse`] (its docs say which texts are
/// numbers), for it and [`read`]; `None` for any other text.
fn lex(text: &str) -> Option<Lexed<'_>> {
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut negative = false;
    if let Some(&sign) = bytes.first()
        && (sign == b'+' || sign == b'-')
    {
        negative = sign == b'-';
        i = 1;
    }
    let int_start = i;
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        i += 1;
    }
    let int_part = &bytes[int_start..i];
    let mut frac_part: &[u8] = &[];
    if i < bytes.len() && bytes[i] == b'.' {
        i += 1;
        let frac_start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        frac_part = &bytes[frac_start..i];
    }
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    if int_part.len() > 1 && int_part[0] == b'0' {
        return None;
    }
    let mut exponent: i64 = 0;
    if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
        i += 1;
        let mut exp_negative = false;
        if i < bytes.len() && (bytes[i] == b'+' || bytes[i] == b'-') {
            exp_negative = bytes[i] == b'-';
            i += 1;
        }
        let exp_start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        let exp_digits = &bytes[exp_start..i];
        if exp_digits.is_empty() || exp_digits.len() > 6 {
            return None;
        }
        exponent = exp_digits
            .iter()
            .fold(0i64, |e, d| e * 10 + i64::from(d - b'0'));
        if exp_negative {
            exponent = -exponent;
        }
    }
    if i != bytes.len() {
        return None;
    }
    Some(Lexed {
        negative,
        int_part,
        frac_part,
        exponent,
    })
}

/// Reads `text` as [`Decimal::parse`] does (the same texts are numbers),
/// without allocating for up to [`INLINE_DIGITS`] significant digits.
pub(crate) fn read(text: &str) -> Option<Reading> {
    let Lexed {
        negative,
        int_part,
        frac_part,
        mut exponent,
    } = lex(text)?;
    let mut digits = [0u8; INLINE_DIGITS];
    let mut len = 0;
    for &b in int_part.iter().chain(frac_part) {
        let d = b - b'0';
        if len == 0 && d == 0 {
            continue;
        }
        if len == INLINE_DIGITS {
            return Decimal::parse(text).map(Reading::Long);
        }
        digits[len] = d;
        len += 1;
    }
    exponent -= frac_part.len() as i64;
    while len > 0 && digits[len - 1] == 0 {
        len -= 1;
        exponent += 1;
    }
    if len == 0 {
        return Some(Reading::Inline {
            negative: false,
            digits,
            len: 0,
            exponent: 0,
        });
    }
    if beyond_exponent_limit(exponent, len) {
        return None;
    }
    Some(Reading::Inline {
        negative,
        digits,
        len,
        exponent,
    })
}

/// Appends `Decimal::parse(text).map(|d| d.canonical_at(figures))` to
/// `out` and returns whether the number is integral, or returns `None`
/// (leaving `out` as it was) when `text` is not a number. Allocates
/// nothing for a number of up to `INLINE_DIGITS` significant digits.
pub fn push_canonical_at(text: &str, figures: u32, out: &mut String) -> Option<bool> {
    if is_canonical_integer(text.as_bytes()) {
        out.push_str(text);
        return Some(true);
    }
    let reading = read(text)?;
    let integral = reading.is_integral();
    reading.push_canonical_at(figures, out);
    Some(integral)
}

/// An integer already in canonical form (`0`, `-12`, `5000`: no sign but
/// `-`, no leading zero, at most [`MAX_PLAIN_DIGITS`] digits).
pub(crate) fn is_canonical_integer(bytes: &[u8]) -> bool {
    let digits = bytes.strip_prefix(b"-").unwrap_or(bytes);
    match digits.first() {
        Some(b'0') => bytes == b"0",
        Some(b'1'..=b'9') => {
            digits.len() as i64 <= MAX_PLAIN_DIGITS && digits.iter().all(u8::is_ascii_digit)
        }
        _ => false,
    }
}

/// [`Decimal::round_to`] on inline digits.
fn round_inline(
    digits: &mut [u8; INLINE_DIGITS],
    len: &mut usize,
    exponent: &mut i64,
    figures: u32,
) {
    let figures = figures.max(1) as usize;
    if *len <= figures {
        return;
    }
    let round_up = digits[figures] >= 5;
    *exponent += (*len - figures) as i64;
    *len = figures;
    if round_up {
        let mut i = figures;
        loop {
            if i == 0 {
                // Every kept digit was 9: the value is 1 followed by zeros.
                digits[0] = 1;
                *len = 1;
                *exponent += figures as i64;
                break;
            }
            i -= 1;
            if digits[i] == 9 {
                digits[i] = 0;
            } else {
                digits[i] += 1;
                break;
            }
        }
    }
    while *len > 0 && digits[*len - 1] == 0 {
        *len -= 1;
        *exponent += 1;
    }
}

/// [`Decimal::canonical`] of `(-1)^negative × digits × 10^exponent`.
fn push_canonical(negative: bool, digits: &[u8], exponent: i64, out: &mut String) {
    if digits.is_empty() {
        out.push('0');
        return;
    }
    if negative {
        out.push('-');
    }
    let len = digits.len() as i64;
    if exponent >= 0 && len + exponent <= MAX_PLAIN_DIGITS {
        out.extend(digits.iter().map(|d| char::from(b'0' + d)));
        out.extend(std::iter::repeat_n('0', exponent as usize));
        return;
    }
    out.push(char::from(b'0' + digits[0]));
    if digits.len() > 1 {
        out.push('.');
        out.extend(digits[1..].iter().map(|d| char::from(b'0' + d)));
    }
    out.push('e');
    push_integer(exponent + len - 1, out);
}

/// Appends `value` in decimal digits (what `to_string` writes).
fn push_integer(value: i64, out: &mut String) {
    if value < 0 {
        out.push('-');
    }
    let mut rest = value.unsigned_abs();
    let mut buffer = [0u8; 20];
    let mut at = buffer.len();
    loop {
        at -= 1;
        buffer[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    out.extend(buffer[at..].iter().map(|&b| char::from(b)));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(text: &str, figures: u32) -> Option<String> {
        Decimal::parse(text).map(|d| d.canonical_at(figures))
    }

    #[test]
    fn integral_forms_are_one_number() {
        for text in ["5", "5.0", "5.000", "+5", "0.5e1", "50e-1"] {
            assert_eq!(canon(text, 6).as_deref(), Some("5"), "{text}");
        }
        assert_eq!(canon("1e3", 6).as_deref(), Some("1000"));
        assert_eq!(canon("-0", 6).as_deref(), Some("0"));
        assert_eq!(canon("0.000", 6).as_deref(), Some("0"));
    }

    #[test]
    fn big_integers_stay_exact() {
        assert_eq!(
            canon("9007199254740993", 6).as_deref(),
            Some("9007199254740993")
        );
        assert_ne!(canon("9007199254740993", 6), canon("9007199254740992", 6));
    }

    #[test]
    fn decimals_round_to_significant_figures() {
        assert_eq!(canon("0.453562", 6).as_deref(), Some("4.53562e-1"));
        assert_eq!(canon("0.4535625", 6).as_deref(), Some("4.53563e-1"));
        assert_eq!(canon("-0.0001234567", 6).as_deref(), Some("-1.23457e-4"));
        assert_eq!(canon("-0.000123457", 6).as_deref(), Some("-1.23457e-4"));
        assert_eq!(canon("0.0000001", 6), canon("1e-7", 6));
        assert_eq!(canon("9.999995", 6).as_deref(), Some("10"));
        assert_eq!(canon("1234567.5", 6).as_deref(), Some("1234570"));
        assert_eq!(canon("2.5", 1).as_deref(), Some("3"));
        assert_eq!(canon("-2.5", 1).as_deref(), Some("-3"));
    }

    #[test]
    fn non_numbers_stay_text() {
        for text in [
            "72,",
            "",
            "-",
            ".",
            "e5",
            "1e",
            "NaN",
            "inf",
            "1 000",
            "007",
            "00.5",
            "0x10",
            "1.2.3",
            " 5",
            "1e1234567",
        ] {
            assert_eq!(Decimal::parse(text), None, "{text:?}");
        }
        for text in [
            "0",
            "0.5",
            ".5",
            "5.",
            "-0.5",
            "1E+3",
            "1e-07",
            "1.5e-10000",
            "15e-10001",
            "0.15e-9999",
        ] {
            assert!(Decimal::parse(text).is_some(), "{text:?}");
        }
    }

    /// The inline reading writes what `Decimal` writes, for every text
    /// `Decimal` reads and many it does not.
    #[test]
    fn push_canonical_at_is_decimal_canonical_at() {
        let texts = [
            "0",
            "-0",
            "+0",
            "5",
            "-5",
            "+5",
            "007",
            "0.5",
            ".5",
            "5.",
            "-0.5",
            "1E+3",
            "1e-07",
            "9.999995",
            "0.9999995",
            "99999.95",
            "1234567.5",
            "2.5",
            "-2.5",
            "0.453562",
            "0.4535625",
            "-0.0001234567",
            "1e10000",
            "1e10001",
            "1e-10001",
            "0e999999",
            "123456789012345678901234567890123456789012",
            "1000000000000000000000000000000000000000",
            "10000000000000000000000000000000000000000",
            "-1e40",
            "1e39",
            "72,",
            "",
            "e5",
            "1.2.3",
            "00.5",
            "0.000",
            "5.000",
            "50e-1",
        ];
        let long = format!("0.{}1", "9".repeat(80));
        let longer = format!("{}5", "9".repeat(70));
        for text in texts
            .iter()
            .copied()
            .chain([long.as_str(), longer.as_str()])
        {
            for figures in [0, 1, 2, 6, 15, 30] {
                let want = Decimal::parse(text).map(|d| (d.is_integral(), d.canonical_at(figures)));
                let mut out = String::from("x");
                let got =
                    push_canonical_at(text, figures, &mut out).map(|i| (i, out[1..].to_string()));
                assert_eq!(got, want, "{text:?} at {figures}");
                if want.is_none() {
                    assert_eq!(out, "x");
                }
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]

        #[test]
        fn push_canonical_at_agrees(text in "[-+]?[0-9]{0,22}(\\.[0-9]{0,22})?([eE][-+]?[0-9]{1,7})?", figures in 1u32..31) {
            let want = Decimal::parse(&text).map(|d| (d.is_integral(), d.canonical_at(figures)));
            let mut out = String::new();
            let got = push_canonical_at(&text, figures, &mut out).map(|i| (i, out));
            proptest::prop_assert_eq!(got, want);
        }
    }

    fn d(text: &str) -> Decimal {
        Decimal::parse(text).unwrap()
    }

    #[test]
    fn exact_arithmetic() {
        assert_eq!(
            d("1.5e-400").abs_diff(&d("-7e-500")),
            d(&format!("15{}7e-500", "0".repeat(98)))
        );
        assert_eq!(d("1").abs_diff(&d("0.9995")), d("0.0005"));
        assert_eq!(d("-2.5").abs_diff(&d("1.25")), d("3.75"));
        assert_eq!(d("0.0005").mul(&d("-0.5")), d("-0.00025"));
        assert_eq!(d("-1").cmp_value(&d("-0.5")), Ordering::Less);
        assert_eq!(d("1e-400").cmp_value(&d("0")), Ordering::Greater);
        assert_eq!(d("-7e-500").cmp_value(&d("0")), Ordering::Less);
        assert_eq!(d("5.0").cmp_value(&d("5e0")), Ordering::Equal);
        let tol = tolerance(5e-4).unwrap();
        assert_eq!(tol, d("0.0005"));
        assert!(within_tolerance(&d("0.49975"), &d("0.5"), &tol, &d("0.5")));
        assert!(!within_tolerance(
            &d("0.4997499"),
            &d("0.5"),
            &tol,
            &d("0.5")
        ));
        assert!(!within_tolerance(
            &d("-7e-500"),
            &d("1.5e-400"),
            &tol,
            &d("1.5e-400")
        ));
        assert!(within_tolerance(
            &d("1.50001e-400"),
            &d("1.5e-400"),
            &tol,
            &d("1.5e-400")
        ));
    }

    proptest::proptest! {
        /// The exact test agrees with integer arithmetic on values small
        /// enough for `i128` (scaled by 10^12).
        #[test]
        fn within_tolerance_is_exact(a in -2_000_000i64..2_000_000, b in -2_000_000i64..2_000_000, ea in 0u32..6, eb in 0u32..6) {
            let text = |n: i64, e: u32| format!("{n}e-{e}");
            let (x, y) = (d(&text(a, ea)), d(&text(b, eb)));
            let scaled = |n: i64, e: u32| i128::from(n) * 10i128.pow(12 - e);
            let (ax, by) = (scaled(a, ea), scaled(b, eb));
            // |a - b| <= 0.0005 |b|  <=>  10000 |a - b| <= 5 |b|
            let want = 10_000 * (ax - by).abs() <= 5 * by.abs();
            proptest::prop_assert_eq!(within_tolerance(&x, &y, &d("0.0005"), &y), want);
            proptest::prop_assert_eq!(x.cmp_value(&y), ax.cmp(&by));
        }
    }

    #[test]
    fn to_f64_is_close() {
        assert_eq!(Decimal::parse("0.453562").unwrap().to_f64(), 0.453562);
        assert_eq!(Decimal::parse("-1e-7").unwrap().to_f64(), -1e-7);
        assert_eq!(Decimal::parse("0").unwrap().to_f64(), 0.0);
    }
}
