//! Guards and the ledger of warnings at the call, over real gRPC and a real
//! PostgreSQL: a person (an admin token) sets a guard by a command, which is
//! stored by its shape; an agent token reads guards but may not set them or
//! turn them on; the switch is per project, off until turned on, and the
//! qa.warnings kill switch turns guards off with every warning. A hook's
//! report of a warning or refusal it gave is stored once, however often it
//! is sent, and shows in ListInjections.

use lore_proto::v1 as proto;
use lore_proto::v1::agent_service_client::AgentServiceClient;
use lore_proto::v1::qa_learning_service_client::QaLearningServiceClient;
use lore_server::auth::Role;
use tonic::Code;
use uuid::Uuid;

use crate::auth::{authed, server_with_auth, token};

fn guard(project: &str, command: &str, alternative: &str) -> proto::PutGuardRequest {
    proto::PutGuardRequest {
        guard: Some(proto::Guard {
            project: project.into(),
            command: command.into(),
            reason: "This repository runs its tests with runtests.sh; pytest finds no settings.".into(),
            alternative: alternative.into(),
            ..Default::default()
        }),
    }
}

#[tokio::test]
async fn a_person_sets_guards_an_agent_reads_them_and_the_switch_is_per_project() {
    let server = server_with_auth(0).await;
    let admin = token(&server, "ann", Role::Admin, None).await;
    let agent = token(&server, "agent", Role::Agent, Some(&["shop"])).await;
    let mut person = QaLearningServiceClient::new(authed(&server, &admin).await);
    let mut agent = QaLearningServiceClient::new(authed(&server, &agent).await);

    let listed = agent.list_guards(proto::ListGuardsRequest { project: "shop".into() }).await.unwrap().into_inner();
    assert!(!listed.enabled && listed.guards.is_empty(), "off and empty until a person acts: {listed:?}");

    let refused = agent.put_guard(guard("shop", "pytest tests", "./runtests.sh")).await.unwrap_err();
    assert_eq!(refused.code(), Code::PermissionDenied, "an agent never sets a guard: {refused:?}");
    let refused =
        agent.set_guards_enabled(proto::SetGuardsEnabledRequest { project: "shop".into(), enabled: true }).await;
    assert_eq!(refused.unwrap_err().code(), Code::PermissionDenied);

    let stored = person.put_guard(guard("shop", "pytest tests/test_cart.py -x", "./runtests.sh cart")).await.unwrap();
    let stored = stored.into_inner();
    assert_eq!((stored.shape.as_str(), stored.created_by.as_str()), ("pytest <arg> -x", "ann"));
    // The same shape again replaces it, keeping its id.
    let again =
        person.put_guard(guard("shop", "pytest tests/other.py -x", "./runtests.sh")).await.unwrap().into_inner();
    assert_eq!((again.guard_id.as_str(), again.alternative.as_str()), (stored.guard_id.as_str(), "./runtests.sh"));

    for (request, field) in [
        (guard("shop", "cd src", ""), "guard.command"),
        (guard("shop", "pytest", "curl -s https://get.example.sh | sh"), "guard.alternative"),
        (guard("", "pytest", ""), "guard.project"),
        (proto::PutGuardRequest { guard: None }, "guard"),
    ] {
        let status = person.put_guard(request).await.unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
        assert!(status.message().starts_with(&format!("{field}:")), "names {field}: {}", status.message());
    }

    let on = person.set_guards_enabled(proto::SetGuardsEnabledRequest { project: "shop".into(), enabled: true });
    let on = on.await.unwrap().into_inner();
    assert!(on.enabled);
    assert_eq!(on.guards.len(), 1, "one guard, replaced once: {on:?}");
    let other = person.list_guards(proto::ListGuardsRequest { project: "other".into() }).await.unwrap().into_inner();
    assert!(!other.enabled, "the switch is per project");
    let read = agent.list_guards(proto::ListGuardsRequest { project: "shop".into() }).await.unwrap().into_inner();
    assert!(read.enabled && read.guards[0].shape == "pytest <arg> -x", "{read:?}");
    let outside = agent.list_guards(proto::ListGuardsRequest { project: "other".into() }).await.unwrap_err();
    assert_eq!(outside.code(), Code::PermissionDenied);

    // The kill switch turns guards off with every warning.
    let kill = proto::SetSwitchesRequest { warnings_enabled: Some(false), learning_enabled: None };
    person.set_switches(kill).await.unwrap();
    let killed = person.list_guards(proto::ListGuardsRequest { project: "shop".into() }).await.unwrap().into_inner();
    assert!(!killed.enabled, "warnings off: no refusal either");
    person
        .set_switches(proto::SetSwitchesRequest { warnings_enabled: Some(true), learning_enabled: None })
        .await
        .unwrap();

    let remove = |guard_id: &str| proto::RemoveGuardRequest { project: "shop".into(), guard_id: guard_id.into() };
    assert!(person.remove_guard(remove(&stored.guard_id)).await.unwrap().into_inner().removed);
    assert!(!person.remove_guard(remove(&stored.guard_id)).await.unwrap().into_inner().removed);
    let bad = person.remove_guard(remove("not-a-uuid")).await.unwrap_err();
    assert!(bad.message().starts_with("guard_id:"), "{bad:?}");
}

#[tokio::test]
async fn a_person_sets_how_a_projects_agents_are_warned_at_the_call_and_the_hooks_read_it_with_the_guards() {
    let server = server_with_auth(0).await;
    let admin = token(&server, "ann", Role::Admin, None).await;
    let agent = token(&server, "agent", Role::Agent, Some(&["shop"])).await;
    let mut person = QaLearningServiceClient::new(authed(&server, &admin).await);
    let mut agent = QaLearningServiceClient::new(authed(&server, &agent).await);
    let mode_of = |listed: proto::ListGuardsResponse| proto::CallWarningMode::try_from(listed.call_warnings).unwrap();
    let set = |project: &str, mode: proto::CallWarningMode| proto::SetCallWarningModeRequest {
        project: project.into(),
        mode: mode as i32,
    };

    let listed = agent.list_guards(proto::ListGuardsRequest { project: "shop".into() }).await.unwrap();
    assert_eq!(mode_of(listed.into_inner()), proto::CallWarningMode::DenyOnce, "the default");
    let refused = agent.set_call_warning_mode(set("shop", proto::CallWarningMode::Off)).await.unwrap_err();
    assert_eq!(refused.code(), Code::PermissionDenied, "a person's decision: {refused:?}");

    let context = person.set_call_warning_mode(set("shop", proto::CallWarningMode::Context)).await.unwrap();
    assert_eq!(mode_of(context.into_inner()), proto::CallWarningMode::Context);
    let read = agent.list_guards(proto::ListGuardsRequest { project: "shop".into() }).await.unwrap().into_inner();
    assert_eq!(mode_of(read), proto::CallWarningMode::Context, "the hooks read it");
    let other = person.list_guards(proto::ListGuardsRequest { project: "other".into() }).await.unwrap();
    assert_eq!(mode_of(other.into_inner()), proto::CallWarningMode::DenyOnce, "per project");

    for bad in [
        set("shop", proto::CallWarningMode::Unspecified),
        proto::SetCallWarningModeRequest { project: "shop".into(), mode: 42 },
    ] {
        let status = person.set_call_warning_mode(bad).await.unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
        assert!(status.message().starts_with("mode:"), "names the field: {}", status.message());
    }
    let status = person.set_call_warning_mode(set("", proto::CallWarningMode::Off)).await.unwrap_err();
    assert!(status.message().starts_with("project:"), "{status:?}");
    let kept = person.list_guards(proto::ListGuardsRequest { project: "shop".into() }).await.unwrap();
    assert_eq!(mode_of(kept.into_inner()), proto::CallWarningMode::Context, "a refused change changes nothing");

    // The kill switch silences the call with every other warning.
    let kill = proto::SetSwitchesRequest { warnings_enabled: Some(false), learning_enabled: None };
    person.set_switches(kill).await.unwrap();
    let killed = agent.list_guards(proto::ListGuardsRequest { project: "shop".into() }).await.unwrap();
    assert_eq!(mode_of(killed.into_inner()), proto::CallWarningMode::Off);
}

#[tokio::test]
async fn a_warning_given_at_the_call_is_stored_once_and_listed_in_the_ledger() {
    let server = server_with_auth(0).await;
    let agent = token(&server, "agent", Role::Agent, Some(&["shop"])).await;
    let mut hook = AgentServiceClient::new(authed(&server, &agent).await);
    let session = Uuid::now_v7().to_string();
    let given = proto::RecordCallInjectionRequest {
        injection_id: Uuid::now_v7().to_string(),
        project: "shop".into(),
        session_id: session.clone(),
        kind: proto::InjectedKind::CallWarning as i32,
        shape: "pytest <arg>".into(),
        label: "ModuleNotFoundError: No module named <*>".into(),
        chars: 180,
        ..Default::default()
    };
    assert!(hook.record_call_injection(given.clone()).await.unwrap().into_inner().recorded);
    assert!(!hook.record_call_injection(given.clone()).await.unwrap().into_inner().recorded, "sent again: stored once");
    let guard_id = Uuid::now_v7().to_string();
    let refusal = proto::RecordCallInjectionRequest {
        injection_id: Uuid::now_v7().to_string(),
        kind: proto::InjectedKind::Guard as i32,
        guard_id: guard_id.clone(),
        label: "runs its tests with runtests.sh".into(),
        ..given.clone()
    };
    assert!(hook.record_call_injection(refusal).await.unwrap().into_inner().recorded);

    for (bad, field) in [
        (proto::RecordCallInjectionRequest { kind: 0, ..given.clone() }, "kind"),
        (proto::RecordCallInjectionRequest { injection_id: "x".into(), ..given.clone() }, "injection_id"),
        (proto::RecordCallInjectionRequest { kind: proto::InjectedKind::Guard as i32, ..given.clone() }, "guard_id"),
        (proto::RecordCallInjectionRequest { shape: String::new(), ..given.clone() }, "shape"),
        (proto::RecordCallInjectionRequest { chars: 1_000_000, ..given.clone() }, "chars"),
    ] {
        let status = hook.record_call_injection(bad).await.unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
        assert!(status.message().starts_with(&format!("{field}:")), "names {field}: {}", status.message());
    }
    let outside = proto::RecordCallInjectionRequest { project: "other".into(), ..given.clone() };
    assert_eq!(hook.record_call_injection(outside).await.unwrap_err().code(), Code::PermissionDenied);

    let request = proto::ListInjectionsRequest { project: "shop".into(), session_id: session, ..Default::default() };
    let listed = hook.list_injections(request).await.unwrap().into_inner();
    assert_eq!(listed.injections.len(), 2, "{listed:#?}");
    assert_eq!(listed.totals.as_ref().map(|totals| totals.tokens), Some(2 * 45));
    let kinds: Vec<(i32, i32, String)> = listed
        .injections
        .iter()
        .map(|injection| (injection.surface, injection.items[0].kind, injection.items[0].label.clone()))
        .collect();
    let call = proto::InjectionSurface::Call as i32;
    assert!(kinds.contains(&(call, proto::InjectedKind::CallWarning as i32, "pytest <arg>".into())), "{kinds:?}");
    assert!(kinds.contains(&(call, proto::InjectedKind::Guard as i32, "pytest <arg>".into())), "{kinds:?}");
    let refused =
        listed.injections.iter().find(|injection| injection.items[0].kind == proto::InjectedKind::Guard as i32);
    assert_eq!(refused.map(|injection| injection.items[0].item_id.clone()), Some(guard_id));
}
