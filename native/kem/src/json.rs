//! A small JSON writer for the records the binary hands to the pipeline (no serde: the
//! build stays small).

use std::fmt::Write;

pub enum Json {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    pub fn object(pairs: Vec<(&str, Json)>) -> Json {
        Json::Object(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
    }

    pub fn str(s: impl Into<String>) -> Json {
        Json::Str(s.into())
    }

    pub fn opt_str(s: Option<impl Into<String>>) -> Json {
        s.map(|s| Json::Str(s.into())).unwrap_or(Json::Null)
    }

    pub fn opt_float(x: Option<f64>) -> Json {
        x.map(Json::Float).unwrap_or(Json::Null)
    }

    pub fn uints(values: &[u64]) -> Json {
        Json::Array(values.iter().map(|&v| Json::Int(v as i128)).collect())
    }

    pub fn render(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Int(i) => write!(out, "{i}").unwrap(),
            Json::Float(x) if x.is_finite() => write!(out, "{x:?}").unwrap(),
            Json::Float(_) => out.push_str("null"),
            Json::Str(s) => {
                out.push('"');
                for c in s.chars() {
                    match c {
                        '"' => out.push_str("\\\""),
                        '\\' => out.push_str("\\\\"),
                        '\n' => out.push_str("\\n"),
                        '\r' => out.push_str("\\r"),
                        '\t' => out.push_str("\\t"),
                        c if (c as u32) < 0x20 => write!(out, "\\u{:04x}", c as u32).unwrap(),
                        c => out.push(c),
                    }
                }
                out.push('"');
            }
            Json::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write(out);
                }
                out.push(']');
            }
            Json::Object(pairs) => {
                out.push('{');
                for (i, (k, v)) in pairs.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    Json::Str(k.clone()).write(out);
                    out.push(':');
                    v.write(out);
                }
                out.push('}');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_valid_json() {
        let j = Json::object(vec![
            ("a", Json::Int(-3)),
            ("b", Json::str("x\"y\n\u{1}")),
            (
                "c",
                Json::Array(vec![
                    Json::Null,
                    Json::Bool(true),
                    Json::Float(0.5),
                    Json::Float(f64::NAN),
                ]),
            ),
        ]);
        assert_eq!(j.render(), r#"{"a":-3,"b":"x\"y\n\u0001","c":[null,true,0.5,null]}"#);
    }
}
