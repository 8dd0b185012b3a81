use super::*;

#[test]
fn a_task_query_is_its_words_and_file_names_and_nothing_without_them() {
    let task = BriefTask {
        title: "Fix the divide bug".into(),
        labels: vec!["main".into()],
        files: vec!["src/calc.py".into(), "tests/test_calc.py".into(), "Makefile".into()],
        ..BriefTask::default()
    };
    assert_eq!(task_query(&task).unwrap(), "Fix the divide bug\nmain\ncalc\ntest_calc\nMakefile");
    assert_eq!(task_query(&BriefTask::default()), None);
    let blank = BriefTask { title: "  ".into(), labels: vec![String::new()], ..BriefTask::default() };
    assert_eq!(task_query(&blank), None);
}

#[test]
fn a_long_description_is_cut_on_a_character_boundary() {
    let task = BriefTask { description: "é".repeat(5_000), ..BriefTask::default() };
    let query = task_query(&task).unwrap();
    assert_eq!(query.chars().count(), MAX_QUERY_CHARS);
}

#[test]
fn warnings_without_a_task_id_count_against_the_session() {
    let session = Uuid::now_v7();
    let request = BriefRequest {
        project: "p".into(),
        agent_id: Some("a".into()),
        session_id: Some(session),
        task: BriefTask::default(),
        budget_chars: None,
        max_lessons: 5,
        max_warnings: 5,
        omit_given: false,
        omit_last_session: false,
        surface: crate::injections::Surface::Briefing,
        missing_files: Vec::new(),
        at_call: Vec::new(),
        frequent_failures: Vec::new(),
    };
    assert_eq!(default_task_id(&request), format!("session:{session}"));
    assert_eq!(default_task_id(&BriefRequest { session_id: None, ..request.clone() }), "agent:a");
}

#[test]
fn pick_keeps_the_chosen_in_order() {
    assert_eq!(pick(vec!['a', 'b', 'c', 'd'], &[0, 2, 3]), vec!['a', 'c', 'd']);
    assert_eq!(pick(vec!['a'], &[]), Vec::<char>::new());
}
