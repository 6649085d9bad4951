//! A control of the target as a template: method, path and body with `{seconds}`,
//! `{ms}`, `{merchant}` and `{on}` filled in when it is sent (docs/conform.md).

use serde::Deserialize;

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
    pub body: Option<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(untagged, deny_unknown_fields)]
enum TemplateForm {
    Path(String),
    Full {
        method: Option<String>,
        path: String,
        body: Option<serde_json::Value>,
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

/// What fills a template's placeholders.
#[derive(Clone, Debug, Default)]
pub struct Fill {
    pub seconds: Option<u64>,
    pub ms: Option<u64>,
    pub merchant: Option<String>,
    pub on: Option<bool>,
}

/// The placeholders a template may hold.
pub const PLACEHOLDERS: [&str; 4] = ["seconds", "ms", "merchant", "on"];

impl Fill {
    fn value(&self, name: &str) -> Option<serde_json::Value> {
        match name {
            "seconds" => self.seconds.map(Into::into),
            "ms" => self.ms.map(Into::into),
            "merchant" => self.merchant.clone().map(Into::into),
            "on" => self.on.map(Into::into),
            _ => None,
        }
    }

    fn text(&self, s: &str) -> String {
        let mut out = s.to_owned();
        for p in PLACEHOLDERS {
            if let Some(v) = self.value(p) {
                let v = match v {
                    serde_json::Value::String(s) => s,
                    other => other.to_string(),
                };
                out = out.replace(&format!("{{{p}}}"), &v);
            }
        }
        out
    }

    fn json(&self, v: &serde_json::Value) -> serde_json::Value {
        use serde_json::Value;
        match v {
            Value::String(s) => {
                let whole = s
                    .strip_prefix('{')
                    .and_then(|r| r.strip_suffix('}'))
                    .and_then(|name| self.value(name));
                whole.unwrap_or_else(|| Value::String(self.text(s)))
            }
            Value::Array(a) => Value::Array(a.iter().map(|x| self.json(x)).collect()),
            Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, x)| (self.text(k), self.json(x)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

impl Template {
    /// Method, path and body with `fill`'s values.
    pub fn render(&self, fill: &Fill) -> (String, String, Option<String>) {
        (
            self.method.clone().unwrap_or_else(|| "POST".into()),
            fill.text(&self.path),
            self.body.as_ref().map(|b| fill.json(b).to_string()),
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
