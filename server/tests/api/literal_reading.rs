//! Reading a project literally, over real gRPC and a real PostgreSQL: once
//! the project's people have split enough patterns by the names their
//! messages quote, and corrected none against it, RemineProject turns the
//! project literal. Its patterns split by name, and later captures keep
//! names apart. One such split, or one correction against it, leaves the
//! project read as captured.

use lore_proto::v1 as proto;
use lore_proto::v1::qa_learning_service_client::QaLearningServiceClient;
use lore_server::testing::TestServer;
use tonic::transport::Channel;
use uuid::Uuid;

/// Kinds of failure whose messages end with a quoted name.
const KINDS: [&str; 5] = [
    "ModuleNotFoundError: No module named",
    "sqlite3.OperationalError: no such table:",
    "rm: cannot remove",
    "KeyError: missing setting",
    "django.core.exceptions.FieldError: Unknown field",
];

async fn capture(qa: &mut QaLearningServiceClient<Channel>, project: &str, message: &str) -> String {
    super::grouping_masks::capture(qa, project, message).await.pattern_id
}

async fn remine(qa: &mut QaLearningServiceClient<Channel>, project: &str) -> proto::RemineProjectResponse {
    qa.remine_project(proto::RemineProjectRequest { project: project.into(), window: 0 }).await.unwrap().into_inner()
}

/// A person splits the occurrences of `pattern` whose message ends with
/// `ending` into a pattern of their own.
async fn split(qa: &mut QaLearningServiceClient<Channel>, pattern: &str, ending: &str) -> String {
    let occurrences = qa
        .get_pattern(proto::GetPatternRequest { pattern_id: pattern.to_owned(), occurrence_limit: 0 })
        .await
        .unwrap()
        .into_inner()
        .occurrences;
    let moved: Vec<String> = occurrences
        .iter()
        .filter(|occurrence| occurrence.link.as_ref().unwrap().message.ends_with(ending))
        .map(|occurrence| occurrence.occurrence_id.clone())
        .collect();
    assert!(!moved.is_empty(), "no occurrence of {pattern} ends with {ending}");
    let request = proto::SplitPatternRequest {
        pattern_id: pattern.to_owned(),
        occurrence_ids: moved,
        new_name: String::new(),
        reason: "the agent's own module is another failure".into(),
        split_id: Uuid::now_v7().to_string(),
    };
    qa.split_pattern(request).await.unwrap().into_inner().split.unwrap().pattern_id
}

/// Each kind captured with two names, `'psycopg'` twice and the agent's
/// own `'reproduce_app'` three times, and a sixth kind no one corrects;
/// returns each kind's pattern (capture puts a kind's names in one).
async fn capture_kinds(qa: &mut QaLearningServiceClient<Channel>, project: &str) -> Vec<String> {
    let mut patterns = Vec::new();
    for kind in KINDS {
        let mut held = Vec::new();
        for name in ["psycopg", "psycopg", "reproduce_app", "reproduce_app", "reproduce_app"] {
            held.push(capture(qa, project, &format!("{kind} '{name}'")).await);
        }
        held.dedup();
        assert_eq!(held.len(), 1, "capture reads the quoted name as a variable: {kind}");
        patterns.push(held.remove(0));
    }
    let untouched = capture(qa, project, "ImportError: cannot import name 'alpha'").await;
    assert_eq!(capture(qa, project, "ImportError: cannot import name 'alpha'").await, untouched);
    assert_eq!(capture(qa, project, "ImportError: cannot import name 'beta'").await, untouched);
    patterns
}

#[tokio::test]
async fn people_who_split_four_patterns_by_a_quoted_name_have_their_project_read_literally() {
    let server = TestServer::start().await;
    let mut qa = QaLearningServiceClient::new(server.channel().await);
    let project = "literal";
    let patterns = capture_kinds(&mut qa, project).await;
    let mut own = Vec::new();
    for pattern in &patterns[..4] {
        own.push(split(&mut qa, pattern, "'reproduce_app'").await);
    }

    let done = remine(&mut qa, project).await;
    assert_eq!((done.literal_agreeing, done.literal_against), (4, 0), "{done:?}");
    assert!(done.read_literally, "{done:?}");
    // The kinds no one corrected split by name too.
    assert!(done.splits >= 2, "{done:?}");
    let alpha = capture(&mut qa, project, "ImportError: cannot import name 'alpha'").await;
    let beta = capture(&mut qa, project, "ImportError: cannot import name 'beta'").await;
    assert_ne!(alpha, beta, "read literally, two names are two failures");
    let fifth = capture(&mut qa, project, &format!("{} 'reproduce_app'", KINDS[4])).await;
    assert_ne!(fifth, capture(&mut qa, project, &format!("{} 'psycopg'", KINDS[4])).await);

    // Later captures keep names apart, and follow the person's splits.
    let gamma = capture(&mut qa, project, "ImportError: cannot import name 'gamma'").await;
    assert!(gamma != alpha && gamma != beta, "a new name starts a pattern of its own");
    assert_eq!(capture(&mut qa, project, &format!("{} 'reproduce_app'", KINDS[0])).await, own[0]);
    assert_eq!(capture(&mut qa, project, &format!("{} 'psycopg'", KINDS[0])).await, patterns[0]);
    // A number in a name still varies.
    let second = capture(&mut qa, project, &format!("{} 'psycopg2'", KINDS[0])).await;
    assert_ne!(second, patterns[0]);
    assert_eq!(capture(&mut qa, project, &format!("{} 'psycopg3'", KINDS[0])).await, second);

    // Once read literally, a project stays so, and nothing more splits.
    let again = remine(&mut qa, project).await;
    assert!(again.read_literally, "{again:?}");
    assert_eq!(again.splits, 0, "{again:?}");
    // Brain sees three names where one word stands and would merge them;
    // in a project read literally, that is not even proposed.
    assert_eq!(again.proposed, 0, "{again:?}");
}

#[tokio::test]
async fn one_split_or_one_correction_against_it_leaves_the_project_read_as_captured() {
    let server = TestServer::start().await;
    let mut qa = QaLearningServiceClient::new(server.channel().await);

    // One pattern split by a name is a local judgment.
    let project = "one-split";
    let patterns = capture_kinds(&mut qa, project).await;
    split(&mut qa, &patterns[0], "'reproduce_app'").await;
    let done = remine(&mut qa, project).await;
    assert_eq!((done.literal_agreeing, done.literal_against, done.read_literally), (1, 0, false), "{done:?}");
    let gamma = capture(&mut qa, project, "ImportError: cannot import name 'gamma'").await;
    assert_eq!(gamma, capture(&mut qa, project, "ImportError: cannot import name 'alpha'").await);

    // Four agree, but a person also split a pattern of plain words and
    // left three words together: read literally, those fall apart.
    let project = "one-against";
    let patterns = capture_kinds(&mut qa, project).await;
    for pattern in &patterns[..4] {
        split(&mut qa, pattern, "'reproduce_app'").await;
    }
    let cache = capture(&mut qa, project, "cache miss for key north").await;
    for key in ["south", "east", "west"] {
        assert_eq!(capture(&mut qa, project, &format!("cache miss for key {key}")).await, cache);
    }
    split(&mut qa, &cache, "west").await;
    let done = remine(&mut qa, project).await;
    assert_eq!((done.literal_agreeing, done.literal_against, done.read_literally), (4, 1, false), "{done:?}");
    assert_eq!(
        capture(&mut qa, project, "ImportError: cannot import name 'gamma'").await,
        capture(&mut qa, project, "ImportError: cannot import name 'alpha'").await
    );
}
