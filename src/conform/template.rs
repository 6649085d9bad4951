//! A control of the target as a template: method, path and body with `{seconds}`,
//! `{ms}`, `{merchant}` and `{on}` filled in when it is sent (docs/conform.md).

use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// A request to one of the target's test endpoints: `method` (default POST), `path` and
/// `body`, where `{seconds}`, `{ms}`, `{merchant}` and `{on}` are filled in (a string
/// that is one placeholder alone becomes its JSON value: `{"seconds":"{seconds}"}` sends
/// `{"seconds":90}`). A plain string is a path POSTed with `{"by":"{ms}ms"}` (the
/// sandbox's clock).
#[derive(Clone, Debug, Deserialize)]
#[serde(from = "TemplateForm")]
pub struct Template {
    pub method: Option<String>,
    pub path: String,
    pub body: Option<Value>,
}

#[derive(Deserialize)]
#[serde(untagged, deny_unknown_fields)]
enum TemplateForm {
    Path(String),
    Full {
        method: Option<String>,
        path: String,
        body: Option<Value>,
    },
}

impl From<TemplateForm> for Template {
    fn from(f: TemplateForm) -> Template {
        match f {
            TemplateForm::Path(path) => Template {
                method: None,
                path,
                body: Some(serde_json::json!({"by": "{ms}ms"})),
            },
            TemplateForm::Full { method, path, body } => Template { method, path, body },
        }
    }
}

/// What fills a template's placeholders: each of [`PLACEHOLDERS`] it names, with its value.
pub type Fill = BTreeMap<&'static str, Value>;

/// The placeholders a template may hold.
pub const PLACEHOLDERS: [&str; 4] = ["seconds", "ms", "merchant", "on"];

/// `s` with each placeholder `fill` names replaced by its value.
fn text(fill: &Fill, s: &str) -> String {
    let mut out = s.to_owned();
    for (p, v) in fill {
        let v = match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        out = out.replace(&format!("{{{p}}}"), &v);
    }
    out
}

/// `v` with `fill`'s values: a string that is one placeholder alone becomes its value.
fn json(fill: &Fill, v: &Value) -> Value {
    match v {
        Value::String(s) => {
            let whole = s.strip_prefix('{').and_then(|r| r.strip_suffix('}'));
            let whole = whole.and_then(|name| fill.get(name)).cloned();
            whole.unwrap_or_else(|| Value::String(text(fill, s)))
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| json(fill, x)).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| (text(fill, k), json(fill, x)))
                .collect(),
        ),
        other => other.clone(),
    }
}

impl Template {
    /// Method, path and body with `fill`'s values.
    pub fn render(&self, fill: &Fill) -> (String, String, Option<String>) {
        (
            self.method.clone().unwrap_or_else(|| "POST".into()),
            text(fill, &self.path),
            self.body.as_ref().map(|b| json(fill, b).to_string()),
        )
    }

    /// The first placeholder it holds that is not one of [`PLACEHOLDERS`].
    pub(super) fn unknown_placeholder(&self) -> Option<String> {
        let mut texts = vec![self.path.clone()];
        if let Some(b) = &self.body {
            texts.push(b.to_string());
        }
        texts.iter().find_map(|t| {
            t.split('{').skip(1).find_map(|rest| {
                let name = rest.split('}').next()?;
                let ident =
                    !name.is_empty() && name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_');
                (ident && !PLACEHOLDERS.contains(&name)).then(|| format!("{{{name}}}"))
            })
        })
    }
}
