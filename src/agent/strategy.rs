//! Deterministic strategies for agents with no model: what the scripted
//! agent and the Messages-API stand-in play (README.md, "Episodes: run,
//! report, rescore, freeze").
//!
//! `oracle` runs the record's answer key through the server's query tool
//! and submits the rows. The perturbations change that answer the way real
//! agents do, to exercise the scorer and the reports; `mixed:SEED` picks
//! one per (question, attempt) by a seeded hash, so repeated attempts
//! differ and flaky questions appear. `skill:PERCENT:SEED` plays an agent
//! of a given skill against each question's [`difficulty`], which is read
//! from its answer key alone (triple patterns, graphs joined, property
//! paths, aggregates, optional parts, subqueries), so every agent sees the
//! same. A question well below the agent's skill is answered, one just
//! below it mostly answered (an occasional slip), one above it defeats
//! the agent. Agents of several skills over one corpus therefore agree on
//! what is hard, as real models do: the hardest questions defeat them all
//! and the middle ones separate them (README.md, "The demo studies").

use std::fmt;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::corpus::{Corpus, Record};
use crate::score::cell::{is_absolute_iri, local_name};
use crate::score::number::Decimal;
use crate::table::Table;

/// One way to play a question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Strategy {
    /// The answer key's rows, as the server returned them.
    Oracle,
    /// Columns named `column_1`, `column_2`, ...
    RenameColumns,
    /// Columns in reverse order (names kept).
    ReorderColumns,
    /// IRIs written as their local names.
    LocalNames,
    /// Non-integral numbers at 4 significant figures.
    Decimals4,
    /// The last row left out.
    DropRow,
    /// The first two columns' values swapped, names kept.
    SwapColumns,
    /// The header row alone.
    Empty,
    /// Queries, then never calls submit_csv.
    NoAnswer,
    /// Waits until the agent host is killed.
    Hang,
    /// One of the above per (question, attempt), by a seeded hash.
    Mixed(String),
    /// An agent of skill `percent` (0 to 100) against each question's
    /// [`difficulty`]: it plays from `COMFORTABLE_POOL`,
    /// `STRETCHED_POOL` or `BEYOND_POOL`, each pick by a hash of
    /// `seed`, the question and the attempt.
    Skill {
        /// Questions of difficulty below this (0 to 100) are in reach.
        percent: u8,
        /// The seed of the per-attempt draw (digits).
        seed: String,
    },
}

/// The strategies `mixed` draws from, oracle weighted three to one.
const MIXED_POOL: &[Strategy] = &[
    Strategy::Oracle,
    Strategy::Oracle,
    Strategy::Oracle,
    Strategy::RenameColumns,
    Strategy::ReorderColumns,
    Strategy::LocalNames,
    Strategy::Decimals4,
    Strategy::DropRow,
    Strategy::SwapColumns,
    Strategy::Empty,
    Strategy::NoAnswer,
];

/// What an agent plays on a question at least [`COMFORT`] below its
/// skill: the answer, or a harmless variation of it that the scorer's
/// normalizations make exact (`docs/SCORING.md`).
const COMFORTABLE_POOL: &[Strategy] = &[
    Strategy::Oracle,
    Strategy::Oracle,
    Strategy::Oracle,
    Strategy::Oracle,
    Strategy::Oracle,
    Strategy::RenameColumns,
    Strategy::LocalNames,
    Strategy::Decimals4,
];

/// What an agent plays on a question below its skill by less than
/// [`COMFORT`]: mostly the answer, now and then a slip (two in eight).
const STRETCHED_POOL: &[Strategy] = &[
    Strategy::Oracle,
    Strategy::Oracle,
    Strategy::Oracle,
    Strategy::Oracle,
    Strategy::RenameColumns,
    Strategy::LocalNames,
    Strategy::DropRow,
    Strategy::NoAnswer,
];

/// What an agent plays on a question at or above its skill: a wrong
/// answer or none (each wrong whenever the ground truth has a row; a
/// column swap is not among them, since it leaves a one-column answer
/// right).
const BEYOND_POOL: &[Strategy] = &[Strategy::DropRow, Strategy::Empty, Strategy::NoAnswer];

/// How far below an agent's skill a question must be for it never to slip.
const COMFORT: u8 = 25;

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            Strategy::Oracle => "oracle",
            Strategy::RenameColumns => "rename-columns",
            Strategy::ReorderColumns => "reorder-columns",
            Strategy::LocalNames => "local-names",
            Strategy::Decimals4 => "decimals-4",
            Strategy::DropRow => "drop-row",
            Strategy::SwapColumns => "swap-columns",
            Strategy::Empty => "empty",
            Strategy::NoAnswer => "no-answer",
            Strategy::Hang => "hang",
            Strategy::Mixed(seed) => return write!(f, "mixed:{seed}"),
            Strategy::Skill { percent, seed } => return write!(f, "skill:{percent}:{seed}"),
        };
        f.write_str(name)
    }
}

impl std::str::FromStr for Strategy {
    type Err = String;

    fn from_str(text: &str) -> Result<Strategy, String> {
        Ok(match text {
            "oracle" => Strategy::Oracle,
            "rename-columns" => Strategy::RenameColumns,
            "reorder-columns" => Strategy::ReorderColumns,
            "local-names" => Strategy::LocalNames,
            "decimals-4" => Strategy::Decimals4,
            "drop-row" => Strategy::DropRow,
            "swap-columns" => Strategy::SwapColumns,
            "empty" => Strategy::Empty,
            "no-answer" => Strategy::NoAnswer,
            "hang" => Strategy::Hang,
            other if other.starts_with("skill:") => return parse_skill(other),
            other => match other.strip_prefix("mixed:") {
                Some(seed) if !seed.is_empty() && seed.bytes().all(|b| b.is_ascii_digit()) => {
                    Strategy::Mixed(seed.to_string())
                }
                Some(seed) => {
                    return Err(format!(
                        "'mixed:{seed}': the seed must be a whole number, as in mixed:7"
                    ));
                }
                _ => {
                    return Err(format!(
                        "unknown strategy '{other}': expected oracle, rename-columns, reorder-columns, local-names, decimals-4, drop-row, swap-columns, empty, no-answer, hang, mixed:SEED or skill:PERCENT:SEED"
                    ));
                }
            },
        })
    }
}

/// Reads `skill:PERCENT:SEED`.
///
/// Errors: a percent that is not a whole number from 0 to 100, or a seed
/// that is not digits.
fn parse_skill(text: &str) -> Result<Strategy, String> {
    let usage = || {
        format!(
            "'{text}': expected skill:PERCENT:SEED, as in skill:90:7 (PERCENT from 0 to 100, SEED digits)"
        )
    };
    let rest = text.strip_prefix("skill:").ok_or_else(usage)?;
    let (percent, seed) = rest.split_once(':').ok_or_else(usage)?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(percent) || !digits(seed) {
        return Err(usage());
    }
    match percent.parse::<u8>() {
        Ok(percent) if percent <= 100 => Ok(Strategy::Skill {
            percent,
            seed: seed.to_string(),
        }),
        _ => Err(usage()),
    }
}

/// A number from the first 8 bytes of SHA-256 of `text`.
fn hash(text: &str) -> u64 {
    let digest = Sha256::digest(text.as_bytes());
    u64::from_be_bytes(digest[..8].try_into().unwrap_or_default())
}

/// The pick of `pool` that `text` hashes to.
fn pick(pool: &[Strategy], text: &str) -> Strategy {
    pool[(hash(text) % pool.len() as u64) as usize].clone()
}

/// The difficulty of an answer key, 0 to 99: 4 per triple pattern, 20 per
/// graph joined beyond the first (`GRAPH` and `SERVICE` names), 15 per
/// property path (`*` or `+` after a predicate), 5 for an aggregate (`GROUP
/// BY`), 5 per `OPTIONAL`, `MINUS` or `NOT EXISTS`, 8 per subquery. A
/// triple pattern is counted by the `.`, `;` and `,` that end one; strings,
/// IRIs and comments are skipped. It is a reading of the key's shape, the
/// same for every agent and seed (the `skill` strategy), not a measurement.
pub fn difficulty(query: &str) -> u8 {
    let shape = Shape::of(query);
    let score = 4 * shape.patterns
        + 20 * shape.graphs.len().saturating_sub(1)
        + 15 * shape.paths
        + 5 * usize::from(shape.grouped)
        + 5 * shape.optional
        + 8 * shape.selects.saturating_sub(1);
    score.min(99) as u8
}

/// What [`difficulty`] counts in an answer key.
#[derive(Debug, Default)]
struct Shape {
    patterns: usize,
    graphs: std::collections::BTreeSet<String>,
    paths: usize,
    grouped: bool,
    optional: usize,
    selects: usize,
}

impl Shape {
    /// Reads `query` character by character: words (upper-cased) and
    /// punctuation outside strings, IRIs and comments.
    fn of(query: &str) -> Shape {
        let mut shape = Shape::default();
        let mut words: Vec<String> = Vec::new();
        let mut chars = query.chars().peekable();
        let mut braces = 0usize;
        let mut previous = ' ';
        while let Some(c) = chars.next() {
            match c {
                '"' | '\'' => {
                    for d in chars.by_ref() {
                        if d == c {
                            break;
                        }
                    }
                    words.push("\"\"".into());
                }
                '<' if chars
                    .peek()
                    .is_some_and(|d| !d.is_whitespace() && *d != '=') =>
                {
                    let iri: String = chars.by_ref().take_while(|d| *d != '>').collect();
                    if words.last().is_some_and(|w| w == "GRAPH" || w == "SERVICE") {
                        shape.graphs.insert(iri);
                    }
                    words.push("<>".into());
                }
                '#' => {
                    for d in chars.by_ref() {
                        if d == '\n' {
                            break;
                        }
                    }
                }
                '{' => braces += 1,
                '}' => braces = braces.saturating_sub(1),
                '.' | ';' | ',' if braces > 0 && chars.peek().is_none_or(|d| d.is_whitespace()) => {
                    shape.patterns += 1;
                }
                '*' | '+'
                    if (previous.is_alphanumeric() || matches!(previous, '>' | ')' | '_')) =>
                {
                    shape.paths += 1;
                }
                c if c.is_alphanumeric() || c == '_' => {
                    let mut word = String::from(c);
                    while let Some(d) = chars
                        .peek()
                        .copied()
                        .filter(|d| d.is_alphanumeric() || *d == '_' || *d == ':')
                    {
                        word.push(d);
                        chars.next();
                    }
                    let upper = word.to_uppercase();
                    previous = word.chars().last().unwrap_or(c);
                    match upper.as_str() {
                        "SELECT" => shape.selects += 1,
                        "OPTIONAL" | "MINUS" => shape.optional += 1,
                        "EXISTS" if words.last().is_some_and(|w| w == "NOT") => shape.optional += 1,
                        "BY" if words.last().is_some_and(|w| w == "GROUP") => shape.grouped = true,
                        _ => {}
                    }
                    // A prefixed graph name (GRAPH ex:g).
                    if words.last().is_some_and(|w| w == "GRAPH" || w == "SERVICE")
                        && upper.contains(':')
                    {
                        shape.graphs.insert(word);
                    }
                    words.push(upper);
                    continue;
                }
                _ => {}
            }
            previous = c;
        }
        shape
    }
}

impl Strategy {
    /// The concrete strategy for this record and attempt (`mixed` picks
    /// one by SHA-256 of `seed/id/attempt`, `skill` the same from the pool
    /// the answer key's [`difficulty`] puts it in; the others are
    /// themselves).
    pub fn resolve(&self, record: &Record, attempt: u32) -> Strategy {
        let id = &record.id;
        match self {
            Strategy::Mixed(seed) => pick(MIXED_POOL, &format!("{seed}/{id}/{attempt}")),
            Strategy::Skill { percent, seed } => {
                let d = difficulty(&record.query);
                let pool = if d >= *percent {
                    BEYOND_POOL
                } else if percent - d >= COMFORT {
                    COMFORTABLE_POOL
                } else {
                    STRETCHED_POOL
                };
                pick(pool, &format!("{seed}/{id}/{attempt}"))
            }
            other => other.clone(),
        }
    }

    /// How this strategy works through the server's tools for `record`'s
    /// `attempt`, beside what it submits. Only `skill:PERCENT:SEED` has
    /// habits, each drawn by SHA-256 of `SEED/ID/ATTEMPT/HABIT` against
    /// the skill (README.md, "The demo studies"): it reads the schema
    /// before querying with probability PERCENT %, first tries a query
    /// that ignores the graph the question needs with probability
    /// (100 − PERCENT) / 2 %, and, when the schema tool is withheld,
    /// calls it anyway with probability (100 − PERCENT) %. Every other
    /// strategy runs the answer key and submits, nothing else, as before.
    /// The habits never change the rows submitted.
    pub fn habits(&self, record: &Record, attempt: u32) -> Habits {
        let Strategy::Skill { percent, seed } = self else {
            return Habits::default();
        };
        let id = &record.id;
        let draw = |habit: &str| hash(&format!("{seed}/{id}/{attempt}/{habit}")) % 100;
        let percent = u64::from(*percent);
        Habits {
            discover: draw("discover") < percent,
            explore: draw("explore") < (100 - percent) / 2,
            reach_for_withheld: draw("reach") < 100 - percent,
        }
    }

    /// The answer this strategy submits given the oracle's `rows`, or
    /// `None` when it submits nothing.
    pub fn answer(&self, rows: &Table) -> Option<Table> {
        let mut t = rows.clone();
        match self {
            Strategy::Oracle | Strategy::Mixed(_) | Strategy::Skill { .. } => {}
            Strategy::RenameColumns => {
                t.columns = (1..=t.columns.len())
                    .map(|i| format!("column_{i}"))
                    .collect();
            }
            Strategy::ReorderColumns => {
                t.columns.reverse();
                t.rows.iter_mut().for_each(|r| r.reverse());
            }
            Strategy::LocalNames => {
                for cell in t.rows.iter_mut().flatten() {
                    if is_absolute_iri(cell)
                        && let Some(local) = local_name(cell)
                    {
                        *cell = local.to_string();
                    }
                }
            }
            Strategy::Decimals4 => {
                for cell in t.rows.iter_mut().flatten() {
                    if let Some(d) = Decimal::parse(cell)
                        && !d.is_integral()
                    {
                        *cell = d.round_to(4).plain();
                    }
                }
            }
            Strategy::DropRow => {
                t.rows.pop();
            }
            Strategy::SwapColumns => {
                if t.columns.len() >= 2 {
                    t.rows.iter_mut().for_each(|r| r.swap(0, 1));
                }
            }
            Strategy::Empty => t.rows.clear(),
            Strategy::NoAnswer | Strategy::Hang => return None,
        }
        Some(t)
    }
}

/// The record whose summary opens `prompt` (the prompt is the summary, a
/// blank line, then the hint and the fixed suffix).
pub fn find_record<'a>(corpus: &'a Corpus, prompt: &str) -> Option<&'a Record> {
    let prompt = prompt.replace("\r\n", "\n");
    let first = prompt.split("\n\n").next().unwrap_or("").trim();
    corpus.records.iter().find(|r| r.summary.trim() == first)
}

/// What a scripted agent does beside running the answer key
/// ([`Strategy::habits`]): the calls a trajectory expectation
/// (docs/TRAJECTORY.md) can tell apart.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Habits {
    /// List the graphs and read the schema of the question's graph
    /// (`list_graphs`, then `get_schema`) before querying, when offered.
    pub discover: bool,
    /// Run a query over every graph (`SELECT ?s ?p ?o ... LIMIT 5`, no
    /// `GRAPH`) before the answer key.
    pub explore: bool,
    /// Call `get_schema` although the server lists `list_graphs` but not
    /// `get_schema` (the condition withheld it): the proxy refuses it.
    pub reach_for_withheld: bool,
}

/// A tool that runs SPARQL: its name and the names of its query and graph
/// parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryTool {
    /// The tool name (as the server lists it).
    pub name: String,
    /// The string parameter that takes the query.
    pub query_param: String,
    /// A `graph` parameter, if the tool has one (given `federation`).
    pub graph_param: Option<String>,
}

impl QueryTool {
    /// The arguments that run `query` with this tool: the query, and
    /// `federation` for the graph parameter when there is one.
    pub fn arguments(&self, query: &str) -> serde_json::Map<String, Value> {
        let mut arguments = serde_json::Map::new();
        arguments.insert(self.query_param.clone(), Value::String(query.to_string()));
        if let Some(graph) = &self.graph_param {
            arguments.insert(graph.clone(), Value::String("federation".into()));
        }
        arguments
    }
}

/// Whether `name` is a tool whose purpose is finding tools (claude's
/// `ToolSearch`, a server's `search_tools`, `find_tools`, `list_tools`,
/// `load_tools`...): its `query` parameter takes words about tools, never
/// SPARQL, so it is never taken for the SPARQL tool (issue 25, "Real
/// servers"). Read from the name with case, `_`, `-` and an
/// `mcp__SERVER__` prefix ignored.
pub fn is_discovery_tool(name: &str) -> bool {
    let bare = name.rsplit("__").next().unwrap_or(name);
    let squashed: String = bare
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    const KINDS: &[&str] = &[
        "toolsearch",
        "searchtool",
        "findtool",
        "discovertool",
        "tooldiscover",
        "listtool",
        "loadtool",
        "gettool",
        "describetool",
        "selecttool",
    ];
    KINDS.iter().any(|k| squashed.contains(k))
}

/// Picks the SPARQL tool among `(name, input schema)` pairs: a tool with a
/// string parameter named `query`, `query_string` or `sparql`, preferring
/// tool names that say `sparql` or `query`. A discovery tool
/// ([`is_discovery_tool`]) is never picked, whatever its parameters.
pub fn query_tool<'a>(tools: impl IntoIterator<Item = (&'a str, &'a Value)>) -> Option<QueryTool> {
    let mut best: Option<(u8, QueryTool)> = None;
    for (name, schema) in tools {
        if is_discovery_tool(name) {
            continue;
        }
        let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
            continue;
        };
        let Some(query_param) = ["query", "query_string", "sparql", "sparql_query"]
            .into_iter()
            .find(|p| properties.contains_key(*p))
        else {
            continue;
        };
        let rank = if name.contains("sparql") {
            0
        } else if name == "query" || name.ends_with("__query") {
            1
        } else {
            2
        };
        let graph_param = ["graph", "kg", "graph_name"]
            .into_iter()
            .find(|p| properties.contains_key(*p))
            .map(str::to_string);
        let candidate = QueryTool {
            name: name.to_string(),
            query_param: query_param.to_string(),
            graph_param,
        };
        if best.as_ref().is_none_or(|(r, _)| rank < *r) {
            best = Some((rank, candidate));
        }
    }
    best.map(|(_, t)| t)
}

/// Reads a query tool's reply as a table, in each shape the servers an
/// agent meets write (issue 25, "Real servers"):
///
/// - `{"columns": [..], "rows": [..]}` (our servers) and
///   `{"columns": [..], "data": [..], "count": n}` (mcp-proto-okn), each row
///   an array of cells or an object keyed by column, each cell a plain
///   value or a typed term with a `value`;
/// - SPARQL 1.1 Query Results JSON (`head` with `results` or `boolean`,
///   mcp-server-sparql's reply);
/// - either of those wrapped in `{"result": ..}` (a structured reply);
/// - a JSON array of objects, one a row (columns in the first's order);
/// - CSV text.
///
/// `None`: anything else (an `{"error": ..}` reply, prose).
pub fn reply_table(text: &str) -> Option<Table> {
    match serde_json::from_str::<Value>(text.trim()) {
        Ok(value) => json_table(&value),
        Err(_) => Table::from_csv(text.as_bytes()).ok(),
    }
}

/// [`reply_table`] of a reply that is JSON.
fn json_table(value: &Value) -> Option<Table> {
    match value {
        Value::Object(map) => {
            if let Some(columns) = map.get("columns").and_then(Value::as_array) {
                let rows = map
                    .get("rows")
                    .or_else(|| map.get("data"))
                    .and_then(Value::as_array)?;
                let columns: Vec<String> = columns.iter().map(cell_text).collect();
                let rows = rows.iter().map(|r| row_cells(r, &columns)).collect();
                return Some(Table { columns, rows });
            }
            if map.contains_key("head") || map.contains_key("boolean") {
                let bytes = serde_json::to_vec(value).ok()?;
                return crate::sparql::parse_json_results(&bytes).ok();
            }
            match map.get("result") {
                Some(inner) if map.len() == 1 => json_table(inner),
                _ => None,
            }
        }
        Value::Array(items) => {
            let first = items.first()?.as_object()?;
            let columns: Vec<String> = first.keys().cloned().collect();
            let rows = items.iter().map(|r| row_cells(r, &columns)).collect();
            Some(Table { columns, rows })
        }
        Value::String(inner) => reply_table(inner),
        _ => None,
    }
}

/// One row's cells: an array as it is, an object by `columns`.
fn row_cells(row: &Value, columns: &[String]) -> Vec<String> {
    match row {
        Value::Array(cells) => cells.iter().map(cell_text).collect(),
        Value::Object(cells) => columns
            .iter()
            .map(|c| cells.get(c).map(cell_text).unwrap_or_default())
            .collect(),
        other => vec![cell_text(other)],
    }
}

fn cell_text(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Object(map) => map.get("value").map(cell_text).unwrap_or_default(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(csv: &str) -> Table {
        Table::from_csv(csv.as_bytes()).unwrap()
    }

    #[test]
    fn strategies_round_trip_their_names() {
        for name in [
            "oracle",
            "rename-columns",
            "reorder-columns",
            "local-names",
            "decimals-4",
            "drop-row",
            "swap-columns",
            "empty",
            "no-answer",
            "hang",
            "mixed:7",
            "skill:90:7",
            "skill:0:1",
            "skill:100:1",
        ] {
            assert_eq!(name.parse::<Strategy>().unwrap().to_string(), name);
        }
        assert!("mixed:".parse::<Strategy>().is_err());
        assert_eq!(
            "mixed:abc".parse::<Strategy>().unwrap_err(),
            "'mixed:abc': the seed must be a whole number, as in mixed:7"
        );
        assert!(
            "guess"
                .parse::<Strategy>()
                .unwrap_err()
                .contains("expected oracle")
        );
    }

    #[test]
    fn skill_is_read_whole_or_refused() {
        for bad in [
            "skill:",
            "skill:90",
            "skill:101:1",
            "skill:-1:1",
            "skill:9x:1",
            "skill:90:",
            "skill:90:a",
        ] {
            let e = bad.parse::<Strategy>().unwrap_err();
            assert!(e.contains("expected skill:PERCENT:SEED"), "{bad}: {e}");
        }
    }

    #[test]
    fn difficulty_reads_the_shape_of_the_answer_key() {
        // Two triple patterns: 8.
        assert_eq!(
            difficulty("SELECT ?s WHERE { ?s a <http://x/C> . ?s <http://x/p> ?o . }"),
            8
        );
        // Strings, IRIs and comments say nothing: the dots, hashes and
        // keywords in them are not counted.
        let noisy = "# SELECT x. y; GROUP BY\nSELECT ?s WHERE { ?s <http://x/a.b#c> \"a. b; GRAPH <g> 日本. ü\" . }";
        assert_eq!(difficulty(noisy), 4);
        // Two graphs joined (+20), a property path (+15), an aggregate (+5),
        // an OPTIONAL (+5) and a subquery (+8) on three patterns (12).
        let hard = "SELECT ?c (COUNT(*) AS ?n) WHERE { GRAPH <http://g/1> { ?x rdfs:subClassOf* ?c . } \
                    GRAPH <http://g/2> { OPTIONAL { ?c <http://p> ?l . } } \
                    { SELECT ?x WHERE { ?x a ?t . } } } GROUP BY ?c";
        assert_eq!(difficulty(hard), 12 + 20 + 15 + 5 + 5 + 8);
        // A prefixed graph name counts as one, however often it is named.
        assert_eq!(
            difficulty("SELECT * { GRAPH ex:a { ?s ?p ?o . } GRAPH ex:a { ?s ?p ?q . } }"),
            8
        );
        // Capped at 99; no input panics.
        assert_eq!(
            difficulty(&"?s ?p ?o . ".repeat(40).replace("?s", "{ ?s")),
            99
        );
        for text in ["", "<", "\"", "#", "{{{", "GRAPH", "'ü", "?x*+", "< http"] {
            assert!(difficulty(text) <= 99);
        }
    }

    /// Every record of the corpora shipped under `demo/`.
    fn demo_records() -> Vec<Record> {
        let demo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("demo");
        let mut records = Vec::new();
        for entry in std::fs::read_dir(demo).unwrap().flatten() {
            let path = entry.path();
            if let Ok(corpus) = Corpus::load(&path)
                && !corpus.records.is_empty()
            {
                records.extend(corpus.records);
            }
        }
        assert!(records.len() >= 30, "{}", records.len());
        records
    }

    #[test]
    fn skill_answers_what_it_reaches_and_fails_the_rest() {
        let records = demo_records();
        let exact_ish = |s: &Strategy| {
            matches!(
                s,
                Strategy::Oracle
                    | Strategy::RenameColumns
                    | Strategy::LocalNames
                    | Strategy::Decimals4
            )
        };
        let agent = |percent: u8, seed: &str| Strategy::Skill {
            percent,
            seed: seed.into(),
        };
        let rate = |percent: u8| {
            let played: Vec<Strategy> = records
                .iter()
                .flat_map(|r| (1..=3).map(move |a| (r, a)))
                .map(|(r, a)| agent(percent, "5").resolve(r, a))
                .collect();
            played.iter().filter(|s| exact_ish(s)).count() as f64 / played.len() as f64
        };
        let (strong, middling, weak) = (rate(85), rate(55), rate(30));
        assert!(
            strong > middling && middling > weak,
            "{strong} {middling} {weak}"
        );
        assert_eq!(rate(0), 0.0, "skill 0 reaches nothing");
        for r in &records {
            let d = difficulty(&r.query);
            for seed in ["1", "2"] {
                let plays: Vec<Strategy> = (1..=3).map(|a| agent(85, seed).resolve(r, a)).collect();
                if d >= 85 {
                    assert!(
                        !plays.iter().any(exact_ish),
                        "{} ({d}) is beyond reach",
                        r.id
                    );
                } else if d <= 60 {
                    assert!(plays.iter().all(exact_ish), "{} ({d}) is comfortable", r.id);
                }
            }
        }
        // The demo corpora hold questions of every kind for these skills.
        let ds: Vec<u8> = records.iter().map(|r| difficulty(&r.query)).collect();
        assert!(ds.iter().any(|d| *d >= 85) && ds.iter().any(|d| *d < 30));
    }

    /// The habits follow the skill (an expert discovers more and
    /// explores or reaches for a withheld tool less than a novice), are
    /// the same on every draw, and only `skill` has any.
    #[test]
    fn habits_follow_the_skill_and_only_skill_has_them() {
        let records = demo_records();
        let count = |percent: u8, pick: fn(Habits) -> bool| {
            let agent = Strategy::Skill {
                percent,
                seed: "7".into(),
            };
            let mut n = 0;
            for record in &records {
                for attempt in 1..=3 {
                    let habits = agent.habits(record, attempt);
                    assert_eq!(habits, agent.habits(record, attempt));
                    n += usize::from(pick(habits));
                }
            }
            n
        };
        let total = records.len() * 3;
        let (expert, novice) = (count(85, |h| h.discover), count(40, |h| h.discover));
        assert!(
            expert > novice && expert > total * 7 / 10 && novice < total / 2,
            "{expert} {novice} of {total}"
        );
        assert!(count(85, |h| h.explore) < count(40, |h| h.explore));
        assert!(count(85, |h| h.reach_for_withheld) < count(40, |h| h.reach_for_withheld));
        assert_eq!(count(100, |h| h.explore || h.reach_for_withheld), 0);
        assert_eq!(count(0, |h| h.discover), 0);
        for other in [
            Strategy::Oracle,
            Strategy::Mixed("3".into()),
            Strategy::Hang,
        ] {
            assert_eq!(other.habits(&records[0], 1), Habits::default());
        }
    }

    #[test]
    fn mixed_is_deterministic_and_varies_by_attempt() {
        let mixed = Strategy::Mixed("42".into());
        let record = &demo_records()[0];
        let picks: Vec<Strategy> = (1..=12).map(|a| mixed.resolve(record, a)).collect();
        assert_eq!(
            picks,
            (1..=12)
                .map(|a| mixed.resolve(record, a))
                .collect::<Vec<_>>()
        );
        assert!(picks.contains(&Strategy::Oracle));
        assert!(picks.iter().any(|s| *s != Strategy::Oracle));
    }

    #[test]
    fn perturbations_change_what_they_say() {
        let rows = t("place,share,n\nhttp://ex.org/p/A,0.453562,3\nhttp://ex.org/p/B,1.5,4\n");
        assert_eq!(
            Strategy::RenameColumns.answer(&rows).unwrap().columns,
            ["column_1", "column_2", "column_3"]
        );
        assert_eq!(
            Strategy::ReorderColumns.answer(&rows).unwrap().rows[0],
            ["3", "0.453562", "http://ex.org/p/A"]
        );
        assert_eq!(Strategy::LocalNames.answer(&rows).unwrap().rows[1][0], "B");
        assert_eq!(
            Strategy::Decimals4.answer(&rows).unwrap().rows[0][1],
            "0.4536"
        );
        assert_eq!(Strategy::DropRow.answer(&rows).unwrap().rows.len(), 1);
        assert_eq!(
            Strategy::SwapColumns.answer(&rows).unwrap().rows[0][..2],
            ["0.453562", "http://ex.org/p/A"]
        );
        assert!(Strategy::Empty.answer(&rows).unwrap().rows.is_empty());
        assert_eq!(Strategy::NoAnswer.answer(&rows), None);
    }

    #[test]
    fn replies_become_tables() {
        let typed = r#"{"columns":["s","n"],"rows":[[{"type":"uri","value":"http://a"},{"type":"literal","value":"5"}],[null,{"value":"6"}]]}"#;
        assert_eq!(reply_table(typed).unwrap(), t("s,n\nhttp://a,5\n,6\n"));
        let sparql = r#"{"head":{"vars":["x"]},"results":{"bindings":[{"x":{"type":"literal","value":"1"}}]}}"#;
        assert_eq!(reply_table(sparql).unwrap(), t("x\n1\n"));
        assert_eq!(reply_table("a,b\n1,2\n").unwrap(), t("a,b\n1,2\n"));
        assert_eq!(reply_table("{\"error\": \"x\"}"), None);
    }

    /// Issue 25: every attempt through mcp-proto-okn read "no answer",
    /// though its rows score exact: its reply is `{columns, data, count}`.
    #[test]
    fn replies_of_every_server_met_become_tables() {
        let want = t("s,n\nhttp://a,5\n,6\n");
        for reply in [
            // mcp-proto-okn, as FastMCP writes a dict (indented).
            "{\n  \"columns\": [\"s\", \"n\"],\n  \"data\": [[\"http://a\", \"5\"], [\"\", \"6\"]],\n  \"count\": 2\n}",
            // Rows as objects keyed by column.
            r#"{"columns":["s","n"],"rows":[{"s":"http://a","n":5},{"n":"6"}]}"#,
            // SPARQL JSON results, bare and wrapped as a structured reply.
            r#"{"head":{"vars":["s","n"]},"results":{"bindings":[{"s":{"type":"uri","value":"http://a"},"n":{"type":"literal","value":"5"}},{"n":{"type":"literal","value":"6"}}]}}"#,
            r#"{"result":{"head":{"vars":["s","n"]},"results":{"bindings":[{"s":{"type":"uri","value":"http://a"},"n":{"type":"literal","value":"5"}},{"n":{"type":"literal","value":"6"}}]}}}"#,
            // A list of records; CSV text with a line break at the end or not.
            r#"[{"s":"http://a","n":"5"},{"s":null,"n":"6"}]"#,
            "s,n\r\nhttp://a,5\r\n,6",
        ] {
            assert_eq!(reply_table(reply).as_ref(), Some(&want), "{reply}");
        }
        let empty = reply_table(r#"{"columns":["x"],"data":[],"count":0}"#).unwrap();
        assert_eq!((empty.columns.len(), empty.rows.len()), (1, 0));
        for no_table in [
            r#"{"error":"Query execution failed"}"#,
            r#"{"result":"done","other":1}"#,
            "[]",
            "42",
        ] {
            assert_eq!(reply_table(no_table), None, "{no_table}");
        }
    }

    /// Issue 25: on claude 2.1.332 the stand-in took ToolSearch's `query`
    /// for the SPARQL tool's.
    #[test]
    fn a_discovery_tool_is_never_the_query_tool() {
        let search = serde_json::json!({"properties": {"query": {}, "max_results": {}}});
        for name in [
            "ToolSearch",
            "mcp__okn__search_tools",
            "find-tools",
            "ListTools",
            "tool_discovery",
        ] {
            assert!(is_discovery_tool(name), "{name}");
            assert_eq!(query_tool([(name, &search)]), None, "{name}");
        }
        for name in [
            "query",
            "mcp__okn__run_sparql",
            "search_entities",
            "sparql_query",
        ] {
            assert!(!is_discovery_tool(name), "{name}");
        }
        let sparql = serde_json::json!({"properties": {"query_string": {}}});
        let tool = query_tool([("ToolSearch", &search), ("mcp__okn__query", &sparql)]).unwrap();
        assert_eq!(tool.name, "mcp__okn__query");
    }

    #[test]
    fn the_query_tool_is_found_by_its_parameters() {
        let demo = serde_json::json!({"properties": {"graph": {}, "query_string": {}}});
        let other = serde_json::json!({"properties": {"uri": {}}});
        let control = serde_json::json!({"properties": {"graph": {}, "query": {}}});
        let tool = query_tool([("lookup_uri", &other), ("query", &demo)]).unwrap();
        assert_eq!(
            (
                tool.name.as_str(),
                tool.query_param.as_str(),
                tool.graph_param.as_deref()
            ),
            ("query", "query_string", Some("graph"))
        );
        let tool = query_tool([
            ("mcp__okn__run_sparql", &control),
            ("mcp__okn__query", &demo),
        ])
        .unwrap();
        assert_eq!(tool.name, "mcp__okn__run_sparql");
    }
}
