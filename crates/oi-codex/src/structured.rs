//! Structured final answers (`--output-schema FILE`): the model is asked to
//! end with a JSON document that validates against the schema; the answer
//! is read (a fenced block or prose around it is allowed), validated, and
//! the model is asked once more, with what was wrong, when it does not
//! validate. The turn's answer is then the JSON alone.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// Why a schema file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    #[error("--output-schema {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("--output-schema {}: not JSON: {problem}", path.display())]
    NotJson { path: PathBuf, problem: String },
    #[error("--output-schema {}: not a JSON Schema: {problem}", path.display())]
    NotSchema { path: PathBuf, problem: String },
}

impl SchemaError {
    pub fn hint(&self) -> String {
        match self {
            Self::Read { .. } => "give the path of a JSON Schema file".to_owned(),
            Self::NotJson { .. } | Self::NotSchema { .. } => {
                "the file must hold a JSON Schema object, e.g. {\"type\": \"object\", \"properties\": {…}}".to_owned()
            }
        }
    }
}

/// A schema the turn's answer must validate against.
#[derive(Debug)]
pub struct OutputSchema {
    schema: Value,
    validator: jsonschema::Validator,
}

impl OutputSchema {
    /// The schema in the file at `path`.
    pub fn read(path: &Path) -> Result<Self, SchemaError> {
        let text = fs_err::read_to_string(path).map_err(|source| SchemaError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let schema: Value = serde_json::from_str(&text).map_err(|e| SchemaError::NotJson {
            path: path.to_path_buf(),
            problem: e.to_string(),
        })?;
        Self::new(schema).map_err(|problem| SchemaError::NotSchema {
            path: path.to_path_buf(),
            problem,
        })
    }

    /// `schema` itself; an error says why it is not a usable schema.
    pub fn new(schema: Value) -> Result<Self, String> {
        if !schema.is_object() {
            return Err("a schema is a JSON object".to_owned());
        }
        let validator = jsonschema::validator_for(&schema).map_err(|e| e.to_string())?;
        Ok(Self { schema, validator })
    }

    /// What the model is told with the task.
    pub fn instructions(&self) -> String {
        format!(
            "\n\nWhen the task is done, give your final answer as a single JSON document, and nothing else, that validates against this JSON Schema:\n{}",
            self.schema
        )
    }

    /// The answer's JSON, compact, when it validates; else what is wrong.
    pub fn check(&self, answer: &str) -> Result<String, String> {
        let Some(value) = json_in(answer) else {
            return Err("the answer holds no JSON document".to_owned());
        };
        let problems: Vec<String> = self
            .validator
            .iter_errors(&value)
            .map(|e| {
                let at = e.instance_path().to_string();
                if at.is_empty() {
                    e.to_string()
                } else {
                    format!("at {at}: {e}")
                }
            })
            .collect();
        if problems.is_empty() {
            Ok(value.to_string())
        } else {
            Err(problems.join("; "))
        }
    }

    /// What the model is told when its answer did not validate.
    pub fn retry_prompt(problem: &str) -> String {
        format!(
            "[oi: your final answer does not validate against the JSON Schema: {problem}. Reply with only the corrected JSON document.]"
        )
    }
}

/// What to do with a turn's answer when a schema was asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// It validates: this (compact JSON) is the answer.
    Valid(String),
    /// It does not, for the first time: send the model this prompt, and
    /// judge the answer to it.
    AskAgain(String),
    /// It still does not: the turn fails with this message.
    Invalid(String),
}

/// A turn whose answer must validate against a schema: the model is asked
/// once more when it does not, then the turn fails. The same for every
/// front end (`exec --output-schema`, the app-server's `outputSchema`).
#[derive(Debug)]
pub struct StructuredAnswer {
    schema: OutputSchema,
    asked_again: bool,
}

impl StructuredAnswer {
    pub fn new(schema: OutputSchema) -> Self {
        Self {
            schema,
            asked_again: false,
        }
    }

    /// What to add to the task.
    pub fn instructions(&self) -> String {
        self.schema.instructions()
    }

    /// The verdict on `answer` (the model's final reply).
    pub fn judge(&mut self, answer: &str) -> Verdict {
        match self.schema.check(answer) {
            Ok(json) => Verdict::Valid(json),
            Err(problem) if !self.asked_again => {
                self.asked_again = true;
                Verdict::AskAgain(OutputSchema::retry_prompt(&problem))
            }
            Err(problem) => Verdict::Invalid(format!(
                "the final answer does not validate against the output schema: {problem}"
            )),
        }
    }
}

/// The JSON document in `text`: all of it, a fenced block, or the outermost
/// `{…}` / `[…]` in it.
fn json_in(text: &str) -> Option<Value> {
    let text = text.trim();
    if let Ok(value) = serde_json::from_str(text) {
        return Some(value);
    }
    if let Some(start) = text.find("```") {
        let after = &text[start + 3..];
        let body = after.split_once('\n').map_or(after, |(_, b)| b);
        if let Some(end) = body.find("```")
            && let Ok(value) = serde_json::from_str(body[..end].trim())
        {
            return Some(value);
        }
    }
    for (open, close) in [('{', '}'), ('[', ']')] {
        if let (Some(a), Some(b)) = (text.find(open), text.rfind(close))
            && a < b
            && let Ok(value) = serde_json::from_str(&text[a..=b])
        {
            return Some(value);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn schema() -> OutputSchema {
        OutputSchema::new(json!({
            "type": "object",
            "properties": {"total": {"type": "number"}},
            "required": ["total"],
            "additionalProperties": false
        }))
        .unwrap()
    }

    #[test]
    fn an_answer_is_read_wherever_its_json_is() {
        let s = schema();
        assert_eq!(s.check("{\"total\": 42}"), Ok("{\"total\":42}".to_owned()));
        assert_eq!(
            s.check("Here it is:\n```json\n{\"total\": 42}\n```"),
            Ok("{\"total\":42}".to_owned())
        );
        assert_eq!(
            s.check("The result is {\"total\": 42}."),
            Ok("{\"total\":42}".to_owned())
        );
    }

    #[test]
    fn the_model_is_asked_again_once() {
        let mut flow = StructuredAnswer::new(schema());
        assert!(flow.instructions().contains("\"total\""));
        let Verdict::AskAgain(prompt) = flow.judge("many") else {
            panic!("asks again first");
        };
        assert!(prompt.contains("no JSON document"), "{prompt}");
        assert_eq!(
            flow.judge("{\"total\": 3}"),
            Verdict::Valid("{\"total\":3}".into())
        );
        let Verdict::Invalid(message) = flow.judge("still many") else {
            panic!("fails the second time");
        };
        assert!(message.contains("does not validate"), "{message}");
    }

    #[test]
    fn what_does_not_validate_says_why() {
        let s = schema();
        assert_eq!(
            s.check("42 apples"),
            Err("the answer holds no JSON document".to_owned())
        );
        let problem = s.check("{\"total\": \"many\"}").unwrap_err();
        assert!(problem.contains("/total"), "{problem}");
        assert!(s.check("{}").unwrap_err().contains("total"));
        assert!(OutputSchema::new(json!([1])).is_err());
        assert!(OutputSchema::new(json!({"type": 7})).is_err());
    }
}
