//! How the tool words numbers and verdicts for people: every table, page,
//! region and terminal line formats through here, so a rate reads the same
//! in a README, on the site, in a study's prose and in the paper's tables.
//! (A figure labels its marks in its own compact style, `render::figures`:
//! rates as `0.67`, intervals as `[0.50, 0.83]`, each number a
//! [`fraction`] too.)
//!
//! A leaf module (std only): the scorer, the CSV reader and the proxy use
//! [`plural`] too. Conventions: a value that does not
//! exist is [`NONE`] (`—`), never `0`; rates and F1 have two decimals, or
//! more where two would round a value strictly between 0 and 1 to `0.00`
//! or `1.00` ([`fraction`]); durations are [`seconds`]; a negative number
//! uses a true minus sign (U+2212) where it is shown signed; nothing
//! prints `-0`.

/// What a missing value prints as: an em dash.
pub const NONE: &str = "—";

/// What a question or an attempt that never reached the tools shows in
/// place of a verdict.
pub const BLOCKED: &str = "blocked";

/// A fixed-precision rendering: `digits` decimals, no `-0` (a value that
/// rounds to zero prints unsigned).
pub fn fixed(value: f64, digits: usize) -> String {
    let text = format!("{value:.digits$}");
    if text
        .trim_start_matches('-')
        .chars()
        .all(|c| c == '0' || c == '.')
    {
        text.trim_start_matches('-').to_string()
    } else {
        text
    }
}

/// A duration in seconds for people: one decimal from 1 s up (`12.3`),
/// three below (`0.042`), so a fast episode does not read as `0.0`.
/// Zero is `0.0`; negative values (never recorded) print as for [`fixed`].
pub fn seconds(value: f64) -> String {
    if value.abs() < 0.95 && value != 0.0 {
        fixed(value, 3)
    } else {
        fixed(value, 1)
    }
}

/// [`seconds`] of a value that may be missing ([`NONE`]).
pub fn maybe_seconds(value: Option<f64>) -> String {
    value.map_or_else(|| NONE.to_string(), seconds)
}

/// The fewest decimals, at least `digits`, at which `value` rounds to
/// neither 0 nor `high` when it lies strictly between them; `digits` for
/// any other value.
fn digits_within(value: f64, high: f64, digits: usize) -> usize {
    if !(value > 0.0 && value < high) {
        return digits;
    }
    let mut d = digits;
    loop {
        let text = format!("{value:.d$}");
        // Every f64 has a finite decimal expansion, so a value strictly
        // inside reads as neither bound once there are decimals enough
        // (by 17 near 1, by 324 for the smallest subnormal).
        let reads_high = text == format!("{high:.d$}");
        let reads_zero = text.bytes().all(|b| b == b'0' || b == b'.');
        if !reads_high && !reads_zero {
            return d;
        }
        d += 1;
    }
}

/// A fraction in [0, 1] (a rate, an F1, a precision or a recall) with
/// `digits` decimals, or, where `digits` would round a value strictly
/// between 0 and 1 to 0 or to 1, the fewest decimals at which it does
/// not, rounded to nearest as `format!` rounds: F1 `7928/7929` is
/// `0.9999`, not `1.00`; `0.004` is `0.004`, not `0.00`. So a fraction
/// shown as `1.00` is exactly 1, and one shown as `0.00` exactly 0
/// (`docs/SCORING.md`, "How scores are shown"). Other values print as
/// [`fixed`].
pub fn fraction(value: f64, digits: usize) -> String {
    fixed(value, digits_within(value, 1.0, digits))
}

/// A rate or an F1 (a fraction in [0, 1]): two decimals, more where two
/// would show a value below 1 as `1.00` or above 0 as `0.00`
/// ([`fraction`]); [`NONE`] when there is none (nothing was measured).
pub fn rate(value: Option<f64>) -> String {
    value.map_or_else(|| NONE.to_string(), |v| fraction(v, 2))
}

/// A rate as a percentage: whole (`67%`), or with the fewest decimals at
/// which a rate strictly between 0 and 1 reads neither `0%` nor `100%`
/// (`99.9%` for 999 of 1000, `0.1%` for 1 of 1000); [`NONE`] when there
/// is none.
pub fn percent(value: Option<f64>) -> String {
    value.map_or_else(
        || NONE.to_string(),
        |v| {
            let p = v * 100.0;
            format!("{}%", fixed(p, digits_within(p, 100.0, 0)))
        },
    )
}

/// `part/whole` (exact attempts over measured attempts), [`NONE`] when
/// `whole` is 0: nothing was measured.
pub fn count(part: u32, whole: u32) -> String {
    if whole == 0 {
        NONE.to_string()
    } else {
        format!("{part}/{whole}")
    }
}

/// A signed difference of rates: `+0.08`, `−0.06` (U+2212), `0.00`.
/// Always two decimals: a difference that rounds to `0.00` is no
/// difference at the precision of the rates it compares (and a mean of
/// differences carries float noise that more digits would show).
pub fn signed(value: f64) -> String {
    signed_fixed(value, 2)
}

/// A signed difference at `digits` decimals: `+0.038`, `−0.046` (U+2212),
/// and a value that rounds to zero unsigned (`0.000`), as [`signed`] does at
/// two.
pub fn signed_fixed(value: f64, digits: usize) -> String {
    let text = fixed(value, digits);
    if text.chars().all(|c| c == '0' || c == '.') {
        text
    } else if let Some(magnitude) = text.strip_prefix('-') {
        format!("\u{2212}{magnitude}")
    } else {
        format!("+{text}")
    }
}

/// An interval of rates as `low–high` (an en dash), each bound a
/// [`fraction`] with two decimals or more, [`NONE`] when there is none.
/// The bounds are anything that gives `(low, high)`.
pub fn interval<B: Into<(f64, f64)>>(bounds: Option<B>) -> String {
    bounds.map(Into::into).map_or_else(
        || NONE.to_string(),
        |(low, high)| format!("{}–{}", fraction(low, 2), fraction(high, 2)),
    )
}

/// An interval of signed differences: `−0.17 to +0.08`, [`NONE`] when
/// there is none. The bounds are anything that gives `(low, high)`.
pub fn signed_interval<B: Into<(f64, f64)>>(bounds: Option<B>) -> String {
    bounds.map(Into::into).map_or_else(
        || NONE.to_string(),
        |(low, high)| format!("{} to {}", signed(low), signed(high)),
    )
}

/// `✓`, `✗`, or [`NONE`] when there is no answer to the question asked
/// (an order-sensitive match of an unordered key).
pub fn check(value: Option<bool>) -> String {
    match value {
        Some(true) => "✓".into(),
        Some(false) => "✗".into(),
        None => NONE.into(),
    }
}

/// The plural ending of a count: `""` for 1, `"s"` otherwise
/// (`format!("{n} question{}", plural(n))`).
pub fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// What a figure an agent host's report did not state prints as (issue
/// 25, section 5): a count it left out is not 0.
pub const NOT_STATED: &str = "not stated";

/// What a recorded condition lacks prints as: it was not recorded (an
/// older root, a host that did not say), which is no value of 0 or none.
pub const NOT_RECORDED: &str = "not recorded";

/// An agent host's version as reports show it (issue 25, section 5): as
/// the host stated it, which names the program (`codex-cli 0.171.0`,
/// `okn-benchmark 0.1.0 (scripted agent)`), or the host's name with
/// `(version not recorded)` when no version was recorded: never a
/// version made up.
pub fn host_version(host: &str, version: Option<&str>) -> String {
    match version {
        Some(version) => version.to_string(),
        None => format!("{host} (version {NOT_RECORDED})"),
    }
}

/// A model as a table's cell shows it: [`model`] when one was recorded;
/// else [`NONE`] for a host that plays no model (the scripted agent), and
/// [`NOT_RECORDED`] for one that does.
pub fn model_cell(resolved: Option<&str>, asked: Option<&str>, plays_model: bool) -> String {
    match model(resolved, asked) {
        Some(model) => model,
        None if plays_model => NOT_RECORDED.to_string(),
        None => NONE.to_string(),
    }
}

/// An agent in a few words (issue 25, section 5): its host's version and
/// its model, `codex-cli 0.171.0, model gpt-standin-1`, `okn-benchmark
/// 0.1.0 (scripted agent), no model`, `claude (version not recorded),
/// model not recorded`. `host` is [`host_version`]'s text, `model`
/// [`model`]'s.
pub fn agent_line(host: &str, model: Option<&str>, plays_model: bool) -> String {
    match model {
        Some(model) => format!("{host}, model {model}"),
        None if plays_model => format!("{host}, model {NOT_RECORDED}"),
        None => format!("{host}, no model"),
    }
}

/// A model as reports show it: the model the agent host resolved, with the
/// one asked for in brackets where they differ (`claude-opus-5 (opus)`);
/// `None` when neither was recorded.
pub fn model(resolved: Option<&str>, asked: Option<&str>) -> Option<String> {
    match (resolved, asked) {
        (Some(resolved), Some(asked)) if resolved != asked => Some(format!("{resolved} ({asked})")),
        (Some(resolved), _) => Some(resolved.to_string()),
        (None, asked) => asked.map(str::to_string),
    }
}

/// What one attempt came to: the verdict every report words in its own
/// way ([`Verdict::line`], [`Verdict::cell`], [`Verdict::headline`]).
/// Computed from a recorded attempt by
/// `runs::records::AttemptResult::verdict`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum Verdict {
    /// An answer matched the ground truth (normalized tier).
    Exact {
        /// Its F1 (1 unless the match was by denotation only).
        f1: f64,
    },
    /// An answer was submitted and did not match.
    Miss {
        /// Its F1, partial credit.
        f1: f64,
    },
    /// Nothing was submitted.
    NoAnswer {
        /// The agent host was stopped at its timeout.
        timed_out: bool,
    },
    /// The episode never reached the tools: left out of every rate.
    Blocked {
        /// Why, as recorded.
        reason: Option<String>,
    },
}

/// What a blocked attempt says when no reason was recorded.
const NEVER_REACHED: &str = "never reached the tools";

impl Verdict {
    /// The verdict for a progress line (`run`): `exact (f1 1.00)`,
    /// `miss (f1 0.46)`, `no answer`, `timed out, no answer`,
    /// `blocked (REASON)`. F1 is a [`fraction`]: `miss (f1 0.9999)`, never
    /// `1.00` below 1.
    pub fn line(&self) -> String {
        match self {
            Verdict::Exact { f1 } => format!("exact (f1 {})", fraction(*f1, 2)),
            Verdict::Miss { f1 } => format!("miss (f1 {})", fraction(*f1, 2)),
            Verdict::NoAnswer { timed_out: true } => "timed out, no answer".into(),
            Verdict::NoAnswer { timed_out: false } => "no answer".into(),
            Verdict::Blocked { reason } => {
                format!("blocked ({})", reason.as_deref().unwrap_or(NEVER_REACHED))
            }
        }
    }

    /// The verdict in a table cell (a question page): `✓ exact · F1 1.00`,
    /// `✗ F1 0.46`, `✗ no answer`, `blocked`.
    pub fn cell(&self) -> String {
        match self {
            Verdict::Exact { f1 } => format!("✓ exact · F1 {}", fraction(*f1, 2)),
            Verdict::Miss { f1 } => format!("✗ F1 {}", fraction(*f1, 2)),
            Verdict::NoAnswer { .. } => "✗ no answer".into(),
            Verdict::Blocked { .. } => BLOCKED.into(),
        }
    }

    /// The verdict as a page's headline (an attempt page): `Exact`,
    /// `Not exact · F1 0.46`, `No answer submitted`, `Blocked: REASON (left
    /// out of every rate)`.
    pub fn headline(&self) -> String {
        match self {
            Verdict::Exact { .. } => "Exact".into(),
            Verdict::Miss { f1 } => format!("Not exact · F1 {}", fraction(*f1, 2)),
            Verdict::NoAnswer { .. } => "No answer submitted".into(),
            Verdict::Blocked { reason } => format!(
                "Blocked: {} (left out of every rate)",
                reason.as_deref().unwrap_or(NEVER_REACHED)
            ),
        }
    }

    /// The tone a page colours it with: `ok`, `bad` or `muted` (classes of
    /// `static/style.css`).
    pub fn tone(&self) -> &'static str {
        match self {
            Verdict::Exact { .. } => "ok",
            Verdict::Miss { .. } | Verdict::NoAnswer { .. } => "bad",
            Verdict::Blocked { .. } => "muted",
        }
    }
}

/// `text` on one line: every run of whitespace as one space, cut after
/// `chars` characters (at a character, never inside one) with `…`. A
/// catalog check's preview and the site's search index use it.
pub fn one_line(text: &str, chars: usize) -> String {
    let mut out = String::new();
    for (count, word) in text.split_whitespace().enumerate() {
        if count > 0 {
            out.push(' ');
        }
        out.push_str(word);
        // More bytes than 4 per character kept: enough is read.
        if out.len() > chars.saturating_mul(4) {
            break;
        }
    }
    match out.char_indices().nth(chars) {
        Some((at, _)) => {
            out.truncate(at);
            out.push('…');
            out
        }
        None => out,
    }
}

/// A moment as an RFC 3339 UTC timestamp to the second,
/// `2026-12-03T14:02:05Z`, from seconds since the Unix epoch (the
/// proleptic Gregorian calendar, as `date -u` prints it).
pub fn utc_timestamp(unix_seconds: u64) -> String {
    let days = unix_seconds / 86_400;
    let of_day = unix_seconds % 86_400;
    // Days to a civil date (H. Hinnant, "chrono-Compatible Low-Level Date
    // Algorithms", days_from_civil inverted), in unsigned arithmetic from
    // 0000-03-01.
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        of_day / 3600,
        of_day % 3600 / 60,
        of_day % 60
    )
}

/// [`utc_timestamp`] of the present moment.
pub fn utc_now() -> String {
    utc_timestamp(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    )
}

/// `path` as a published page names it: as given when relative, by its
/// file name when absolute (no folder of this machine is published).
pub fn published_name(path: &std::path::Path) -> String {
    match path.file_name() {
        Some(name) if path.is_absolute() => name.to_string_lossy().into_owned(),
        _ => path.to_string_lossy().into_owned(),
    }
}

/// What the "ordered" rate counts, said wherever the number is shown
/// (issue 26, section 3): it can exceed "exact", being taken over fewer
/// questions (`docs/SCORING.md`, "Ordered").
pub const ORDERED_NOTE: &str = "Ordered is the exact rate over the questions whose answer key \
orders its rows (a top-level ORDER BY) only, the others left out, so it can exceed exact.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signed_differences_at_any_precision_and_published_names() {
        assert_eq!(signed_fixed(0.0381, 3), "+0.038");
        assert_eq!(signed_fixed(-0.046, 3), "\u{2212}0.046");
        assert_eq!(signed_fixed(-0.0004, 3), "0.000");
        assert_eq!(signed_fixed(0.00004, 4), "0.0000");
        assert_eq!(signed(0.08), "+0.08");
        assert_eq!(
            published_name(std::path::Path::new("/tmp/x/runs-a")),
            "runs-a"
        );
        assert_eq!(
            published_name(std::path::Path::new("../runs-a")),
            "../runs-a"
        );
    }

    #[test]
    fn timestamps_are_rfc_3339_utc() {
        assert_eq!(utc_timestamp(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc_timestamp(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc_timestamp(1_709_251_199), "2024-02-29T23:59:59Z");
        assert_eq!(utc_timestamp(4_102_444_800), "2100-01-01T00:00:00Z");
        assert_eq!(utc_timestamp(1_798_984_925), "2027-01-03T14:02:05Z");
    }

    #[test]
    fn fixed_has_no_negative_zero() {
        assert_eq!(fixed(-0.0001, 2), "0.00");
        assert_eq!(fixed(12.345, 1), "12.3");
        assert_eq!(seconds(12.345), "12.3");
        assert_eq!(seconds(0.0421), "0.042");
        assert_eq!(seconds(0.96), "1.0");
        assert_eq!(seconds(0.949), "0.949");
        assert_eq!(seconds(0.0), "0.0");
        assert_eq!(maybe_seconds(None), "—");
    }

    #[test]
    fn rates_counts_and_intervals() {
        assert_eq!(rate(Some(2.0 / 3.0)), "0.67");
        assert_eq!(rate(None), "—");
        assert_eq!(percent(Some(2.0 / 3.0)), "67%");
        assert_eq!(count(2, 3), "2/3");
        assert_eq!(count(0, 0), "—");
        assert_eq!(interval(Some((0.25, 0.5))), "0.25–0.50");
        assert_eq!(interval(None::<(f64, f64)>), "—");
        assert_eq!(signed_interval(Some((-0.17, 0.08))), "−0.17 to +0.08");
        assert_eq!(check(None), "—");
        assert_eq!(format!("1 question{}", plural(1)), "1 question");
        assert_eq!(format!("0 question{}", plural(0)), "0 questions");
    }

    #[test]
    fn a_fraction_below_one_never_reads_one_and_above_zero_never_zero() {
        // One row of 3965 dropped: F1 = 7928/7929.
        assert_eq!(fraction(7928.0 / 7929.0, 2), "0.9999");
        assert_eq!(fraction(0.996, 2), "0.996");
        assert_eq!(fraction(0.994, 2), "0.99");
        assert_eq!(fraction(0.004, 2), "0.004");
        assert_eq!(fraction(0.0, 2), "0.00");
        assert_eq!(fraction(1.0, 2), "1.00");
        assert_eq!(fraction(0.99996, 4), "0.99996");
        assert_eq!(fraction(1.0 - f64::EPSILON / 2.0, 2), "0.9999999999999999");
        assert_eq!(rate(Some(999.0 / 1000.0)), "0.999");
        assert_eq!(interval(Some((0.001, 0.9995))), "0.001–0.9995");
        assert_eq!(percent(Some(0.999)), "99.9%");
        assert_eq!(percent(Some(0.001)), "0.1%");
        assert_eq!(percent(Some(1.0)), "100%");
        assert_eq!(percent(Some(0.0)), "0%");
        assert_eq!(percent(Some(0.72)), "72%");
        assert_eq!(
            Verdict::Miss {
                f1: 7928.0 / 7929.0
            }
            .headline(),
            "Not exact · F1 0.9999"
        );
        assert_eq!(
            Verdict::Miss {
                f1: 7928.0 / 7929.0
            }
            .line(),
            "miss (f1 0.9999)"
        );
        assert_eq!(
            Verdict::Miss {
                f1: 7928.0 / 7929.0
            }
            .cell(),
            "✗ F1 0.9999"
        );
    }

    use proptest::strategy::Strategy as _;

    proptest::proptest! {
        #[test]
        fn fractions_inside_read_inside_and_parse_back(
            x in proptest::prop_oneof![
                0.0f64..1.0,
                // Near the ends, where two decimals would round to 0 or 1.
                (-300.0f64..-2.0).prop_map(|e| 10f64.powf(e)),
                (-16.0f64..-2.0).prop_map(|e| 1.0 - 10f64.powf(e)),
            ],
            digits in 0usize..5,
        ) {
            proptest::prop_assume!(x > 0.0 && x < 1.0);
            let text = fraction(x, digits);
            let shown: f64 = text.parse().unwrap();
            proptest::prop_assert!(shown > 0.0 && shown < 1.0, "{x} -> {text}");
            proptest::prop_assert_ne!(&text, &fixed(0.0, digits));
            proptest::prop_assert_ne!(&text, &fixed(1.0, digits));
            let decimals = text.split_once('.').map_or(0, |(_, d)| d.len());
            proptest::prop_assert!(decimals >= digits);
            // Within half a unit of the last decimal shown.
            let half = 0.5 * 10f64.powi(-(decimals as i32));
            proptest::prop_assert!((shown - x).abs() <= half * (1.0 + 1e-9), "{x} -> {text}");
            // And no more decimals than needed.
            if decimals > digits {
                let fewer = fixed(x, decimals - 1);
                proptest::prop_assert!(fewer == fixed(0.0, decimals - 1) || fewer == fixed(1.0, decimals - 1), "{x} -> {text}");
            }
        }

        #[test]
        fn rates_and_percentages_inside_read_inside(x in 1e-12f64..(1.0 - 1e-12)) {
            let r = rate(Some(x));
            proptest::prop_assert!(r != "0.00" && r != "1.00", "{x} -> {r}");
            let p = percent(Some(x));
            proptest::prop_assert!(p != "0%" && p != "100%", "{x} -> {p}");
            let shown: f64 = p.trim_end_matches('%').parse().unwrap();
            proptest::prop_assert!(shown > 0.0 && shown < 100.0, "{x} -> {p}");
        }
    }

    #[test]
    fn signed_numbers_use_a_true_minus() {
        assert_eq!(signed(0.083), "+0.08");
        assert_eq!(signed(-0.0625), "\u{2212}0.06");
        assert_eq!(signed(-0.001), "0.00");
    }

    #[test]
    fn models_and_agents() {
        assert_eq!(
            model(Some("claude-opus-5"), Some("opus")).as_deref(),
            Some("claude-opus-5 (opus)")
        );
        assert_eq!(model(Some("m"), Some("m")).as_deref(), Some("m"));
        assert_eq!(model(None, Some("opus")).as_deref(), Some("opus"));
        assert_eq!(model(None, None), None);
        // Issue 25, section 5: a version or model that was not recorded
        // is said so, never made up; the scripted agent plays no model.
        assert_eq!(
            host_version("codex", Some("codex-cli 0.171.0")),
            "codex-cli 0.171.0"
        );
        assert_eq!(
            host_version("claude", None),
            "claude (version not recorded)"
        );
        assert_eq!(model_cell(None, None, true), "not recorded");
        assert_eq!(model_cell(None, None, false), "—");
        assert_eq!(model_cell(Some("m-1"), Some("m"), true), "m-1 (m)");
        assert_eq!(
            agent_line("codex-cli 0.171.0", Some("gpt-5"), true),
            "codex-cli 0.171.0, model gpt-5"
        );
        assert_eq!(
            agent_line("claude (version not recorded)", None, true),
            "claude (version not recorded), model not recorded"
        );
        assert_eq!(
            agent_line("okn-benchmark 0.1.0 (scripted agent)", None, false),
            "okn-benchmark 0.1.0 (scripted agent), no model"
        );
    }

    #[test]
    fn one_verdict_three_wordings() {
        let miss = Verdict::Miss { f1: 0.4567 };
        assert_eq!(
            (miss.line(), miss.cell(), miss.headline(), miss.tone()),
            (
                "miss (f1 0.46)".to_string(),
                "✗ F1 0.46".to_string(),
                "Not exact · F1 0.46".to_string(),
                "bad"
            )
        );
        let blocked = Verdict::Blocked { reason: None };
        assert_eq!(blocked.line(), "blocked (never reached the tools)");
        assert_eq!(
            blocked.headline(),
            "Blocked: never reached the tools (left out of every rate)"
        );
        assert_eq!(
            Verdict::NoAnswer { timed_out: true }.line(),
            "timed out, no answer"
        );
        assert_eq!(Verdict::Exact { f1: 1.0 }.cell(), "✓ exact · F1 1.00");
    }
}
