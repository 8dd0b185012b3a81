use serde_json::json;

use super::*;

fn object(value: Value) -> JsonObject {
    value.as_object().cloned().unwrap()
}

#[test]
fn bad_arguments_name_their_field() {
    let missing = parse::<search_lessons::SearchArgs>(object(json!({}))).unwrap_err();
    assert_eq!(missing.to_string(), "query: missing field `query`");
    let unknown = parse::<search_lessons::SearchArgs>(object(json!({"query": "x", "lmit": 3}))).unwrap_err();
    assert!(unknown.to_string().starts_with("lmit: unknown field `lmit`"), "{unknown}");
    let wrong_type = parse::<search_lessons::SearchArgs>(object(json!({"query": "x", "limit": "five"}))).unwrap_err();
    assert!(wrong_type.to_string().starts_with("limit: invalid type"), "{wrong_type}");
    let wrong_enum = parse::<search_lessons::SearchArgs>(object(json!({"query": "x", "mode": "fuzzy"}))).unwrap_err();
    assert!(wrong_enum.to_string().starts_with("mode: unknown variant `fuzzy`"), "{wrong_enum}");
    let nested = parse::<briefing::BriefingArgs>(object(json!({"files": ["a", 3]}))).unwrap_err();
    assert!(nested.to_string().starts_with("files[1]: invalid type"), "{nested}");
}

#[test]
fn every_tool_has_an_object_schema_and_closed_sets_are_enums() {
    let mut names: Vec<&str> = TOOLS.iter().map(|tool| tool.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), TOOLS.len(), "tool names are distinct");
    for tool in TOOLS {
        let definition = tool.definition();
        assert_eq!(definition.input_schema.get("type"), Some(&json!("object")), "{}", tool.name);
        assert!(definition.description.as_ref().is_some_and(|text| text.len() > 80), "{}", tool.name);
        assert_eq!(ToolSpec::find(tool.name).map(|found| found.name), Some(tool.name));
    }
    let search = serde_json::to_string(&*search_lessons::TOOL.definition().input_schema).unwrap();
    assert!(search.contains("\"hybrid\"") && search.contains("\"semantic\""), "{search}");
    let log = serde_json::to_string(&*log_action::TOOL.definition().input_schema).unwrap();
    assert!(log.contains("\"in_progress\""), "{log}");
    let read_only: Vec<&str> = TOOLS.iter().filter(|tool| tool.read_only).map(|tool| tool.name).collect();
    assert_eq!(read_only, ["briefing", "search_lessons", "triage", "get_lesson", "resume"]);
}
