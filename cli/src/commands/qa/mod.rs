//! `lore qa`: capture failures, ask for warnings before a task, look at the
//! patterns and the dashboard, and promote proven patterns.

pub mod fixes;
pub mod guards;
pub mod hotspots;
pub mod masks;
pub mod regroupings;
pub mod results;
pub mod switches;

use crate::commands::Channel;
use anyhow::bail;
use lore_proto::v1 as proto;
use lore_proto::v1::qa_learning_service_client::QaLearningServiceClient;
use uuid::Uuid;

use crate::commands::display::{bar, interval_bar, largest, or_dash};
use crate::convert;

#[derive(clap::Subcommand)]
pub enum Command {
    /// Capture a QA failure: its category and the pattern of each message.
    Capture(CaptureArgs),
    /// The warnings an agent should read before a task.
    Warnings(WarningsArgs),
    /// Patterns of a project, most frequent first.
    Patterns(PatternsArgs),
    /// Failure rate, top patterns, categories and whether warnings work.
    Dashboard(DashboardArgs),
    /// Record a task's QA verdict: it scores the warnings the task was given.
    Result(results::ResultArgs),
    /// Record a fix attempt of a captured failure.
    Fix(results::FixArgs),
    /// Agents' fixes waiting for a person: list, approve, reject (admin).
    #[command(subcommand)]
    Fixes(fixes::FixesCommand),
    /// Judge warning deliveries by hand (a task result does it by itself).
    Outcome(results::OutcomeArgs),
    /// Promotion of proven patterns to published learnings.
    #[command(subcommand)]
    Promote(PromoteCommand),
    /// Re-mine a project's recent occurrences with Brain now (the leader
    /// does it on a schedule): merges and splits where it disagrees with
    /// the captures' grouping, made where the project's people support it
    /// and proposed otherwise (admin).
    Remine(RemineArgs),
    /// The regroupings re-mining proposed: list, accept, reject.
    #[command(subcommand)]
    Regroupings(regroupings::RegroupingsCommand),
    /// A project's own grouping masks: list, add or replace, delete.
    #[command(subcommand)]
    Masks(masks::MasksCommand),
    /// A project's guards: list, add, remove, and turn them on or off.
    #[command(subcommand)]
    Guards(guards::GuardsCommand),
    /// Where the project's work fails QA more than the rest: by file area
    /// and by action kind, with intervals.
    Hotspots(hotspots::HotSpotsArgs),
    /// Acknowledge warnings an agent was shown: read and taken into account.
    Ack(switches::AckArgs),
    /// The kill switches: show them, or turn warnings or learning off and on
    /// for every replica at once (admin).
    Switches(switches::SwitchesArgs),
}

#[derive(clap::Args)]
pub struct RemineArgs {
    #[arg(long, env = "LORE_PROJECT")]
    project: String,
    /// The newest occurrences read; the server's qa.remine_window by default.
    #[arg(long, default_value_t = 0)]
    window: u32,
}

#[derive(clap::Args)]
pub struct TaskArgs {
    #[arg(long, env = "LORE_PROJECT")]
    project: String,
    /// Task id (issue, ticket).
    #[arg(long)]
    task: String,
    #[arg(long, default_value = "")]
    title: String,
    /// Task category (backend, migration, ui...).
    #[arg(long, default_value = "")]
    category: String,
    /// Files the task involves (repeat, or comma-separated).
    #[arg(long, value_delimiter = ',')]
    files: Vec<String>,
}

impl TaskArgs {
    fn task(&self) -> proto::Task {
        proto::Task {
            task_id: self.task.clone(),
            title: self.title.clone(),
            category: self.category.clone(),
            files: self.files.clone(),
            description: String::new(),
        }
    }
}

#[derive(clap::Args)]
pub struct CaptureArgs {
    #[command(flatten)]
    task: TaskArgs,
    /// Name of the failed check (jest, cargo test, tsc...).
    #[arg(long)]
    check: Option<String>,
    /// An error message (repeat for several).
    #[arg(long = "message", required = true)]
    messages: Vec<String>,
    /// Files the agent modified (repeat, or comma-separated).
    #[arg(long, value_delimiter = ',')]
    modified: Vec<String>,
    #[arg(long)]
    session: Option<String>,
}

#[derive(clap::Args)]
pub struct WarningsArgs {
    #[command(flatten)]
    task: TaskArgs,
    #[arg(long)]
    session: Option<String>,
    #[arg(long, default_value_t = 5)]
    limit: u32,
}

#[derive(clap::Args)]
pub struct PatternsArgs {
    #[arg(long, env = "LORE_PROJECT")]
    project: String,
    /// Only this failure category.
    #[arg(long)]
    category: Option<String>,
    /// Only patterns learned from files like this one.
    #[arg(long)]
    file: Option<String>,
    #[arg(long, default_value_t = 20)]
    limit: u32,
}

#[derive(clap::Args)]
pub struct DashboardArgs {
    #[arg(long, env = "LORE_PROJECT")]
    project: String,
    /// The last N days.
    #[arg(long, default_value_t = 30)]
    days: u32,
    #[arg(long)]
    category: Option<String>,
    #[arg(long)]
    agent: Option<String>,
}

#[derive(clap::Subcommand)]
pub enum PromoteCommand {
    /// Patterns over the promotion thresholds.
    Candidates {
        #[arg(long, env = "LORE_PROJECT")]
        project: String,
    },
    /// Propose a pattern: prints its markdown proposal.
    Propose {
        pattern_id: String,
        #[arg(long, env = "USER", default_value = "lore")]
        actor: String,
    },
    /// Approve a pending promotion: it is published as a learning.
    Approve(ReviewArgs),
    /// Reject a pending promotion.
    Reject(ReviewArgs),
    /// Withdraw a published promotion: its learning becomes obsolete.
    Rollback(ReviewArgs),
    /// Promotions of a project with their history.
    List {
        #[arg(long, env = "LORE_PROJECT")]
        project: String,
    },
}

#[derive(clap::Args)]
pub struct ReviewArgs {
    promotion_id: String,
    #[arg(long, env = "USER", default_value = "lore")]
    actor: String,
    #[arg(long, default_value = "")]
    note: String,
}

pub fn client(channel: Channel) -> QaLearningServiceClient<Channel> {
    lore_proto::client::qa(channel)
}

pub async fn run(channel: Channel, command: Command) -> anyhow::Result<()> {
    let mut qa = client(channel);
    match command {
        Command::Result(args) => results::result(&mut qa, args).await?,
        Command::Fix(args) => results::fix(&mut qa, args).await?,
        Command::Fixes(command) => fixes::fixes(&mut qa, command).await?,
        Command::Outcome(args) => results::outcome(&mut qa, args).await?,
        Command::Hotspots(args) => hotspots::run(&mut qa, args).await?,
        Command::Ack(args) => switches::ack(&mut qa, args).await?,
        Command::Switches(args) => switches::switches(&mut qa, args).await?,
        Command::Capture(args) => capture(&mut qa, args).await?,
        Command::Warnings(args) => warnings(&mut qa, args).await?,
        Command::Patterns(args) => patterns(&mut qa, args).await?,
        Command::Dashboard(args) => dashboard(&mut qa, args).await?,
        Command::Promote(command) => promote(&mut qa, command).await?,
        Command::Remine(args) => {
            let request = proto::RemineProjectRequest { project: args.project.clone(), window: args.window };
            masks::print_remined(&args.project, qa.remine_project(request).await?.into_inner());
        }
        Command::Masks(command) => masks::masks(&mut qa, command).await?,
        Command::Regroupings(command) => regroupings::regroupings(&mut qa, command).await?,
        Command::Guards(command) => guards::guards(&mut qa, command).await?,
    }
    Ok(())
}

async fn capture(qa: &mut QaLearningServiceClient<Channel>, args: CaptureArgs) -> anyhow::Result<()> {
    let request = proto::CaptureFailureRequest {
        failure_id: Uuid::now_v7().to_string(),
        project: args.task.project.clone(),
        task: Some(args.task.task()),
        session_id: args.session.unwrap_or_default(),
        failed_checks: args
            .check
            .map(|name| proto::FailedCheck { name, output: args.messages.join("\n"), exit_code: 1 })
            .into_iter()
            .collect(),
        error_messages: args.messages,
        files_modified: args.modified,
        ..Default::default()
    };
    let captured = qa.capture_failure(request).await?.into_inner();
    let ack = captured.ack.unwrap_or_default();
    println!("failure {} captured as {} (rule {})", ack.id, captured.category, or_dash(&captured.category_rule_id));
    for link in &captured.links {
        let new = if link.new_pattern { "new " } else { "" };
        println!("  {new}pattern {}  {}", link.pattern_id, link.pattern_name);
        println!("    template: {}", link.template);
        println!("    why: {} (similarity {:.2})", link.reason, link.similarity);
    }
    Ok(())
}

async fn warnings(qa: &mut QaLearningServiceClient<Channel>, args: WarningsArgs) -> anyhow::Result<()> {
    let request = proto::GetWarningsRequest {
        project: args.task.project.clone(),
        task: Some(args.task.task()),
        session_id: args.session.unwrap_or_default(),
        limit: args.limit,
    };
    let warnings = qa.get_warnings(request).await?.into_inner();
    if warnings.warnings.is_empty() {
        println!("no warnings for task {}", args.task.task);
    }
    for (index, warning) in warnings.warnings.iter().enumerate() {
        println!("{}. {} (score {:.2})", index + 1, warning.pattern_name, warning.score);
        println!("   {}", warning.text);
        println!("   why shown: {}", or_dash(&warning.reason));
        println!("   delivery {} (report the outcome with it)", warning.delivery_id);
    }
    Ok(())
}

async fn patterns(qa: &mut QaLearningServiceClient<Channel>, args: PatternsArgs) -> anyhow::Result<()> {
    let request = proto::ListPatternsRequest {
        project: args.project,
        category: args.category.unwrap_or_default(),
        file: args.file.unwrap_or_default(),
        page: Some(proto::PageRequest { page_size: args.limit, cursor: String::new() }),
        ..Default::default()
    };
    let patterns = qa.list_patterns(request).await?.into_inner().patterns;
    println!(
        "{:>6} {:>5} {:>5} {:>5}  {:<18} {:<9} {:<36} name",
        "seen", "tasks", "conf", "eff", "category", "changed", "pattern"
    );
    for pattern in &patterns {
        println!(
            "{:>6} {:>5} {:>5.2} {:>5.2}  {:<18} {:<9} {:<36} {}",
            pattern.occurrence_count,
            pattern.task_count,
            pattern.confidence,
            pattern.effectiveness,
            pattern.category,
            pattern.last_change.replace('_', "-"),
            pattern.pattern_id,
            pattern.name
        );
    }
    Ok(())
}

async fn dashboard(qa: &mut QaLearningServiceClient<Channel>, args: DashboardArgs) -> anyhow::Result<()> {
    let request = proto::DashboardRequest {
        project: args.project.clone(),
        window: Some(convert::last_days(args.days)),
        top_patterns: 10,
        category: args.category.unwrap_or_default(),
        agent_id: args.agent.unwrap_or_default(),
    };
    let dashboard = qa.dashboard(request).await?.into_inner();
    println!(
        "{}: {} failures in {} days, {:.0}% resolved, {:.1} attempts to pass on average",
        args.project,
        dashboard.failures,
        args.days,
        dashboard.resolution_rate * 100.0,
        dashboard.mean_attempts_to_pass
    );
    println!(
        "warnings shown: {}, prevention effectiveness {:.0}%, missed opportunities: {}",
        dashboard.warnings_delivered,
        dashboard.prevention_effectiveness * 100.0,
        dashboard.missed_opportunities
    );
    if dashboard.warnings_acknowledged > 0 {
        println!(
            "acknowledged by agents: {}, their effectiveness {:.0}%",
            dashboard.warnings_acknowledged,
            dashboard.acknowledged_effectiveness * 100.0
        );
    }
    if let Some(tasks) = dashboard.tasks.filter(|tasks| tasks.tasks > 0) {
        println!(
            "tasks with a QA result: {}, failed {:.0}%, passed the first time {:.0}%, {:.1} results to pass",
            tasks.tasks,
            tasks.failure_rate * 100.0,
            tasks.first_time_pass_rate * 100.0,
            tasks.mean_attempts_to_pass
        );
    }
    if let Some(comparison) = &dashboard.comparison {
        print_comparison(comparison);
    }
    println!("\nfailure rate per day (failures / tasks that reached QA):");
    let max = largest(dashboard.failure_rate.iter().map(|day| day.failures));
    for day in &dashboard.failure_rate {
        let bar = bar(day.failures as f64 / max);
        println!("{} {bar} {} / {} ({:.0}%)", day.day, day.failures, day.tasks, day.rate * 100.0);
    }
    println!("\ncategories:");
    for category in &dashboard.categories {
        let bar = bar(category.share);
        println!("{:<20} {bar} {} ({:.0}%)", category.category, category.failures, category.share * 100.0);
    }
    println!("\ntop patterns:");
    println!("{:>6} {:>5} {:>5}  name", "seen", "conf", "eff");
    for pattern in &dashboard.top_patterns {
        println!(
            "{:>6} {:>5.2} {:>5.2}  {}",
            pattern.occurrence_count, pattern.confidence, pattern.effectiveness, pattern.name
        );
    }
    Ok(())
}

/// Shown against held-out tasks: the share that failed on a warned pattern,
/// with its interval, one under the other.
fn print_comparison(comparison: &proto::Comparison) {
    let level = (1.0 - comparison.significance) * 100.0;
    println!("\ntasks failing on a warned pattern, {level:.0}% intervals (0% ... 100%):");
    for (name, group) in [("shown", &comparison.shown), ("held out", &comparison.held_out)] {
        let group = group.unwrap_or_default();
        println!(
            "{name:<9} {} {} of {} ({:.0}%, {:.0}%-{:.0}%)",
            interval_bar(group.interval_low, group.rate, group.interval_high),
            group.failed,
            group.tasks,
            group.rate * 100.0,
            group.interval_low * 100.0,
            group.interval_high * 100.0
        );
    }
    println!(
        "p = {:.3}: {}",
        comparison.p_value,
        if comparison.significant { "warnings make a significant difference" } else { "not significant yet" }
    );
    match comparison.tasks_needed {
        Some(0) | None if comparison.significant => {}
        Some(needed) => {
            println!("about {needed} more tasks with a QA result before a difference this size would show (80% power)")
        }
        None => println!(
            "no difference in the warnings' favour yet to size: the evidence needs tasks in both groups (qa.holdout_fraction)"
        ),
    }
}

async fn promote(qa: &mut QaLearningServiceClient<Channel>, command: PromoteCommand) -> anyhow::Result<()> {
    let review = |args: ReviewArgs| proto::ReviewPromotionRequest {
        promotion_id: args.promotion_id,
        actor: args.actor,
        note: args.note,
    };
    let promotion = match command {
        PromoteCommand::Candidates { project } => {
            let request = proto::ListPromotionCandidatesRequest { project, limit: 0 };
            let ranked = qa.list_promotion_candidates(request).await?.into_inner().ranked;
            if ranked.is_empty() {
                println!("no pattern qualifies yet");
            }
            for candidate in &ranked {
                let pattern = candidate.pattern.clone().unwrap_or_default();
                let evidence = candidate.evidence.unwrap_or_default();
                let (shown, held) = (evidence.shown.unwrap_or_default(), evidence.held_out.unwrap_or_default());
                println!(
                    "{}  eff {:.2}  conf {:.2}  {} tasks  {}",
                    pattern.pattern_id, pattern.effectiveness, pattern.confidence, pattern.task_count, pattern.name
                );
                println!(
                    "  failed on it: {} of {} shown, {} of {} held out (p = {:.3})",
                    shown.failed, shown.tasks, held.failed, held.tasks, evidence.p_value
                );
            }
            return Ok(());
        }
        PromoteCommand::List { project } => {
            let request = proto::ListPromotionsRequest { project, ..Default::default() };
            for promotion in qa.list_promotions(request).await?.into_inner().promotions {
                print_promotion(&promotion, false);
            }
            return Ok(());
        }
        PromoteCommand::Propose { pattern_id, actor } => {
            let request =
                proto::ProposePromotionRequest { promotion_id: Uuid::now_v7().to_string(), pattern_id, actor };
            let promotion = qa.propose_promotion(request).await?.into_inner();
            print_promotion(&promotion, true);
            return Ok(());
        }
        PromoteCommand::Approve(args) => qa.approve_promotion(review(args)).await?,
        PromoteCommand::Reject(args) => {
            if args.note.is_empty() {
                bail!("--note is required: say why");
            }
            qa.reject_promotion(review(args)).await?
        }
        PromoteCommand::Rollback(args) => {
            if args.note.is_empty() {
                bail!("--note is required: say why");
            }
            qa.rollback_promotion(review(args)).await?
        }
    };
    print_promotion(&promotion.into_inner(), false);
    Ok(())
}

fn status_name(value: i32) -> String {
    proto::PromotionStatus::try_from(value)
        .map(|status| status.as_str_name().trim_start_matches("PROMOTION_STATUS_").to_lowercase())
        .unwrap_or_default()
}

fn print_promotion(promotion: &proto::Promotion, with_markdown: bool) {
    let status = status_name(promotion.status);
    println!("promotion {} of pattern {}: {status}", promotion.promotion_id, promotion.pattern_id);
    if !promotion.entry_id.is_empty() {
        println!("  learning {}", promotion.entry_id);
    }
    if !promotion.instructions.is_empty() {
        println!("  instructions file: {}", promotion.instructions);
    }
    for event in &promotion.history {
        let status = status_name(event.status);
        println!("  {} {status} by {} {}", convert::time(event.at.as_ref()), event.actor, event.note);
    }
    if with_markdown {
        println!("\n{}", promotion.markdown);
    }
}
