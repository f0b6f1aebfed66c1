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
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = text[i..].chars().next().unwrap_or(' ');
        let len = c.len_utf8();
        match c {
            '#' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            c if c.is_whitespace() => i += len,
            '<' => {
                let rest = &text[i + 1..];
                let end = rest.find(|d: char| d == '>' || d.is_whitespace());
                match end {
                    Some(e) if rest[e..].starts_with('>') => {
                        out.push(Token::Iri(&rest[..e]));
                        i += e + 2;
                    }
                    _ => {
                        out.push(Token::Punct('<'));
                        i += 1;
                    }
                }
            }
            '"' | '\'' => {
                let start = i;
                let quote = bytes[i];
                let triple = bytes[i..].starts_with(&[quote, quote, quote]);
                i += if triple { 3 } else { 1 };
                while i < bytes.len() {
                    if bytes[i] == b'\\' {
                        i += 2;
                        continue;
                    }
                    if triple {
                        if bytes[i..].starts_with(&[quote, quote, quote]) {
                            i += 3;
                            break;
                        }
                    } else if bytes[i] == quote {
                        i += 1;
                        break;
                    }
                    i += 1;
                }
                let end = i.min(bytes.len());
                out.push(Token::Str(&text[start..end]));
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
                if end > start {
                    out.push(Token::Var(&text[start..end]));
                } else {
                    out.push(Token::Punct(c));
                }
                i = end.max(i + 1);
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
                out.push(Token::Word(word));
                i = start + word.len().max(1);
            }
            c => {
                out.push(Token::Punct(c));
                i += len;
            }
        }
    }
    out
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
    tokens(text).iter().find_map(|t| match t {
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
