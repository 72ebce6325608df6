//! The schema and the statements, as the Go driver's SQL files: included here, never copied, so
//! that both drivers run the same text. A statement file is split at its `-- name: NAME` lines;
//! each section (without its comment lines, trimmed, without the final `;`) is one statement.

use std::collections::HashMap;
use std::sync::OnceLock;

/// The version the migrations bring the schema to.
pub(crate) const SCHEMA_VERSION: i32 = 1;

/// The schema's version table (created, if absent, and locked by every migration run).
pub(crate) const SCHEMA_VERSION_SQL: &str =
    include_str!("../../../go/coordpg/sql/schema_version.sql");

/// `MIGRATIONS[v - 1]` brings the schema from version `v - 1` to `v`.
pub(crate) const MIGRATIONS: [&str; SCHEMA_VERSION as usize] =
    [include_str!("../../../go/coordpg/sql/0001_init.sql")];

const STATEMENT_FILES: [(&str, &str); 4] = [
    (
        "ledger.sql",
        include_str!("../../../go/coordpg/sql/ledger.sql"),
    ),
    (
        "anchors.sql",
        include_str!("../../../go/coordpg/sql/anchors.sql"),
    ),
    (
        "words.sql",
        include_str!("../../../go/coordpg/sql/words.sql"),
    ),
    (
        "requests.sql",
        include_str!("../../../go/coordpg/sql/requests.sql"),
    ),
];

/// Splits `text` at its `-- name:` lines, as the Go driver does.
pub(crate) fn parse_statements(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut name: Option<String> = None;
    let mut body = String::new();
    let flush = |name: &Option<String>, body: &str, out: &mut Vec<(String, String)>| {
        let Some(n) = name else { return Ok(()) };
        let s = body.trim();
        let s = s.strip_suffix(';').unwrap_or(s).to_string();
        if s.is_empty() {
            return Err(format!("statement {n:?} is empty"));
        }
        if out.iter().any(|(m, _)| m == n) {
            return Err(format!("statement {n:?} twice"));
        }
        out.push((n.clone(), s));
        Ok(())
    };
    for line in text.split('\n') {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("-- name:") {
            flush(&name, &body, &mut out)?;
            name = Some(rest.trim().to_string());
            body.clear();
            continue;
        }
        if name.is_some() && !t.starts_with("--") {
            body.push_str(line);
            body.push('\n');
        }
    }
    flush(&name, &body, &mut out)?;
    Ok(out)
}

/// Every named statement of the statement files.
pub(crate) fn statements() -> &'static HashMap<String, String> {
    static ALL: OnceLock<HashMap<String, String>> = OnceLock::new();
    ALL.get_or_init(|| {
        let mut all = HashMap::new();
        for (file, text) in STATEMENT_FILES {
            let parsed = parse_statements(text).unwrap_or_else(|e| panic!("coordpg: {file}: {e}"));
            for (n, s) in parsed {
                assert!(
                    all.insert(n.clone(), s).is_none(),
                    "coordpg: statement {n} in two files"
                );
            }
        }
        all
    })
}

/// The text of statement `name` (a name of the SQL files; a missing one is a bug of this crate).
pub(crate) fn statement(name: &str) -> &'static str {
    statements()
        .get(name)
        .unwrap_or_else(|| panic!("coordpg: no statement {name}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_statement_the_driver_runs_is_in_the_files() {
        for n in [
            "ledger_insert",
            "ledger_place",
            "ledger_claim",
            "ledger_finalize",
            "ledger_finalize_batch",
            "ledger_take",
            "ledger_touch",
            "ledger_reconcile",
            "ledger_reclaim",
            "ledger_finalize_own",
            "ledger_sweep_orphans",
            "ledger_get",
            "ledger_states",
            "ledger_len",
            "anchor_insert",
            "anchor_remove",
            "anchor_try_fire",
            "anchor_advance",
            "anchor_unset",
            "anchor_get",
            "anchor_len",
            "flip",
            "word_get",
            "counter_increment",
            "trigger_start",
            "trigger_finish",
            "window_increment",
            "request_get",
            "request_prune",
            "session_end",
            "session_alive",
            "db_now",
        ] {
            assert!(!statement(n).is_empty(), "{n}");
            assert!(!statement(n).ends_with(';'), "{n}");
        }
    }

    #[test]
    fn the_parser_refuses_empty_and_repeated_statements() {
        assert!(parse_statements("-- name: a\n-- only a comment\n").is_err());
        assert!(parse_statements("-- name: a\nSELECT 1;\n-- name: a\nSELECT 2;").is_err());
        let p = parse_statements("junk\n-- name: a\n-- c\nSELECT 1;\n").unwrap();
        assert_eq!(p, vec![("a".to_string(), "SELECT 1".to_string())]);
    }
}
