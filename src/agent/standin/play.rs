//! What the stand-in model plays, whatever wire format asked (issue 25,
//! "The hosts"): each wire format reads its request into a
//! [`Conversation`], [`Player::next_turn`] chooses the next [`Turn`], and
//! the wire format writes it back in its own shape.
//!
//! The turn is chosen the same way on every format: recognize the record
//! from the prompt (its summary opens the first user message), call the
//! server's SPARQL tool with the answer key, then `submit_csv` with what
//! the [`Strategy`] makes of the rows, then end. A host that defers MCP
//! tools behind a discovery tool (claude's `ToolSearch`) has them loaded
//! first. Only an MCP tool is ever taken for the SPARQL tool when the host
//! names MCP tools `mcp__SERVER__TOOL`, and never a discovery tool.

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde_json::{Value, json};

use crate::agent::strategy::{Strategy, find_record, is_discovery_tool, query_tool, reply_table};
use crate::corpus::Corpus;
use crate::mcp::probe::SUBMIT_CSV;

/// What the stand-in answers with.
#[derive(Debug, Clone, PartialEq)]
pub enum Turn {
    /// A text reply that ends the model's turn.
    Text(String),
    /// One call of the tool `name` with the JSON object `input`.
    ToolUse {
        /// The tool's name, as the request declared it.
        name: String,
        /// Its arguments (a JSON object).
        input: Value,
    },
    /// No reply ever (the `hang` strategy: the host's timeout must end it).
    Hang,
}

/// The tokens the stand-in says a reply took: input counted from the
/// request (a quarter of its bytes, at least 1), a fixed quarter of it
/// read from the prompt cache, output from the reply (a quarter of its
/// characters, plus one). Deterministic, so a test can add up what a host
/// should report. Each wire format states them in its own terms: the
/// Messages API counts `input` apart from `cache_read`; OpenAI's
/// `prompt_tokens`/`input_tokens` and Gemini's `promptTokenCount` are
/// their sum, with the cached share given apart ([`Tokens::prompt`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tokens {
    /// Uncached input tokens.
    pub input: u64,
    /// Input tokens read from the cache.
    pub cache_read: u64,
    /// Output tokens.
    pub output: u64,
}

impl Tokens {
    /// The tokens of a reply `turn` to a request of `request_bytes` bytes.
    pub fn of(request_bytes: usize, turn: &Turn) -> Tokens {
        let all = (request_bytes as u64 / 4).max(1);
        let reply_chars = match turn {
            Turn::Text(t) => t.chars().count(),
            Turn::ToolUse { input, .. } => input.to_string().chars().count(),
            Turn::Hang => 0,
        } as u64;
        Tokens {
            input: all - all / 4,
            cache_read: all / 4,
            output: reply_chars / 4 + 1,
        }
    }

    /// All input tokens, cached or not (OpenAI's and Gemini's prompt count).
    pub fn prompt(&self) -> u64 {
        self.input + self.cache_read
    }
}

/// A tool result the host sent back: the tool it answers, its text, and
/// whether the host marked it an error.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    /// The name of the tool called (empty when the call is not found).
    pub tool: String,
    /// The result's text ([`result_text`] of what the host sent).
    pub text: String,
    /// Whether the host marked the result an error.
    pub is_error: bool,
}

/// One request, read out of its wire format.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Conversation {
    /// The text of each user message, in order (the record is recognized
    /// from these).
    pub prompts: Vec<String>,
    /// Every text of the request a model reads (system prompt and every
    /// message), where a host names the deferred tools it can load.
    pub context: Vec<String>,
    /// The tools declared with an input schema, as `(name, JSON Schema)`.
    pub tools: Vec<(String, Value)>,
    /// The tool results so far, in order.
    pub results: Vec<ToolResult>,
}

/// The text of a tool result as a host sends it back: a string as it is;
/// an MCP content list (`[{"type": "text", "text": ..}, ..]`, also as a
/// JSON string, or under `content`) as its one block that is JSON (a host's
/// own note beside it dropped), else its texts joined by newlines; any
/// other JSON as its compact text. A host's envelope around the whole
/// reply (`<untrusted_context>`..) is taken off first.
pub fn result_text(value: &Value) -> String {
    if let Value::String(s) = value
        && let Some(inner) = unwrap_envelope(s)
    {
        return result_text(&Value::String(inner.to_string()));
    }
    if let Value::String(s) = value {
        return match serde_json::from_str::<Value>(s) {
            Ok(inner @ (Value::Array(_) | Value::Object(_))) => {
                content_texts(&inner).unwrap_or_else(|| s.clone())
            }
            _ => s.clone(),
        };
    }
    content_texts(value).unwrap_or_else(|| value.to_string())
}

/// The text inside an envelope a host wraps a tool's reply in, when the
/// whole of `text` is one: `<NAME>` .. `</NAME>`, NAME of lowercase letters
/// and `_`, holding no other NAME element (gemini 0.61 wraps every MCP
/// reply in `<untrusted_context>`).
fn unwrap_envelope(text: &str) -> Option<&str> {
    let text = text.trim();
    let rest = text.strip_prefix('<')?;
    let (name, rest) = rest.split_once('>')?;
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_lowercase() || c == '_') {
        return None;
    }
    let close = format!("</{name}>");
    let inner = rest.strip_suffix(&close)?;
    // `<a>1</a><a>2</a>` is two elements, not one envelope.
    (!inner.contains(&close) && !inner.contains(&format!("<{name}>"))).then(|| inner.trim())
}

/// The texts of an MCP content list (or an object whose `content` is
/// one), joined by newlines; `None` when `value` is not one.
fn content_texts(value: &Value) -> Option<String> {
    let blocks = match value {
        Value::Array(blocks) => blocks,
        Value::Object(map) => map.get("content")?.as_array()?,
        _ => return None,
    };
    let texts: Vec<&str> = blocks
        .iter()
        .filter(|b| b["type"] == "text" || b["type"] == "input_text" || b["type"] == "output_text")
        .filter_map(|b| b["text"].as_str())
        .collect();
    if texts.is_empty() || texts.len() != blocks.len() {
        return None;
    }
    // A host may put its own prose beside the server's reply (codex 0.171
    // sends "Wall time: ..\nOutput:" first): one JSON block is the reply.
    let json: Vec<&str> = texts
        .iter()
        .copied()
        .filter(|t| {
            serde_json::from_str::<Value>(t.trim()).is_ok_and(|v| v.is_object() || v.is_array())
        })
        .collect();
    Some(match json.as_slice() {
        [one] => one.to_string(),
        _ => texts.join("\n"),
    })
}

/// Deepest a schema is followed by [`json_instance`]; below it, `null`.
const MAX_SCHEMA_DEPTH: usize = 32;

/// A JSON value that is an instance of `schema`, chosen generically: what
/// the stand-in answers a request that asks for JSON (issue 25, item 1:
/// gemini 0.61's model router asks for `{"complexity_reasoning",
/// "complexity_score"}`, and retried for a minute and a half on a text
/// reply). Read as JSON Schema and as Gemini's `Schema` alike (`type` in
/// any case, or a list of types, the first not `null` taken): `const`, else the first
/// `enum` value, else the first branch of `anyOf`/`oneOf` (the branches of
/// `allOf` merged), else by type: an object with every declared and every
/// required property, `""` (padded to `minLength`), `0` (or the bound a
/// `minimum`/`maximum` sets, past an exclusive one), `false`, `null`, an
/// array of `minItems` instances of `items`; no schema or no type, `{}`.
pub fn json_instance(schema: &Value) -> Value {
    instance(schema, 0)
}

fn instance(schema: &Value, depth: usize) -> Value {
    let Some(s) = schema.as_object() else {
        return json!({});
    };
    if depth > MAX_SCHEMA_DEPTH {
        return Value::Null;
    }
    if let Some(value) = s.get("const") {
        return value.clone();
    }
    let first = |key: &str| s.get(key).and_then(Value::as_array).and_then(|a| a.first());
    if let Some(value) = first("enum") {
        return value.clone();
    }
    if let Some(branch) = first("anyOf").or_else(|| first("oneOf")) {
        return instance(branch, depth + 1);
    }
    if let Some(branches) = s.get("allOf").and_then(Value::as_array) {
        let mut merged = serde_json::Map::new();
        for branch in branches {
            if let Value::Object(fields) = instance(branch, depth + 1) {
                for (k, v) in fields {
                    merged.entry(k).or_insert(v);
                }
            }
        }
        return Value::Object(merged);
    }
    let kind = match s.get("type") {
        Some(Value::String(t)) => Some(t.to_ascii_lowercase()),
        Some(Value::Array(types)) => {
            let types: Vec<String> = types
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_ascii_lowercase)
                .collect();
            types
                .iter()
                .find(|t| *t != "null")
                .or(types.first())
                .cloned()
        }
        _ if s.contains_key("properties") || s.contains_key("required") => Some("object".into()),
        _ if s.contains_key("items") => Some("array".into()),
        _ => None,
    };
    match kind.as_deref() {
        Some("object") => {
            let mut out = serde_json::Map::new();
            for (name, property) in s
                .get("properties")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                out.insert(name.clone(), instance(property, depth + 1));
            }
            for name in s
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(name) = name.as_str() {
                    out.entry(name).or_insert(json!(""));
                }
            }
            Value::Object(out)
        }
        Some("array") => {
            let item = instance(s.get("items").unwrap_or(&Value::Null), depth + 1);
            let n = bound(s, "minItems").map_or(0, |n| n.clamp(0.0, 64.0) as usize);
            Value::Array(vec![item; n])
        }
        Some("string") => {
            let n = bound(s, "minLength").map_or(0, |n| n.clamp(0.0, 4096.0) as usize);
            Value::String("x".repeat(n))
        }
        Some(kind @ ("integer" | "number")) => number(s, kind == "integer"),
        Some("boolean") => json!(false),
        Some("null") => Value::Null,
        _ => json!({}),
    }
}

/// A numeric keyword of a schema (`minimum`, `minItems`..), as a number or
/// as the decimal string Gemini's `Schema` writes an int64 as.
fn bound(schema: &serde_json::Map<String, Value>, key: &str) -> Option<f64> {
    let value = schema.get(key)?;
    value
        .as_f64()
        .or_else(|| value.as_str()?.trim().parse().ok())
        .filter(|x: &f64| x.is_finite())
}

/// 0, or the nearest number the schema's bounds allow: `minimum`
/// (`exclusiveMinimum` as a number, or `true` beside `minimum`, one past
/// it), then `maximum` likewise; an integer rounded away from 0.
fn number(s: &serde_json::Map<String, Value>, integer: bool) -> Value {
    let exclusive = |key: &str| s.get(key) == Some(&Value::Bool(true));
    let low = bound(s, "minimum")
        .map(|m| {
            if exclusive("exclusiveMinimum") {
                m + 1.0
            } else {
                m
            }
        })
        .or_else(|| bound(s, "exclusiveMinimum").map(|m| m + 1.0));
    let high = bound(s, "maximum")
        .map(|m| {
            if exclusive("exclusiveMaximum") {
                m - 1.0
            } else {
                m
            }
        })
        .or_else(|| bound(s, "exclusiveMaximum").map(|m| m - 1.0));
    let mut x: f64 = 0.0;
    if let Some(low) = low {
        x = x.max(low);
    }
    if let Some(high) = high {
        x = x.min(high);
    }
    if integer {
        x = if x > 0.0 { x.ceil() } else { x.floor() };
    }
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        json!(x as i64)
    } else {
        json!(x)
    }
}

/// The tools a conversation offers: those declared with a schema, and
/// those a discovery tool's result spelled out (each `<function>{"name":
/// .., "parameters": ..}</function>`, as claude's `ToolSearch` answers).
fn offered_tools(conversation: &Conversation) -> Vec<(String, Value)> {
    let mut tools: Vec<(String, Value)> = conversation
        .tools
        .iter()
        .filter(|(_, schema)| schema.is_object())
        .cloned()
        .collect();
    for result in conversation
        .results
        .iter()
        .filter(|r| is_discovery_tool(&r.tool))
    {
        for block in result.text.split("<function>").skip(1) {
            let Some((body, _)) = block.split_once("</function>") else {
                continue;
            };
            let Ok(function) = serde_json::from_str::<Value>(body) else {
                continue;
            };
            if let Some(name) = function["name"].as_str()
                && !tools.iter().any(|(n, _)| n == name)
            {
                tools.push((name.to_string(), function["parameters"].clone()));
            }
        }
    }
    tools
}

/// The MCP tools (`mcp__...`) a conversation names in its text without
/// declaring them: the deferred tools a discovery tool loads. In order of
/// first mention, each once.
fn deferred_mcp_tools(conversation: &Conversation, known: &[(String, Value)]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for piece in &conversation.context {
        for (at, _) in piece.match_indices("mcp__") {
            let name: String = piece[at..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
                .collect();
            let has_tool = name["mcp__".len()..].contains("__");
            if has_tool && !names.contains(&name) && !known.iter().any(|(n, _)| *n == name) {
                names.push(name);
            }
        }
    }
    names
}

/// What the stand-in does when the SPARQL tool's schema is not known yet:
/// load the deferred MCP tools through the discovery tool, once.
fn load_deferred(conversation: &Conversation, tools: &[(String, Value)]) -> Option<Turn> {
    let (search, schema) = tools.iter().find(|(n, _)| is_discovery_tool(n))?;
    if conversation.results.iter().any(|r| r.tool == *search) {
        return None;
    }
    let param = schema["properties"]
        .as_object()
        .and_then(|p| p.keys().find(|k| k.as_str() == "query").cloned())?;
    let deferred = deferred_mcp_tools(conversation, tools);
    if deferred.is_empty() {
        return None;
    }
    Some(Turn::ToolUse {
        name: search.clone(),
        input: json!({ param: format!("select:{}", deferred.join(",")) }),
    })
}

/// Whether a host's tool name marks an MCP tool: `mcp__SERVER__TOOL`
/// (claude, codex) or `mcp_SERVER_TOOL` (gemini 0.61).
fn is_mcp_tool(name: &str) -> bool {
    name.starts_with("mcp_")
}

/// Hosts name an MCP tool `mcp__SERVER__TOOL` (claude, codex),
/// `mcp_SERVER_TOOL` (gemini 0.61) or the bare tool name: the answer tool is the
/// one whose name ends in `submit_csv`.
fn is_submit(name: &str) -> bool {
    name.ends_with(SUBMIT_CSV)
}

/// The protocol-independent half of the stand-in: the corpus, the
/// strategy, and per record how many conversations have started (the
/// attempt number `mixed` varies by).
pub struct Player {
    corpus: Corpus,
    strategy: Strategy,
    conversations: Mutex<BTreeMap<String, u32>>,
}

impl Player {
    /// A player of `strategy` over the answer keys of `corpus`.
    pub fn new(corpus: Corpus, strategy: Strategy) -> Player {
        Player {
            corpus,
            strategy,
            conversations: Mutex::new(BTreeMap::new()),
        }
    }

    /// The corpus the prompts come from.
    #[cfg(test)]
    pub fn corpus(&self) -> &Corpus {
        &self.corpus
    }

    /// Decides the next turn of `conversation`: run the record's answer
    /// key, then submit what the strategy makes of the rows, then end the
    /// turn. A conversation about no record of the corpus gets a short
    /// text reply.
    pub fn next_turn(&self, conversation: &Conversation) -> Turn {
        let Some(record) = conversation
            .prompts
            .iter()
            .find_map(|text| find_record(&self.corpus, text))
        else {
            return Turn::Text("I have no question to answer here.".into());
        };
        let results = &conversation.results;
        let played = self
            .strategy
            .resolve(record, self.attempt(&record.id, results.is_empty()));
        if results.iter().any(|r| is_submit(&r.tool)) {
            return Turn::Text("Submitted.".into());
        }
        let tools = offered_tools(conversation);
        // A built-in of the host is never the server's SPARQL tool: where
        // the host marks MCP tools (`mcp__okn__query` in claude and codex,
        // `mcp_okn_query` in gemini 0.61, whose `google_web_search` also
        // takes a `query`), only those are candidates.
        let mcp = tools.iter().any(|(n, _)| is_mcp_tool(n));
        let candidates = tools
            .iter()
            .filter(|(n, _)| !mcp || is_mcp_tool(n))
            .map(|(n, s)| (n.as_str(), s));
        let Some(tool) = query_tool(candidates) else {
            if let Some(turn) = load_deferred(conversation, &tools) {
                return turn;
            }
            return Turn::Text("There is no SPARQL tool among my tools.".into());
        };
        let submit = tools
            .iter()
            .map(|(n, _)| n.clone())
            .find(|n| is_submit(n))
            .unwrap_or_else(|| SUBMIT_CSV.into());
        match results.iter().rev().find(|r| r.tool == tool.name) {
            None => Turn::ToolUse {
                input: Value::Object(tool.arguments(&record.query)),
                name: tool.name,
            },
            Some(ToolResult {
                is_error: true,
                text,
                ..
            }) => {
                let first: String = text.chars().take(200).collect();
                Turn::Text(format!("The query failed, so I have no answer: {first}"))
            }
            Some(ToolResult { text, .. }) => {
                if played == Strategy::Hang {
                    return Turn::Hang;
                }
                match reply_table(text).and_then(|rows| played.answer(&rows)) {
                    Some(answer) => Turn::ToolUse {
                        name: submit,
                        input: json!({"csv": answer.to_csv()}),
                    },
                    None => Turn::Text(format!(
                        "I ran the query and have no table to submit ({played})."
                    )),
                }
            }
        }
    }

    /// The attempt number of a conversation about `record`: a conversation
    /// with no tool results yet is a new one, so it counts one more.
    fn attempt(&self, record: &str, new_conversation: bool) -> u32 {
        let mut conversations = self.conversations.lock().unwrap_or_else(|e| e.into_inner());
        let n = conversations.entry(record.to_string()).or_insert(0);
        if new_conversation {
            *n += 1;
        }
        (*n).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_mcp_content_list_is_read_as_its_text_in_every_shape_a_host_sends() {
        let list = json!([{"type": "text", "text": "{\"columns\": [\"x\"]}"}]);
        assert_eq!(result_text(&list), "{\"columns\": [\"x\"]}");
        assert_eq!(
            result_text(&Value::String(list.to_string())),
            "{\"columns\": [\"x\"]}"
        );
        assert_eq!(
            result_text(&json!({"content": list})),
            "{\"columns\": [\"x\"]}"
        );
        assert_eq!(result_text(&json!("x\n1\n")), "x\n1\n");
        // A reply that is itself JSON, not a content list, stays whole.
        assert_eq!(
            result_text(&json!("{\"columns\": []}")),
            "{\"columns\": []}"
        );
        assert_eq!(result_text(&json!({"rows": 1})), "{\"rows\":1}");
        // codex 0.171's function_call_output: its note, then the reply.
        let codex = json!([{"type": "input_text", "text": "Wall time: 0.0122 seconds\nOutput:"},
            {"type": "input_text", "text": "{\"columns\": [\"x\"], \"rows\": []}"}]);
        assert_eq!(result_text(&codex), "{\"columns\": [\"x\"], \"rows\": []}");
        // gemini 0.61's functionResponse output: the reply in an envelope.
        let wrapped = json!("<untrusted_context>\n{\"columns\": []}\n</untrusted_context>");
        assert_eq!(result_text(&wrapped), "{\"columns\": []}");
        assert_eq!(result_text(&json!("<b>x</i>")), "<b>x</i>");
        let prose = json!([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]);
        assert_eq!(result_text(&prose), "a\nb");
    }

    /// Issue 25, item 1: a request for JSON gets an instance of its schema.
    #[test]
    fn a_json_instance_fits_its_schema_bounds_and_branches() {
        let cases = [
            (json!({"type": "INTEGER", "minimum": "3"}), json!(3)),
            (json!({"type": "integer", "minimum": 2.5}), json!(3)),
            (json!({"type": "integer", "maximum": -1.5}), json!(-2)),
            (
                json!({"type": "number", "minimum": 1, "exclusiveMinimum": true}),
                json!(2),
            ),
            (json!({"type": "number", "exclusiveMaximum": 0}), json!(-1)),
            (json!({"type": "string", "minLength": 3}), json!("xxx")),
            (json!({"type": ["null", "boolean"]}), json!(false)),
            (json!({"type": "null"}), Value::Null),
            (json!({"const": "fixed", "type": "string"}), json!("fixed")),
            (
                json!({"anyOf": [{"type": "integer"}, {"type": "string"}]}),
                json!(0),
            ),
            (
                json!({"allOf": [{"properties": {"a": {"type": "string"}}},
                    {"properties": {"b": {"type": "boolean"}}}]}),
                json!({"a": "", "b": false}),
            ),
            (
                json!({"required": ["undeclared"]}),
                json!({"undeclared": ""}),
            ),
            (json!({"type": "array"}), json!([])),
            (json!({}), json!({})),
            (json!(true), json!({})),
        ];
        for (schema, want) in cases {
            assert_eq!(json_instance(&schema), want, "{schema}");
        }
        // A schema that refers to itself without end stops at a depth.
        let mut deep = json!({"type": "string"});
        for _ in 0..100 {
            deep = json!({"type": "object", "properties": {"a": deep}, "required": ["a"]});
        }
        assert!(json_instance(&deep).to_string().contains("null"));
    }

    #[test]
    fn prompt_tokens_are_the_cached_and_uncached_input_together() {
        let tokens = Tokens::of(400, &Turn::Text("abcd".into()));
        assert_eq!(
            (tokens.input, tokens.cache_read, tokens.output),
            (75, 25, 2)
        );
        assert_eq!(tokens.prompt(), 100);
    }
}
