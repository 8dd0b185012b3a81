//! `lore qa hotspots`: where a project's work fails QA more than the rest
//! of it, by file area and by action kind, each rate drawn with its
//! interval against the project's own rate.

use lore_proto::v1 as proto;

use crate::commands::Channel;
use crate::commands::display::interval_bar;
use crate::convert;

type Qa = lore_proto::v1::qa_learning_service_client::QaLearningServiceClient<Channel>;

#[derive(clap::Args)]
pub struct HotSpotsArgs {
    #[arg(long, env = "LORE_PROJECT")]
    project: String,
    /// The last N days.
    #[arg(long, default_value_t = 30)]
    days: u32,
    /// Leave out areas with fewer sessions (action kinds with fewer
    /// actions).
    #[arg(long, default_value_t = 3)]
    min: u32,
    /// Areas and action kinds listed, each.
    #[arg(long, default_value_t = 20)]
    limit: u32,
}

pub async fn run(qa: &mut Qa, args: HotSpotsArgs) -> anyhow::Result<()> {
    let request = proto::HotSpotsRequest {
        project: args.project.clone(),
        window: Some(convert::last_days(args.days)),
        min_count: args.min,
        limit: args.limit,
    };
    let spots = qa.hot_spots(request).await?.into_inner();
    let level = (1.0 - spots.significance) * 100.0;
    let sessions = spots.sessions.unwrap_or_default();
    println!(
        "{}, last {} days: {} of {} sessions that edited files failed QA ({:.0}%); {level:.0}% intervals, 0% ... 100%",
        args.project,
        args.days,
        sessions.failed,
        sessions.tasks,
        sessions.rate * 100.0
    );
    print_spots("file areas", "sessions", &spots.areas);
    let actions = spots.actions.unwrap_or_default();
    println!("\n{} of {} actions failed ({:.0}%)", actions.failed, actions.tasks, actions.rate * 100.0);
    print_spots("action kinds", "actions", &spots.action_kinds);
    Ok(())
}

fn print_spots(title: &str, unit: &str, spots: &[proto::HotSpot]) {
    println!("\n{title} (HOT: the interval lies above the project's rate):");
    if spots.is_empty() {
        println!("  none with enough {unit} in the window");
        return;
    }
    let width = spots.iter().map(|spot| spot.name.chars().count()).max().unwrap_or(0).min(40);
    for spot in spots {
        let rate = spot.rate.unwrap_or_default();
        println!(
            "{} {:<width$} {} {} of {} {unit} ({:.0}%, {:.0}%-{:.0}%)",
            if spot.hot { "HOT" } else { "   " },
            spot.name,
            interval_bar(rate.interval_low, rate.rate, rate.interval_high),
            rate.failed,
            rate.tasks,
            rate.rate * 100.0,
            rate.interval_low * 100.0,
            rate.interval_high * 100.0,
        );
    }
}
