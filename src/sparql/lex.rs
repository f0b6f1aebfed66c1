//! A small SPARQL tokenizer: enough to find the query form, a top-level
//! ORDER BY, and the variables of `SELECT *`, without a full parse (so it
//! works for queries an endpoint accepts that our parser might not).
//! Comments are skipped; IRIs and strings are one token each.

use serde::Serialize;

/// One token of SPARQL text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Token<'a> {
    /// A keyword, prefixed name or other bare word (`SELECT`, `rdfs:label`).
    Word(&'a str),
    /// A variable without its `?` or `$`.
    Var(&'a str),
    /// An IRI in angle brackets.
    Iri(&'a str),
    /// A string literal (quotes included).
    Str(&'a str),
    /// Any other character (`{`, `}`, `*`, `(`, `<` as less-than, ...).
    Punct(char),
}

/// The tokens of `text`, in order.
pub fn tokens(text: &str) -> Vec<Token<'_>> {
    Lexer::new(text).map(|(_, t)| t).collect()
}

/// The tokens of a text one at a time, in order, each with the byte
/// offset it starts at: a reader that needs only the first few (the query
/// form: [`query_form`]) or stops at a limit ([`check_shape`]) reads no
/// further.
pub struct Lexer<'a> {
    text: &'a str,
    i: usize,
    /// The offset of the first `>` or space after the last `<` met (`None`
    /// inside: there is none to the end of the text).
    stop: Option<Option<usize>>,
}

impl<'a> Lexer<'a> {
    /// A lexer at the start of `text`.
    pub fn new(text: &'a str) -> Lexer<'a> {
        Lexer {
            text,
            i: 0,
            stop: None,
        }
    }

    /// The token that starts with `c` (`len` bytes) at the lexer's
    /// offset, which it moves past the token.
    fn token(&mut self, c: char, len: usize) -> Token<'a> {
        let text = self.text;
        let bytes = text.as_bytes();
        let i = self.i;
        match c {
            '<' => {
                // The next `>` or space, found once for a run of `<`
                // (a search per `<` made `<<<<…` quadratic).
                let next = match self.stop {
                    Some(found) if found.is_none_or(|s: usize| s > i) => found,
                    _ => text[i + 1..]
                        .find(|d: char| d == '>' || d.is_whitespace())
                        .map(|e| i + 1 + e),
                };
                self.stop = Some(next);
                match next {
                    Some(e) if bytes[e] == b'>' => {
                        self.i = e + 1;
                        Token::Iri(&text[i + 1..e])
                    }
                    _ => {
                        self.i = i + 1;
                        Token::Punct('<')
                    }
                }
            }
            '"' | '\'' => {
                let start = i;
                let quote = bytes[i];
                let triple = bytes[i..].starts_with(&[quote, quote, quote]);
                let mut j = i + if triple { 3 } else { 1 };
                while j < bytes.len() {
                    if bytes[j] == b'\\' {
                        j += 2;
                        continue;
                    }
                    if triple {
                        if bytes[j..].starts_with(&[quote, quote, quote]) {
                            j += 3;
                            break;
                        }
                    } else if bytes[j] == quote {
                        j += 1;
                        break;
                    }
                    j += 1;
                }
                let end = j.min(bytes.len());
                self.i = j;
                Token::Str(&text[start..end])
            }
            '?' | '$' => {
                let start = i + 1;
                let mut end = start;
                for (j, d) in text[start..].char_indices() {
                    if d.is_alphanumeric() || d == '_' {
                        end = start + j + d.len_utf8();
                    } else {
                        break;
                    }
                }
                self.i = end.max(i + 1);
                if end > start {
                    Token::Var(&text[start..end])
                } else {
                    Token::Punct(c)
                }
            }
            c if c.is_alphanumeric() || c == '_' || c == ':' => {
                let start = i;
                let mut end = i;
                for (j, d) in text[start..].char_indices() {
                    if d.is_alphanumeric() || matches!(d, '_' | ':' | '-' | '.') {
                        end = start + j + d.len_utf8();
                    } else {
                        break;
                    }
                }
                // A trailing '.' ends a triple, it is not part of a name.
                let mut word = &text[start..end];
                while word.ends_with('.') {
                    word = &word[..word.len() - 1];
                }
                self.i = start + word.len().max(1);
                Token::Word(word)
            }
            c => {
                self.i = i + len;
                Token::Punct(c)
            }
        }
    }
}

impl<'a> Iterator for Lexer<'a> {
    type Item = (usize, Token<'a>);

    fn next(&mut self) -> Option<(usize, Token<'a>)> {
        let text = self.text;
        let bytes = text.as_bytes();
        while self.i < bytes.len() {
            let i = self.i;
            let c = text[i..].chars().next().unwrap_or(' ');
            let len = c.len_utf8();
            match c {
                '#' => {
                    let mut j = i;
                    while j < bytes.len() && bytes[j] != b'\n' {
                        j += 1;
                    }
                    self.i = j;
                }
                c if c.is_whitespace() => self.i += len,
                _ => return Some((i, self.token(c, len))),
            }
        }
        None
    }
}

fn is_keyword(token: &Token<'_>, keyword: &str) -> bool {
    matches!(token, Token::Word(w) if w.eq_ignore_ascii_case(keyword))
}

/// The SPARQL query form of a query (an answer key's, or one an agent sent).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum QueryForm {
    /// `SELECT`: a table of solutions.
    Select,
    /// `ASK`: a boolean.
    Ask,
    /// `CONSTRUCT`: a graph.
    Construct,
    /// `DESCRIBE`: a graph.
    Describe,
}

impl QueryForm {
    /// The keyword as written in SPARQL (`SELECT`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            QueryForm::Select => "SELECT",
            QueryForm::Ask => "ASK",
            QueryForm::Construct => "CONSTRUCT",
            QueryForm::Describe => "DESCRIBE",
        }
    }
}

/// The form of the first query keyword in `text` (any case), skipping
/// comments, IRIs and strings of the prologue; `None` when there is none.
pub fn query_form(text: &str) -> Option<QueryForm> {
    Lexer::new(text).find_map(|(_, t)| match t {
        Token::Word(w) => [
            QueryForm::Select,
            QueryForm::Ask,
            QueryForm::Construct,
            QueryForm::Describe,
        ]
        .into_iter()
        .find(|form| w.eq_ignore_ascii_case(form.as_str())),
        _ => None,
    })
}

/// True when the query has an ORDER BY outside every `{ }` block.
pub fn has_top_level_order_by(text: &str) -> bool {
    let tokens = tokens(text);
    let mut depth = 0i64;
    for (i, t) in tokens.iter().enumerate() {
        match t {
            Token::Punct('{') => depth += 1,
            Token::Punct('}') => depth -= 1,
            _ if depth == 0
                && is_keyword(t, "ORDER")
                && tokens.get(i + 1).is_some_and(|n| is_keyword(n, "BY")) =>
            {
                return true;
            }
            _ => {}
        }
    }
    false
}

/// For `SELECT [DISTINCT|REDUCED] *`, the variables in order of first
/// appearance after the `*` (the column order readers expect, and the one
/// the W3C results tests use); `None` for any other projection.
pub fn select_star_variables(text: &str) -> Option<Vec<String>> {
    let tokens = tokens(text);
    let select = tokens.iter().position(|t| is_keyword(t, "SELECT"))?;
    let mut i = select + 1;
    while tokens
        .get(i)
        .is_some_and(|t| is_keyword(t, "DISTINCT") || is_keyword(t, "REDUCED"))
    {
        i += 1;
    }
    if tokens.get(i) != Some(&Token::Punct('*')) {
        return None;
    }
    let mut seen = Vec::new();
    for t in &tokens[i + 1..] {
        if let Token::Var(v) = t
            && !seen.iter().any(|s: &String| s == v)
        {
            seen.push((*v).to_string());
        }
    }
    Some(seen)
}

/// The deepest nesting of brackets (`(`, `[`, `{`) a query may have
/// ([`check_shape`]): the deepest of the 89 real answer keys of the OKN
/// registry nests 15.
pub const MAX_NESTING: usize = 64;

/// The most tokens a query may have outside its `VALUES` data blocks
/// ([`check_shape`]): the longest real answer key of the OKN registry has
/// about 1,400. Data in `VALUES` is a flat list and is not counted.
pub const MAX_TOKENS: usize = 4_000;

/// Why a query's shape is refused before it is parsed ([`check_shape`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShapeError {
    /// Brackets nested deeper than [`MAX_NESTING`]; the 1-based line of the
    /// first bracket past the limit.
    TooDeep {
        /// The line within the query text.
        line: u64,
    },
    /// More tokens than [`MAX_TOKENS`] outside `VALUES` data (counting
    /// stops there).
    TooLong,
}

impl std::fmt::Display for ShapeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ShapeError::TooDeep { .. } => write!(
                f,
                "the query nests brackets ( [ {{ more than {MAX_NESTING} deep; it was not \
                 parsed (a deeper query could exhaust the parser's stack): write it with less \
                 nesting"
            ),
            ShapeError::TooLong => write!(
                f,
                "the query has more than {MAX_TOKENS} tokens outside VALUES data; it was not \
                 parsed (a longer chain of operators or patterns could exhaust the \
                 engine's stack): split it, or move long lists into VALUES"
            ),
        }
    }
}

/// Checks, before any parser sees it, that SPARQL `text` is within the
/// shape our recursive SPARQL parser and engine (Oxigraph's) evaluate
/// without exhausting their stack: brackets nested at most
/// [`MAX_NESTING`] deep and at most [`MAX_TOKENS`] tokens outside `VALUES`
/// data blocks (a long chain of `+`, `||`, `/`, `UNION` or `OPTIONAL`
/// builds an expression or pattern as deep as it is long). Strings, IRIs
/// and comments are one token or none, so brackets inside them do not
/// count. Linear in the text; never panics.
///
/// Errors: [`ShapeError`], worded for the person or agent who wrote the
/// query (issue 24, item 19: one query must never abort the process).
pub fn check_shape(text: &str) -> Result<(), ShapeError> {
    let mut depth = 0usize;
    let mut counted = 0usize;
    // The depth at which a VALUES data block opened, while inside one.
    let mut values: Option<usize> = None;
    let mut after_values = false;
    // Token by token: a text past the limit is not lexed whole first.
    for (at, token) in Lexer::new(text) {
        if let Token::Punct(c @ ('(' | '[' | '{')) = token {
            if after_values && c == '{' {
                values = Some(depth);
                after_values = false;
            }
            depth += 1;
            if depth > MAX_NESTING {
                let line = 1 + text.as_bytes()[..at]
                    .iter()
                    .filter(|b| **b == b'\n')
                    .count();
                return Err(ShapeError::TooDeep { line: line as u64 });
            }
        } else if let Token::Punct(')' | ']' | '}') = token {
            depth = depth.saturating_sub(1);
            if values == Some(depth) {
                values = None;
                continue;
            }
        } else if matches!(token, Token::Word(w) if w.eq_ignore_ascii_case("VALUES")) {
            after_values = true;
        }
        if values.is_none() {
            counted += 1;
            if counted > MAX_TOKENS {
                return Err(ShapeError::TooLong);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_forms_skip_the_prologue() {
        let q = "# SELECT in a comment\nPREFIX ask: <http://ex.org/select#>\nBASE <x>\n construct { ?s ?p ?o } WHERE {}";
        assert_eq!(query_form(q), Some(QueryForm::Construct));
        assert_eq!(
            query_form("PREFIX : <a>\nSelect * {}"),
            Some(QueryForm::Select)
        );
        assert_eq!(query_form("ASK{}"), Some(QueryForm::Ask));
        assert_eq!(query_form("describe <x>"), Some(QueryForm::Describe));
        assert_eq!(query_form("PREFIX selected: <x>\n"), None);
        assert_eq!(query_form(""), None);
    }

    #[test]
    fn top_level_order_by() {
        assert!(has_top_level_order_by("SELECT * { ?s ?p ?o } ORDER BY ?s"));
        assert!(has_top_level_order_by(
            "select * { ?s ?p ?o }\norder\n  by desc(?s) limit 3"
        ));
        assert!(!has_top_level_order_by(
            "SELECT * { { SELECT ?s { ?s ?p ?o } ORDER BY ?s LIMIT 1 } }"
        ));
        assert!(!has_top_level_order_by(
            "SELECT * { ?s ?p \"ORDER BY\" } # ORDER BY ?s"
        ));
        assert!(!has_top_level_order_by(
            "SELECT * { ?s ?p ?o FILTER(?o < 5) }"
        ));
        assert!(has_top_level_order_by(
            "PREFIX x: <http://ex.org/a#b> SELECT * { ?s ?p ?o FILTER(?o < 5) } ORDER BY ?o"
        ));
        assert!(!has_top_level_order_by(
            "SELECT * { ?s ?p '''ORDER BY { ''' }"
        ));
    }

    #[test]
    fn select_star_variables_in_order_of_appearance() {
        assert_eq!(
            select_star_variables("SELECT * WHERE { ?s ?p ?o OPTIONAL {?o ?p2 $o2 } } ORDER BY ?s"),
            Some(vec![
                "s".into(),
                "p".into(),
                "o".into(),
                "p2".into(),
                "o2".into()
            ])
        );
        assert_eq!(
            select_star_variables("select distinct * { ?x a ?y }"),
            Some(vec!["x".into(), "y".into()])
        );
        assert_eq!(select_star_variables("SELECT ?s { ?s ?p ?o }"), None);
        assert_eq!(
            select_star_variables("SELECT (COUNT(*) AS ?n) { ?s ?p ?o }"),
            None
        );
    }

    /// Issue 24, item 19: 1,000 nested parentheses (2 KB) aborted the
    /// process; brackets inside strings, IRIs and comments do not count,
    /// and VALUES data is not counted as tokens.
    #[test]
    fn deep_or_long_queries_are_refused_before_parsing() {
        let nested =
            |n: usize| format!("SELECT * {{ FILTER({}1{}) }}", "(".repeat(n), ")".repeat(n));
        assert_eq!(check_shape(&nested(MAX_NESTING - 2)), Ok(()));
        assert_eq!(
            check_shape(&format!("\n\n{}", nested(1000))),
            Err(ShapeError::TooDeep { line: 3 })
        );
        assert_eq!(
            check_shape(&format!(
                "SELECT * {{ ?s ?p \"{}\" }} # {}\n",
                "(".repeat(5000),
                "[".repeat(5000)
            )),
            Ok(())
        );
        let chain = format!("SELECT * {{ BIND(1{} AS ?x) }}", "+1".repeat(MAX_TOKENS));
        assert!(matches!(check_shape(&chain), Err(ShapeError::TooLong)));
        let values = format!(
            "SELECT * {{ VALUES (?x ?y) {{ {} }} ?x ?p ?y }}",
            "(1 2) ".repeat(MAX_TOKENS)
        );
        assert_eq!(check_shape(&values), Ok(()));
        for text in ["", "((((", "))))}", "<<<<<<<<", "VALUES", "VALUES {"] {
            let _ = check_shape(text);
        }
    }

    /// A run of `<` with no `>` after it is lexed in linear time.
    #[test]
    fn a_run_of_less_than_signs_is_linear() {
        let text = "<".repeat(200_000);
        let started = std::time::Instant::now();
        assert_eq!(tokens(&text).len(), 200_000);
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        assert_eq!(
            tokens("<a> < <b c> <d>"),
            vec![
                Token::Iri("a"),
                Token::Punct('<'),
                Token::Punct('<'),
                Token::Word("b"),
                Token::Word("c"),
                Token::Punct('>'),
                Token::Iri("d"),
            ]
        );
    }

    #[test]
    fn words_stop_before_a_closing_dot() {
        assert_eq!(
            tokens("?s a :Thing.}"),
            vec![
                Token::Var("s"),
                Token::Word("a"),
                Token::Word(":Thing"),
                Token::Punct('.'),
                Token::Punct('}')
            ]
        );
    }
}
