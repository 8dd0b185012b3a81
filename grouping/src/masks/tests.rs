use super::*;

fn spec(name: &str, pattern: &str) -> MaskSpec {
    MaskSpec { name: name.into(), pattern: pattern.into() }
}

#[test]
fn every_match_is_replaced_and_nothing_else() {
    let masks = Masks::compile(&[spec("service", r"svc-[a-z]+"), spec("job", r"job#\w+")]).unwrap();
    assert_eq!(masks.apply("svc-billing and svc-search ran job#q7x", "<*>"), "<*> and <*> ran <*>");
    assert!(matches!(masks.apply("nothing to mask", "<*>"), Cow::Borrowed(_)));
    assert_eq!(Masks::none().apply("svc-billing", "<*>"), "svc-billing");
    // The replacement is text, not a group reference.
    assert_eq!(Masks::compile(&[spec("dollar", "x+")]).unwrap().apply("axxb", "$1"), "a$1b");
}

#[test]
fn bad_masks_are_refused_naming_the_field() {
    let error = |name: &str, pattern: &str| spec(name, pattern).compile().unwrap_err();
    assert_eq!(error("", "x").field, "name");
    assert_eq!(error("has space", "x").field, "name");
    assert_eq!(error(&"n".repeat(MAX_NAME_CHARS + 1), "x").field, "name");
    let unclosed = error("ok", "svc-(");
    assert_eq!(unclosed.field, "pattern");
    assert!(unclosed.message.starts_with("not a valid regular expression"), "{}", unclosed.message);
    assert!(error("ok", "a*").message.contains("empty text"));
    assert!(error("ok", "").message.contains("required"));
    assert_eq!(error("ok", &"a".repeat(MAX_PATTERN_CHARS + 1)).field, "pattern");
    assert_eq!(error("ok", r"\w{1000}\w{1000}\w{1000}").field, "pattern", "over the compiled size limit");
    let too_many: Vec<MaskSpec> = (0..=MAX_MASKS).map(|index| spec(&format!("m{index}"), "x+")).collect();
    assert!(Masks::compile(&too_many).unwrap_err().message.contains("at most"));
}
