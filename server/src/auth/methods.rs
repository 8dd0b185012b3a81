//! Which access each method needs. Every method of the Lore services is
//! listed (a test checks it against the descriptor set); a method missing
//! here is refused, whatever the role.

pub use lore_types::tokens::Access;

const ACTIONS: &str = "/lore.v1.ActionService/";
const KNOWLEDGE: &str = "/lore.v1.KnowledgeService/";
const QA: &str = "/lore.v1.QaLearningService/";
const AGENT: &str = "/lore.v1.AgentService/";

/// (service path prefix, method, access).
const METHODS: &[(&str, &str, Access)] = &[
    (ACTIONS, "StartSession", Access::Ingest),
    (ACTIONS, "Heartbeat", Access::Ingest),
    (ACTIONS, "EndSession", Access::Ingest),
    (ACTIONS, "LogAction", Access::Ingest),
    (ACTIONS, "Ingest", Access::Ingest),
    (ACTIONS, "GetLastSession", Access::Read),
    (ACTIONS, "GetRecentActions", Access::Read),
    (ACTIONS, "SearchActions", Access::Read),
    (ACTIONS, "ActivityReport", Access::Read),
    (ACTIONS, "PeriodicReport", Access::Read),
    (ACTIONS, "ListPeriodicReports", Access::Read),
    (ACTIONS, "Resume", Access::Read),
    (ACTIONS, "Export", Access::Read),
    (ACTIONS, "VerifyChain", Access::Read),
    (ACTIONS, "GetRetentionStatus", Access::Read),
    (ACTIONS, "RunRetention", Access::Admin),
    (KNOWLEDGE, "UpsertEntry", Access::Write),
    (KNOWLEDGE, "GetEntry", Access::Read),
    (KNOWLEDGE, "ListEntries", Access::Read),
    (KNOWLEDGE, "DeleteEntry", Access::Admin),
    (KNOWLEDGE, "EraseEntry", Access::Admin),
    (KNOWLEDGE, "RecordOccurrence", Access::Write),
    (KNOWLEDGE, "RecordApplication", Access::Write),
    (KNOWLEDGE, "Search", Access::Read),
    (KNOWLEDGE, "SearchMany", Access::Read),
    // Markdown folders are pushed from where they live (a sidecar's --index,
    // `lore index push` in CI) with an agent's token, as UpsertEntry is; the
    // text is screened before any agent reads it.
    (KNOWLEDGE, "IndexDocument", Access::Write),
    (KNOWLEDGE, "RemoveDocument", Access::Write),
    (KNOWLEDGE, "GetIndexStatus", Access::Read),
    (KNOWLEDGE, "ListSynonyms", Access::Read),
    (KNOWLEDGE, "PutSynonym", Access::Admin),
    (KNOWLEDGE, "DeleteSynonym", Access::Admin),
    (KNOWLEDGE, "ListCategoryRelations", Access::Read),
    (KNOWLEDGE, "PutCategoryRelation", Access::Admin),
    (KNOWLEDGE, "DeleteCategoryRelation", Access::Admin),
    (KNOWLEDGE, "CreateDraft", Access::Write),
    (KNOWLEDGE, "GetDraft", Access::Read),
    (KNOWLEDGE, "ListDrafts", Access::Read),
    (KNOWLEDGE, "ReviewDraft", Access::Admin),
    // The queue holds agents' unreviewed words: a person reads them, no agent.
    (KNOWLEDGE, "ListEntriesToReview", Access::Admin),
    (KNOWLEDGE, "ReviewEntry", Access::Admin),
    (QA, "CaptureFailure", Access::Write),
    (QA, "RecordFixAttempt", Access::Write),
    // Read access: warnings are what an agent asks before a task; the
    // deliveries it records are bookkeeping, not the caller's data.
    (QA, "GetWarnings", Access::Read),
    (QA, "RecordOutcome", Access::Write),
    (QA, "RecordTaskResult", Access::Write),
    (QA, "ListPatterns", Access::Read),
    (QA, "GetPattern", Access::Read),
    (QA, "UpdatePattern", Access::Admin),
    (QA, "ListFixesToReview", Access::Admin),
    (QA, "ReviewFix", Access::Admin),
    (QA, "MergePatterns", Access::Admin),
    (QA, "SplitPattern", Access::Admin),
    (QA, "RemineProject", Access::Admin),
    (QA, "ListRegroupingProposals", Access::Read),
    (QA, "DecideRegroupingProposal", Access::Admin),
    (QA, "ListGroupingMasks", Access::Read),
    (QA, "PutGroupingMask", Access::Admin),
    (QA, "DeleteGroupingMask", Access::Admin),
    (QA, "ListMaskProposals", Access::Read),
    (QA, "DecideMaskProposal", Access::Admin),
    (QA, "Dashboard", Access::Read),
    (QA, "ListPromotionCandidates", Access::Read),
    (QA, "ProposePromotion", Access::Admin),
    (QA, "ListPromotions", Access::Read),
    (QA, "StandingInstructions", Access::Read),
    (QA, "ApprovePromotion", Access::Admin),
    (QA, "RejectPromotion", Access::Admin),
    (QA, "RollbackPromotion", Access::Admin),
    (QA, "ListCategoryRules", Access::Read),
    (QA, "UpsertCategoryRule", Access::Admin),
    (QA, "GetSwitches", Access::Read),
    (QA, "HotSpots", Access::Read),
    (QA, "SetSwitches", Access::Admin),
    // A guard is a person's word: agents read guards, only people set them.
    (QA, "ListGuards", Access::Read),
    (QA, "PutGuard", Access::Admin),
    (QA, "RemoveGuard", Access::Admin),
    (QA, "SetGuardsEnabled", Access::Admin),
    (QA, "SetCallWarningMode", Access::Admin),
    // An agent's own bookkeeping about what it was shown, as RecordOutcome.
    (QA, "AcknowledgeWarning", Access::Write),
    // Read access, as GetWarnings: a briefing is what an agent reads before
    // a task; what it records (deliveries, what was shown) is bookkeeping.
    (AGENT, "Brief", Access::Read),
    // Reading the queue shows what was held (to people, escaped); deciding
    // is curation.
    (AGENT, "ListQuarantined", Access::Read),
    (AGENT, "ListInjections", Access::Read),
    (AGENT, "ListCitedFiles", Access::Read),
    // A hook's bookkeeping of what it gave with a call, as Brief's.
    (AGENT, "RecordCallInjection", Access::Write),
    (AGENT, "ReleaseQuarantined", Access::Admin),
    (AGENT, "EraseQuarantined", Access::Admin),
];

/// The access `path` (`/package.Service/Method`) needs; `None` for a
/// method that is not in the table.
pub fn method_access(path: &str) -> Option<Access> {
    METHODS.iter().find(|(service, method, _)| path.strip_prefix(service) == Some(method)).map(|&(_, _, access)| access)
}

/// Streams that can stay open for hours: their token is checked again
/// while they run.
pub(super) fn is_long_lived(path: &str) -> bool {
    matches!(path, "/lore.v1.ActionService/Ingest" | "/lore.v1.ActionService/Resume" | "/lore.v1.ActionService/Export")
}

/// Health and reflection answer without a token: Kubernetes probes and
/// grpcurl's `list`/`describe` reveal no project data.
pub(super) fn is_open(path: &str) -> bool {
    path.starts_with("/grpc.health.v1.Health/")
        || path.starts_with("/grpc.reflection.v1.ServerReflection/")
        || path.starts_with("/grpc.reflection.v1alpha.ServerReflection/")
}

/// Every method of the Lore services (`/package.Service/Method`), from the
/// compiled descriptor set: what the table must cover.
pub fn served_methods() -> Vec<String> {
    use prost::Message as _;
    let set = prost_types::FileDescriptorSet::decode(lore_proto::FILE_DESCRIPTOR_SET)
        .expect("the descriptor set compiled into lore-proto decodes");
    let mut methods = Vec::new();
    for file in &set.file {
        for service in &file.service {
            let full = format!("{}.{}", file.package(), service.name());
            if lore_proto::SERVICE_NAMES.contains(&full.as_str()) {
                methods.extend(service.method.iter().map(|method| format!("/{full}/{}", method.name())));
            }
        }
    }
    methods
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_served_method_has_an_access_and_every_listed_one_exists() {
        let served = served_methods();
        assert!(served.len() > 40, "descriptor set read: {served:?}");
        let unlisted: Vec<_> = served.iter().filter(|path| method_access(path).is_none()).collect();
        assert!(unlisted.is_empty(), "methods with no access class (refused for every role): {unlisted:?}");
        let stale: Vec<_> = METHODS
            .iter()
            .map(|(service, method, _)| format!("{service}{method}"))
            .filter(|path| !served.contains(path))
            .collect();
        assert!(stale.is_empty(), "listed methods the server does not serve: {stale:?}");
    }

    #[test]
    fn a_method_name_must_match_whole() {
        assert_eq!(method_access("/lore.v1.ActionService/LogAction"), Some(Access::Ingest));
        assert_eq!(method_access("/lore.v1.ActionService/LogActionX"), None);
        assert_eq!(method_access("/lore.v1.KnowledgeService/LogAction"), None);
        assert!(!is_open("/lore.v1.ActionService/LogAction"));
        assert!(is_open("/grpc.health.v1.Health/Check"));
    }
}
