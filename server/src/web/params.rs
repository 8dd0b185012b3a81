//! Query strings and form bodies, read leniently (bad percent-encoding and
//! invalid UTF-8 become replacement characters, NUL bytes are dropped, as
//! the action log drops them) and then checked field by field, so bad input
//! gets an error that names the field instead of a bare 400.

use chrono::{DateTime, NaiveDate, NaiveDateTime, TimeZone as _, Utc};
use uuid::Uuid;

use crate::Error;

/// The fields of a query string or form, in order; a name may repeat.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Params(Vec<(String, String)>);

impl Params {
    pub fn parse(raw: &[u8]) -> Self {
        Self(form_urlencoded::parse(raw).map(|(key, value)| (key.replace('\0', ""), value.replace('\0', ""))).collect())
    }

    pub fn from_query(query: Option<&str>) -> Self {
        Self::parse(query.unwrap_or_default().as_bytes())
    }

    /// The first value of `name`, as sent.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str())
    }

    /// The first value of `name`, trimmed, when it is not empty.
    pub fn text(&self, name: &str) -> Option<&str> {
        self.get(name).map(str::trim).filter(|value| !value.is_empty())
    }

    /// Every non-empty value of `name`.
    pub fn all(&self, name: &str) -> Vec<&str> {
        self.0
            .iter()
            .filter(|(key, value)| key == name && !value.trim().is_empty())
            .map(|(_, value)| value.trim())
            .collect()
    }

    pub fn uuid(&self, name: &str) -> Result<Option<Uuid>, Error> {
        lore_types::validate::optional_uuid(name, self.text(name).unwrap_or_default()).map_err(Error::from)
    }

    /// A time as RFC 3339, as a browser's `datetime-local`, or as a day
    /// (its midnight, UTC).
    pub fn time(&self, name: &str) -> Result<Option<DateTime<Utc>>, Error> {
        let Some(value) = self.text(name) else { return Ok(None) };
        if let Ok(time) = DateTime::parse_from_rfc3339(value) {
            return Ok(Some(time.with_timezone(&Utc)));
        }
        for format in ["%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M"] {
            if let Ok(time) = NaiveDateTime::parse_from_str(value, format) {
                return Ok(Some(Utc.from_utc_datetime(&time)));
            }
        }
        match NaiveDate::parse_from_str(value, "%Y-%m-%d") {
            Ok(day) => Ok(Some(Utc.from_utc_datetime(&day.and_hms_opt(0, 0, 0).expect("midnight exists")))),
            Err(_) => {
                Err(Error::invalid(name, format!("{value:?} is not a time (use 2026-11-24 or 2026-11-24T09:30)")))
            }
        }
    }

    pub fn day(&self, name: &str) -> Result<Option<NaiveDate>, Error> {
        self.text(name)
            .map(|value| {
                NaiveDate::parse_from_str(value, "%Y-%m-%d")
                    .map_err(|_| Error::invalid(name, format!("{value:?} is not a day (use 2026-11-24)")))
            })
            .transpose()
    }

    /// A whole number in `range`.
    pub fn number(&self, name: &str, range: std::ops::RangeInclusive<i64>) -> Result<Option<i64>, Error> {
        let Some(value) = self.text(name) else { return Ok(None) };
        match value.parse::<i64>() {
            Ok(number) if range.contains(&number) => Ok(Some(number)),
            _ => Err(Error::invalid(
                name,
                format!("{value:?} is not a number from {} to {}", range.start(), range.end()),
            )),
        }
    }

    /// One of `choices`, by name.
    pub fn choice<T: Copy>(&self, name: &str, choices: &[(&str, T)]) -> Result<Option<T>, Error> {
        let Some(value) = self.text(name) else { return Ok(None) };
        choices.iter().find(|(choice, _)| *choice == value).map(|(_, parsed)| Some(*parsed)).ok_or_else(|| {
            let names: Vec<&str> = choices.iter().map(|(choice, _)| *choice).collect();
            Error::invalid(name, format!("{value:?} is not one of {}", names.join(", ")))
        })
    }

    /// A review form's required `decision`: `approve` (true) or `reject`.
    pub fn approves(&self) -> Result<bool, Error> {
        self.choice("decision", &[("approve", true), ("reject", false)])?
            .ok_or_else(|| Error::invalid("decision", "required: approve or reject"))
    }

    /// The ids a batch form ticked in `name`: at least one, at most `most`,
    /// each a UUID. `what` names one item in the error ("fix", "lesson").
    pub fn ticked(&self, name: &str, most: usize, what: &str) -> Result<Vec<Uuid>, Error> {
        let ticked = self.all(name);
        if ticked.is_empty() {
            return Err(Error::invalid(name, format!("tick at least one {what} to approve")));
        }
        if ticked.len() > most {
            return Err(Error::invalid(name, format!("at most {most} at once")));
        }
        ticked
            .into_iter()
            .map(|raw| lore_types::validate::required_uuid(name, raw))
            .collect::<Result<Vec<_>, _>>()
            .map_err(Error::from)
    }

    /// The fields whose names are in `keep`, encoded again: a filter carried
    /// from one page to the next.
    pub fn encode_only(&self, keep: &[&str]) -> String {
        let mut encoder = form_urlencoded::Serializer::new(String::new());
        for (key, value) in &self.0 {
            if keep.contains(&key.as_str()) && !value.trim().is_empty() {
                encoder.append_pair(key, value);
            }
        }
        encoder.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_bytes_become_text_and_bad_values_name_their_field() {
        let params = Params::parse(b"q=%FF%00x&when=yesterday&n=7&kind=wrong&id=nope&id=");
        assert_eq!(params.get("q"), Some("\u{FFFD}x"));
        assert!(params.time("when").unwrap_err().to_string().starts_with("when:"));
        assert_eq!(params.number("n", 1..=10).unwrap(), Some(7));
        assert!(params.number("n", 1..=5).is_err());
        assert!(params.choice("kind", &[("a", 1)]).unwrap_err().to_string().contains("one of a"));
        assert!(params.uuid("id").unwrap_err().to_string().starts_with("id:"));
        assert_eq!(params.encode_only(&["n", "q"]), "q=%EF%BF%BDx&n=7");
    }

    #[test]
    fn times_come_in_three_shapes() {
        let params = Params::parse(b"a=2026-11-24T09:30&b=2026-11-24&c=2026-11-24T09:30:00Z");
        let expected = Utc.with_ymd_and_hms(2026, 11, 24, 9, 30, 0).unwrap();
        assert_eq!(params.time("a").unwrap(), Some(expected));
        assert_eq!(params.time("c").unwrap(), Some(expected));
        assert_eq!(params.time("b").unwrap(), Some(Utc.with_ymd_and_hms(2026, 11, 24, 0, 0, 0).unwrap()));
    }
}
