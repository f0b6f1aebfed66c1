//! One expectation line read into its type (`docs/TRAJECTORY.md`,
//! "Writing an expectation"): `TYPE CHECK [FIELD=VALUE ...]`, a value
//! bare or in double quotes, and the refusals of what does not fit.

use super::{CheckName, Expectation, Kind, KnownGap, Queries};

/// The most characters of an expectation id.
pub const MAX_ID_CHARS: usize = 40;

/// The word that turns a corpus default off in a record
/// (`#+ expect.ID: off`).
pub const OFF: &str = "off";

/// Reads expectation `id`'s line `text` (what follows the colon of
/// `#+ expect.ID:`, or a default's value in `okn-benchmark.toml`).
///
/// Returns `Ok(None)` for `off`. Errors (one sentence saying what to
/// write instead): an id that is not lowercase letters, digits, `-` and
/// `_`; a type other than `contract` or `quality`; an unknown check (the
/// nearest name suggested); a field the check does not take, one it needs
/// missing, or given twice; a value out of range (`n=0`, one tool in
/// `tools`, `submit_csv` named, a `known_gap` that is not `YYYY-MM-DD`, a
/// `note` without `known_gap`); an unclosed quote.
pub fn parse_line(id: &str, text: &str) -> Result<Option<Expectation>, String> {
    check_id(id)?;
    let tokens = tokenize(text)?;
    let mut words = tokens.iter();
    let Some(kind) = words.next() else {
        return Err(
            "is empty: write 'TYPE CHECK [FIELD=VALUE ...]' (docs/TRAJECTORY.md), or 'off'".into(),
        );
    };
    if kind.0.is_none() && kind.1 == OFF && tokens.len() == 1 {
        return Ok(None);
    }
    let kind = match (kind.0.as_deref(), kind.1.as_str()) {
        (None, "contract") => Kind::Contract,
        (None, "quality") => Kind::Quality,
        (None, "current_state") => {
            return Err(
                "type 'current_state' is the catalog's, for how a server behaves today; a \
                        trajectory expectation is 'contract' or 'quality'"
                    .into(),
            );
        }
        _ => {
            return Err(format!(
                "begins with '{}': the type comes first, 'contract' or 'quality'",
                show(kind)
            ));
        }
    };
    let Some(check) = words.next() else {
        return Err("names no check after its type (docs/TRAJECTORY.md lists them)".into());
    };
    let check = match (&check.0, CheckName::of(&check.1)) {
        (None, Some(c)) => c,
        _ => {
            let names: Vec<&str> = super::CHECKS.iter().map(|c| c.name()).collect();
            let hint = crate::suggest::did_you_mean(&check.1, names.iter().copied());
            return Err(format!(
                "unknown check '{}'{hint}: the checks are {}",
                show(check),
                names.join(", ")
            ));
        }
    };
    let mut expectation = Expectation {
        id: id.to_string(),
        kind,
        check,
        queries: None,
        tool: None,
        tools: None,
        n: None,
        known_gap: None,
    };
    let mut note = None;
    let mut seen = Vec::new();
    for token in words {
        let Some(field) = &token.0 else {
            return Err(format!(
                "'{}' is not FIELD=VALUE: check '{}' takes {}",
                token.1,
                check.name(),
                takes(check)
            ));
        };
        if seen.contains(field) {
            return Err(format!("field '{field}' is given twice"));
        }
        seen.push(field.clone());
        let value = token.1.clone();
        match field.as_str() {
            "known_gap" => {
                expectation.known_gap = Some(KnownGap {
                    found: value,
                    note: None,
                })
            }
            "note" => note = Some(value),
            "queries" if check.fields().contains(&"queries") => {
                expectation.queries = Some(match value.as_str() {
                    "all" => Queries::All,
                    "first" => Queries::First,
                    _ => {
                        return Err(format!(
                            "queries='{value}': write queries=all or queries=first"
                        ));
                    }
                })
            }
            "tool" if check.fields().contains(&"tool") => expectation.tool = Some(value),
            "tools" if check.fields().contains(&"tools") => {
                expectation.tools = Some(value.split(',').map(|t| t.trim().to_string()).collect())
            }
            "n" if check.fields().contains(&"n") => {
                expectation.n = Some(
                    value
                        .parse()
                        .map_err(|_| format!("n='{value}' is not a whole number of calls (n=8)"))?,
                )
            }
            _ => {
                return Err(format!(
                    "check '{}' takes no field '{field}': it takes {}",
                    check.name(),
                    takes(check)
                ));
            }
        }
    }
    if let Some(note) = note {
        match &mut expectation.known_gap {
            Some(gap) => gap.note = Some(note),
            None => {
                return Err("'note' belongs to a known gap: give known_gap=YYYY-MM-DD too".into());
            }
        }
    }
    match misfit(&expectation) {
        Some(why) => Err(why),
        None => Ok(Some(expectation)),
    }
}

/// What check `check` takes, in words.
fn takes(check: CheckName) -> String {
    let fields = match check {
        CheckName::KeyGraphs => "queries=all or queries=first",
        CheckName::ToolUsed | CheckName::ToolUnused => "tool=NAME",
        CheckName::ToolOrder => "tools=A,B[,...]",
        CheckName::MaxCalls | CheckName::MaxQueries => "n=N (1 or more)",
        _ => "no field",
    };
    format!("{fields} (and known_gap=YYYY-MM-DD, note=\"...\")")
}

/// A token as written back in a message.
fn show(token: &(Option<String>, String)) -> String {
    match &token.0 {
        Some(field) => format!("{field}={}", token.1),
        None => token.1.clone(),
    }
}

/// Why `id` is not an expectation id.
fn check_id(id: &str) -> Result<(), String> {
    let fits = !id.is_empty()
        && id.chars().count() <= MAX_ID_CHARS
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
        && id.chars().next().is_some_and(|c| c.is_ascii_alphanumeric());
    if fits {
        Ok(())
    } else {
        Err(format!(
            "expectation id '{id}' must be lowercase letters, digits, '-' and '_', beginning with a \
             letter or digit, at most {MAX_ID_CHARS} characters (expect.graphs)"
        ))
    }
}

/// Splits a line into words, each `(field, value)` when it is
/// `FIELD=VALUE` (the value bare or `"quoted"`, `\"` inside), else
/// `(None, word)`.
fn tokenize(text: &str) -> Result<Vec<(Option<String>, String)>, String> {
    let mut tokens = Vec::new();
    let mut chars = text.trim().chars().peekable();
    while chars.peek().is_some() {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let mut word = String::new();
        let mut field = None;
        while let Some(&c) = chars.peek() {
            if c.is_whitespace() {
                break;
            }
            chars.next();
            if c == '=' && field.is_none() {
                field = Some(std::mem::take(&mut word));
                if chars.peek() == Some(&'"') {
                    chars.next();
                    let mut closed = false;
                    while let Some(q) = chars.next() {
                        match q {
                            '\\' => word.extend(chars.next()),
                            '"' => {
                                closed = true;
                                break;
                            }
                            other => word.push(other),
                        }
                    }
                    if !closed {
                        return Err(format!(
                            "the quoted value of '{}' is not closed by '\"'",
                            field.unwrap_or_default()
                        ));
                    }
                    break;
                }
            } else {
                word.push(c);
            }
        }
        if field.is_some() || !word.is_empty() {
            tokens.push((field, word));
        }
    }
    Ok(tokens)
}

/// Why `expectation` does not fit its check (see [`Expectation::misfit`]).
pub(super) fn misfit(e: &Expectation) -> Option<String> {
    if let Err(why) = check_id(&e.id) {
        return Some(why);
    }
    if e.kind == Kind::CurrentState {
        return Some("type 'current_state' is the catalog's; write 'contract' or 'quality'".into());
    }
    let check = e.check;
    let given = [
        ("queries", e.queries.is_some()),
        ("tool", e.tool.is_some()),
        ("tools", e.tools.is_some()),
        ("n", e.n.is_some()),
    ];
    for (field, present) in given {
        let wanted = check.fields().contains(&field);
        if present && !wanted {
            return Some(format!(
                "check '{}' takes no field '{field}': it takes {}",
                check.name(),
                takes(check)
            ));
        }
        if wanted && !present {
            return Some(format!("check '{}' needs {}", check.name(), takes(check)));
        }
    }
    let submit = crate::layout::SUBMIT_CSV;
    // A tool's name holds no space or control character (MCP tool names
    // are one word each: letters, digits, `_`, `-`, `.`).
    let spaced = |t: &String| t.chars().any(|c| c.is_whitespace() || c.is_control());
    if let Some(t) = e
        .tool
        .iter()
        .chain(e.tools.iter().flatten())
        .find(|t| spaced(t))
    {
        return Some(format!(
            "tool name '{}' holds a space or control character, which no MCP tool name holds",
            t.escape_debug()
        ));
    }
    if let Some(tool) = &e.tool {
        if tool.trim().is_empty() {
            return Some("tool= names no tool".into());
        }
        if tool == submit {
            return Some(format!(
                "{} {submit} cannot tell one agent from another (every answer is a {submit} \
                 call): name a tool of the server",
                check.name()
            ));
        }
    }
    if let Some(tools) = &e.tools {
        if tools.len() < 2 || tools.iter().any(|t| t.is_empty()) {
            return Some(
                "tools= needs two or more tool names, comma-separated (one tool is tool-used)"
                    .into(),
            );
        }
        if tools.iter().any(|t| t == submit) {
            return Some(format!(
                "tools= names {submit}, which ends every answering episode: name tools of the server"
            ));
        }
    }
    if e.n == Some(0) {
        return Some(format!(
            "{} n=0 can be met only by an agent that never uses the server, whatever it answers: \
             give n=1 or more, or write tool-unused for each tool you mean",
            check.name()
        ));
    }
    if let Some(gap) = &e.known_gap {
        if gap.note.as_deref().is_some_and(|n| n.trim().is_empty()) {
            return Some("note= is empty: say what is wrong, or leave the note out".into());
        }
        if !crate::catalog::validate::is_date(&gap.found) {
            return Some(format!(
                "known_gap='{}' is not a date: write known_gap=YYYY-MM-DD (when it was found \
                 failing)",
                gap.found
            ));
        }
        let today = today_utc();
        if gap.found > today {
            return Some(format!(
                "known_gap={} is in the future (today is {today} UTC): write the date it was \
                 found failing",
                gap.found
            ));
        }
    }
    None
}

/// Today's UTC date as `YYYY-MM-DD` (so it compares with a known gap's
/// date as text): the date part of [`crate::format::utc_now`].
fn today_utc() -> String {
    let now = crate::format::utc_now();
    now.split_once('T')
        .map_or(now.clone(), |(date, _)| date.to_string())
}

/// Why `expectation`, written in a record whose answer key is `key`,
/// could never fail on any attempt (so it is refused, naming the line);
/// `None` when it can. Today: `key-graphs` over a key that names no
/// graph (`GRAPH`, `FROM`), which no attempt could miss.
pub fn cannot_fail(expectation: &Expectation, key: &str) -> Option<String> {
    (expectation.check == CheckName::KeyGraphs && super::graphs::graphs_named(key).is_empty()).then(
        || {
            "key-graphs cannot fail here: the answer key names no graph (GRAPH or FROM), so no \
             query could miss it; remove the line"
                .to_string()
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_read_into_types_and_misfits_are_named() {
        let e = parse_line(
            "graphs",
            "contract key-graphs queries=first known_gap=2026-11-02 note=\"the novice, \\\"often\\\"\"",
        )
        .unwrap()
        .unwrap();
        assert_eq!(e.check, CheckName::KeyGraphs);
        assert_eq!(e.queries, Some(Queries::First));
        assert_eq!(
            e.known_gap.unwrap().note.as_deref(),
            Some("the novice, \"often\"")
        );
        assert_eq!(parse_line("x", "off").unwrap(), None);
        for (line, says) in [
            (
                "contract key-graph queries=all",
                "did you mean 'key-graphs'",
            ),
            ("quality max-calls n=0", "n=0"),
            ("quality max-calls", "needs n=N"),
            ("quality tool-used tool=a n=3", "takes no field 'n'"),
            ("quality tool-order tools=a", "two or more"),
            ("contract traceable known_gap=soon", "not a date"),
            ("contract traceable note=\"x\"", "belongs to a known gap"),
            ("current_state traceable", "catalog's"),
            ("traceable", "type comes first"),
            ("quality tool-unused tool=submit_csv", "cannot tell"),
            ("quality tool-used tool=\"get schema\"", "holds a space"),
            ("quality tool-order tools=\"a,b c\"", "holds a space"),
            (
                "quality discovery-first known_gap=2026-11-02 note=\" \"",
                "note= is empty",
            ),
            ("quality traceable note=\"open", "not closed"),
        ] {
            let err = parse_line("x", line).unwrap_err();
            assert!(err.contains(says), "{line}: {err}");
        }
        assert!(parse_line("Bad Id", "quality traceable").is_err());
    }
}
