//! `lore report`: a project's activity, as a terminal summary with a chart
//! or as markdown.

use crate::commands::Channel;
use lore_proto::v1 as proto;

use crate::commands::display::{bar, largest, or_dash};
use crate::convert;

#[derive(clap::Args)]
pub struct Args {
    #[arg(long, env = "LORE_PROJECT")]
    project: String,
    /// Report on the last N days.
    #[arg(long, default_value_t = 7)]
    days: u32,
    #[arg(long)]
    agent: Option<String>,
    /// Print the server's markdown rendering.
    #[arg(long)]
    markdown: bool,
    /// The daily or weekly report instead (markdown): deployments, failures,
    /// top actions, active agents, QA, drafts waiting. `--project ""` is the
    /// fleet's.
    #[arg(long, value_parser = ["daily", "weekly"])]
    period: Option<String>,
    /// A day of the period (YYYY-MM-DD); the last complete one when left out.
    #[arg(long, requires = "period")]
    day: Option<String>,
    /// List the stored reports of the period, newest first, instead.
    #[arg(long, requires = "period", conflicts_with = "day")]
    list: bool,
}

pub async fn run(channel: Channel, args: Args) -> anyhow::Result<()> {
    if let Some(period) = &args.period {
        let period = if period == "weekly" { proto::ReportPeriod::Weekly } else { proto::ReportPeriod::Daily };
        if args.list {
            let request = proto::ListPeriodicReportsRequest {
                project: args.project,
                period: period.into(),
                ..Default::default()
            };
            let listed = crate::commands::actions_client(channel).list_periodic_reports(request).await?.into_inner();
            if listed.reports.is_empty() {
                println!("no stored reports yet: the leader stores each one after its period ends");
            }
            for report in listed.reports {
                println!("{}  (stored {})", report.title, convert::time(report.written_at.as_ref()));
            }
            return Ok(());
        }
        let request = proto::PeriodicReportRequest {
            project: args.project,
            period: period.into(),
            day: args.day.unwrap_or_default(),
        };
        let report = crate::commands::actions_client(channel).periodic_report(request).await?.into_inner();
        match &report.written_at {
            Some(at) => eprintln!("stored by the server at {} UTC", convert::time(Some(at))),
            None => eprintln!("no stored report for this period: rendered from the log now"),
        }
        print!("{}", report.markdown);
        return Ok(());
    }
    let request = proto::ActivityReportRequest {
        project: args.project.clone(),
        window: Some(convert::last_days(args.days)),
        agent_id: args.agent.unwrap_or_default(),
        render_markdown: args.markdown,
        recent_failures_limit: 5,
    };
    let report = crate::commands::actions_client(channel).activity_report(request).await?.into_inner();
    if args.markdown {
        print!("{}", report.markdown);
        return Ok(());
    }
    let totals = report.totals.unwrap_or_default();
    println!(
        "{}: {} actions in {} days, {:.1}% success",
        args.project,
        totals.total,
        args.days,
        totals.success_rate * 100.0
    );
    println!(
        "most common: {}   busiest day: {}",
        or_dash(&report.most_common_action_type),
        or_dash(&report.busiest_day)
    );
    let max = largest(report.by_day.iter().map(|day| day.total));
    for day in &report.by_day {
        let bar = bar(day.total as f64 / max);
        println!("{} {bar} {} ({} failed)", day.key, day.total, day.failed);
    }
    if !report.recent_failures.is_empty() {
        println!("recent failures:");
        for failure in &report.recent_failures {
            println!("  {}", convert::action_line(failure));
        }
    }
    Ok(())
}
