//! A result table written from one of several inputs of the same shape
//! (the pages of an export, one file per month): small models read each
//! file into the same variable and write after the loop, so only the last
//! file's rows reach the result.
//!
//! Bounded: the inputs are the texts the coach already holds; each is
//! parsed once per column of the result it is asked about.

use std::collections::BTreeSet;

use serde_json::Value;

use super::table;

/// Values shown in a note, at most.
const LISTED: usize = 6;

/// A result whose key column holds exactly one input's values.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct OneInput {
    /// The result's column, as its header writes it (trimmed).
    pub(super) column: String,
    /// The input whose values it holds.
    pub(super) used: String,
    /// The other inputs, which hold values the result lacks.
    pub(super) others: Vec<String>,
    /// Values of the column only those others hold (at most [`LISTED`]).
    pub(super) lacking: Vec<String>,
}

/// Where the table `result` (a file the task's code wrote) has a column
/// whose values are exactly those of one of the `inputs` (names and
/// texts: JSON documents or tables, at least two of them with that column
/// or key, all of the same shape), while the others hold values of it the
/// result lacks: that column, the input used, the others, and what they
/// hold that it lacks. A filter whose rows happen to come from one file
/// would rarely hold all of that file's values and none of the rest.
pub(super) fn from_one_input(result: &str, inputs: &[(&String, &String)]) -> Option<OneInput> {
    table::by_column_of_any(result)
        .iter()
        .find_map(|(name, values)| {
            let key = name.trim();
            let wrote: BTreeSet<String> = values
                .iter()
                .filter(|v| !table::is_missing(v))
                .map(|v| table::fold(v))
                .collect();
            if key.is_empty() || wrote.is_empty() {
                return None;
            }
            let held: Vec<(&String, String, BTreeSet<String>)> = inputs
                .iter()
                .filter_map(|(input, text)| {
                    let (shape, values) = shape_and_values(text, key)?;
                    (!values.is_empty()).then_some((*input, shape, values))
                })
                .collect();
            let same_shape = held.windows(2).all(|w| w[0].1 == w[1].1);
            if held.len() < 2 || !same_shape {
                return None;
            }
            let [(used, _, _)] = held
                .iter()
                .filter(|(_, _, values)| *values == wrote)
                .collect::<Vec<_>>()[..]
            else {
                return None;
            };
            let lacking: BTreeSet<&String> = held
                .iter()
                .flat_map(|(_, _, values)| values)
                .filter(|v| !wrote.contains(*v))
                .collect();
            (!lacking.is_empty()).then(|| OneInput {
                column: key.to_owned(),
                used: (*used).clone(),
                others: held
                    .iter()
                    .filter(|(input, _, _)| input != used)
                    .map(|(input, _, _)| (*input).clone())
                    .collect(),
                lacking: lacking.into_iter().take(LISTED).cloned().collect(),
            })
        })
}

/// The shape of the input `text` (a JSON document's keys, or a table's
/// header) and the values it holds under `key` (any JSON object's key, or
/// the table's column of that name in any case), folded.
fn shape_and_values(text: &str, key: &str) -> Option<(String, BTreeSet<String>)> {
    let trimmed = text.trim_start();
    if (trimmed.starts_with('{') || trimmed.starts_with('['))
        && let Ok(value) = serde_json::from_str::<Value>(text)
    {
        let mut values = BTreeSet::new();
        values_of(&value, key, &mut values);
        return Some((json_shape(&value), values));
    }
    let columns = table::by_column(text);
    if columns.is_empty() {
        return None;
    }
    let shape = columns
        .iter()
        .map(|(name, _)| table::fold(name))
        .collect::<Vec<_>>()
        .join(",");
    let values = columns
        .into_iter()
        .find(|(name, _)| name.trim().eq_ignore_ascii_case(key))
        .map(|(_, values)| {
            values
                .iter()
                .filter(|v| !table::is_missing(v))
                .map(|v| table::fold(v))
                .collect()
        })
        .unwrap_or_default();
    Some((shape, values))
}

/// A JSON document's shape: its keys at the top, or its first item's.
fn json_shape(value: &Value) -> String {
    let keys = |v: &Value| match v {
        Value::Object(map) => map.keys().cloned().collect::<Vec<_>>().join(","),
        _ => String::new(),
    };
    match value {
        Value::Array(items) => format!("[{}]", items.first().map(keys).unwrap_or_default()),
        other => keys(other),
    }
}

/// The scalar values under `key` anywhere in `value`, folded.
fn values_of(value: &Value, key: &str, out: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                match v {
                    Value::String(s) if k == key => {
                        out.insert(table::fold(s));
                    }
                    Value::Number(n) if k == key => {
                        out.insert(n.to_string());
                    }
                    _ => values_of(v, key, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| values_of(v, key, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(inputs: &[(&str, &str)]) -> Vec<(String, String)> {
        inputs
            .iter()
            .map(|(n, t)| ((*n).to_owned(), (*t).to_owned()))
            .collect()
    }

    fn found(result: &str, inputs: &[(&str, &str)]) -> Option<OneInput> {
        let owned = named(inputs);
        let refs: Vec<(&String, &String)> = owned.iter().map(|(n, t)| (n, t)).collect();
        from_one_input(result, &refs)
    }

    const PAGE1: &str = r#"{"page": 1, "data": [{"id": 3, "profile": {"name": "Cara"}}, {"id": 1, "profile": {"name": "Ana"}}]}"#;
    const PAGE2: &str = r#"{"page": 2, "data": [{"id": 1, "profile": {"name": "Ana"}}, {"id": 10, "profile": {"name": "Jo"}}]}"#;
    const PAGE3: &str = r#"{"page": 3, "data": [{"id": 2, "profile": {"name": "Ben"}}]}"#;

    #[test]
    fn a_result_holding_only_the_last_pages_rows_is_found() {
        let pages = [
            ("page1.json", PAGE1),
            ("page2.json", PAGE2),
            ("page3.json", PAGE3),
        ];
        assert_eq!(
            found("id,name\n2,Ben\n", &pages),
            Some(OneInput {
                column: "id".to_owned(),
                used: "page3.json".to_owned(),
                others: vec!["page1.json".to_owned(), "page2.json".to_owned()],
                lacking: vec!["1".to_owned(), "10".to_owned(), "3".to_owned()],
            })
        );
        // Every page's rows: nothing to say.
        assert_eq!(
            found("id,name\n1,Ana\n2,Ben\n3,Cara\n10,Jo\n", &pages),
            None
        );
        // Some of one page's rows only (a filter): not this.
        assert_eq!(found("id,name\n3,Cara\n", &pages), None);
    }

    #[test]
    fn tables_of_the_same_header_count_and_tables_of_others_do_not() {
        let jan = "day,amount\n2024-01-01,5\n2024-01-02,7\n";
        let feb = "day,amount\n2024-02-01,1\n2024-02-02,2\n";
        let result = "day,amount\n2024-02-01,1\n2024-02-02,2\n";
        let months = [("jan.csv", jan), ("feb.csv", feb)];
        let one = found(result, &months).expect("only February");
        assert_eq!((one.column.as_str(), one.used.as_str()), ("day", "feb.csv"));
        // A join of two tables of other shapes keeps the ids of one.
        let customers = "customer_id,name\nC1,Ana\nC2,Ben\n";
        let payments = "id,customer_id,amount\n1,C1,5\n2,C9,3\n";
        let joined = "customer_id,name,amount\nC1,Ana,5\nC2,Ben,0\n";
        assert_eq!(
            found(
                joined,
                &[("customers.csv", customers), ("payments.csv", payments)]
            ),
            None
        );
        // One input alone: nothing to compare.
        assert_eq!(found(result, &[("feb.csv", feb)]), None);
    }
}
