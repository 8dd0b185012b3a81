//! `lore resume`: where the last session stopped; with --follow, what
//! happens next.

use crate::commands::Channel;
use lore_proto::v1 as proto;
use lore_proto::v1::resume_event::Event;

use crate::convert;

#[derive(clap::Args)]
pub struct Args {
    #[arg(long, env = "LORE_PROJECT")]
    project: Option<String>,
    #[arg(long)]
    agent: Option<String>,
    #[arg(long)]
    supervisor: Option<String>,
    /// A session to resume instead of the latest.
    #[arg(long)]
    session: Option<String>,
    /// How many recent actions to show.
    #[arg(long, default_value_t = 20)]
    recent: u32,
    /// Keep streaming new actions of the project until interrupted.
    #[arg(long)]
    follow: bool,
}

pub async fn run(channel: Channel, args: Args) -> anyhow::Result<()> {
    let request = proto::ResumeRequest {
        session_id: args.session.unwrap_or_default(),
        project: args.project.unwrap_or_default(),
        agent_id: args.agent.unwrap_or_default(),
        supervisor_type: args.supervisor.unwrap_or_default(),
        recent_limit: args.recent,
        follow: args.follow,
    };
    let mut events = crate::commands::actions_client(channel).resume(request).await?.into_inner();
    while let Some(event) = events.message().await? {
        match event.event {
            Some(Event::Summary(summary)) => print_summary(&summary),
            Some(Event::Action(action)) => println!("  {}", convert::action_line(&action)),
            Some(Event::CaughtUp(_)) if args.follow => println!("-- following new actions (Ctrl-C to stop) --"),
            Some(Event::Learning(hit)) => {
                println!("learning: {}", hit.entry.map(|entry| entry.title).unwrap_or_default())
            }
            Some(Event::Warning(warning)) => println!("warning: {}", warning.text),
            Some(Event::CaughtUp(_) | Event::Heartbeat(_)) | None => {}
        }
    }
    Ok(())
}

fn print_summary(summary: &proto::ResumeSummary) {
    let session = summary.session.clone().unwrap_or_default();
    println!("session {} of {} in {}", session.session_id, session.agent_id, session.project);
    println!(
        "  started {}, last active {}",
        convert::time(session.started_at.as_ref()),
        convert::time(session.last_activity_at.as_ref())
    );
    if session.ended_at.is_some() {
        let reason = proto::EndReason::try_from(session.end_reason).map(|reason| reason.as_str_name()).unwrap_or("?");
        println!(
            "  ended {} ({})",
            convert::time(session.ended_at.as_ref()),
            reason.trim_start_matches("END_REASON_").to_lowercase()
        );
    }
    if !summary.active_epic_id.is_empty() {
        println!("  epic {}", summary.active_epic_id);
    }
    if let Some(last) = &summary.last_action {
        println!("last action:\n  {}", convert::action_line(last));
    }
    if !summary.work_in_progress.is_empty() {
        println!("unfinished:");
        for item in &summary.work_in_progress {
            println!("  - {}", item.description);
        }
    }
    println!("next steps:");
    for step in &summary.suggested_next_steps {
        println!("  - {step}");
    }
    println!("recent actions:");
}
