//! ListInjections and ListCitedFiles: the ledger's proto <-> domain
//! conversions.

use lore_proto::v1 as proto;

use crate::grpc::convert::{
    FieldError, FieldResult, identifier, optional_timestamp, optional_uuid, project, required_uuid, to_timestamp,
    trust_to_proto,
};
use lore_domain::injections::{
    CallGiven, InjectedItem, Injection, InjectionFilter, ItemKind, Surface, Totals, Withheld,
};
use lore_types::validate::name;

pub fn filter(request: &proto::ListInjectionsRequest) -> FieldResult<InjectionFilter> {
    let agent_id = identifier("agent_id", &request.agent_id, false)?;
    Ok(InjectionFilter {
        project: project("project", &request.project)?,
        session_id: optional_uuid("session_id", &request.session_id)?,
        agent_id: (!agent_id.is_empty()).then_some(agent_id),
        since: optional_timestamp("since", request.since.as_ref())?,
        until: optional_timestamp("until", request.until.as_ref())?,
    })
}

/// What a hook reports it gave with a call.
pub fn call_given(request: &proto::RecordCallInjectionRequest) -> FieldResult<CallGiven> {
    let guard_id = match proto::InjectedKind::try_from(request.kind) {
        Ok(proto::InjectedKind::CallWarning) => None,
        Ok(proto::InjectedKind::Guard) => Some(required_uuid("guard_id", &request.guard_id)?),
        _ => {
            return Err(FieldError::new(
                "kind",
                format!("{} is not INJECTED_KIND_CALL_WARNING or INJECTED_KIND_GUARD", request.kind),
            ));
        }
    };
    let chars = request.chars as usize;
    if chars > CallGiven::MAX_CHARS {
        return Err(FieldError::new(
            "chars",
            format!("{chars} is more than a call's answer holds ({})", CallGiven::MAX_CHARS),
        ));
    }
    Ok(CallGiven {
        injection_id: required_uuid("injection_id", &request.injection_id)?,
        project: project("project", &request.project)?,
        session_id: required_uuid("session_id", &request.session_id)?,
        guard_id,
        shape: name("shape", &request.shape, CallGiven::MAX_SHAPE_CHARS, true)?,
        label: name("label", &request.label, CallGiven::MAX_LABEL_CHARS, false)?,
        chars,
        given_at: optional_timestamp("given_at", request.given_at.as_ref())?.unwrap_or_else(chrono::Utc::now),
    })
}

fn surface_to_proto(surface: Surface) -> proto::InjectionSurface {
    match surface {
        Surface::SessionStart => proto::InjectionSurface::SessionStart,
        Surface::Prompt => proto::InjectionSurface::Prompt,
        Surface::Briefing => proto::InjectionSurface::Briefing,
        Surface::Resume => proto::InjectionSurface::Resume,
        Surface::Search => proto::InjectionSurface::Search,
        Surface::GetEntry => proto::InjectionSurface::GetEntry,
        Surface::Warnings => proto::InjectionSurface::Warnings,
        Surface::Call => proto::InjectionSurface::Call,
    }
}

fn kind_to_proto(kind: ItemKind) -> proto::InjectedKind {
    match kind {
        ItemKind::Lesson => proto::InjectedKind::Lesson,
        ItemKind::Warning => proto::InjectedKind::Warning,
        ItemKind::LastSession => proto::InjectedKind::LastSession,
        ItemKind::SimilarSession => proto::InjectedKind::SimilarSession,
        ItemKind::CallWarning => proto::InjectedKind::CallWarning,
        ItemKind::Guard => proto::InjectedKind::Guard,
    }
}

fn withheld_to_proto(withheld: Option<Withheld>) -> proto::Withheld {
    match withheld {
        None => proto::Withheld::Unspecified,
        Some(Withheld::Quarantined) => proto::Withheld::Quarantined,
        Some(Withheld::Stale) => proto::Withheld::Stale,
        Some(Withheld::OverBudget) => proto::Withheld::OverBudget,
        Some(Withheld::AlreadyGiven) => proto::Withheld::AlreadyGiven,
        Some(Withheld::SessionBudget) => proto::Withheld::SessionBudget,
        Some(Withheld::HeldOut) => proto::Withheld::HeldOut,
        Some(Withheld::AtCall) => proto::Withheld::AtCall,
        Some(Withheld::Unreviewed) => proto::Withheld::Unreviewed,
    }
}

fn count(value: usize) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}

fn item_to_proto(item: &InjectedItem) -> proto::InjectedItem {
    proto::InjectedItem {
        kind: kind_to_proto(item.kind) as i32,
        item_id: item.item_id.to_string(),
        label: item.label.clone(),
        trust: item.trust.map(|trust| trust_to_proto(trust) as i32).unwrap_or_default(),
        chars: count(item.chars),
        tokens: count(item.tokens()),
        score: item.score,
        score_parts: item.score_parts.iter().map(|(name, value)| (name.clone(), *value)).collect(),
        why: item.why.clone(),
        withheld: withheld_to_proto(item.withheld) as i32,
        withheld_reason: item.withheld.map(|why| why.explain().to_owned()).unwrap_or_default(),
    }
}

pub fn injection_to_proto(injection: &Injection) -> proto::Injection {
    proto::Injection {
        injection_id: injection.injection_id.to_string(),
        project: injection.project.clone(),
        session_id: injection.session_id.map(|id| id.to_string()).unwrap_or_default(),
        agent_id: injection.agent_id.clone(),
        task_id: injection.task_id.clone(),
        surface: surface_to_proto(injection.surface) as i32,
        chars: count(injection.chars),
        tokens: count(injection.tokens()),
        items: injection.items.iter().map(item_to_proto).collect(),
        created_at: injection.created_at.map(to_timestamp),
    }
}

pub fn totals_to_proto(totals: &Totals) -> proto::InjectionTotals {
    let unsigned = |value: i64| value.max(0) as u64;
    proto::InjectionTotals {
        injections: unsigned(totals.injections),
        items_shown: unsigned(totals.items_shown),
        items_withheld: unsigned(totals.items_withheld),
        chars: unsigned(totals.chars),
        tokens: unsigned(totals.tokens),
    }
}
