//! What the CLI's review commands share: a person's decision on one or
//! more items agents wrote (`lore qa fixes`, `lore entry review`).

#[derive(clap::Args)]
pub struct DecideArgs {
    /// One or more ids, as `pending` lists them.
    #[arg(required = true)]
    pub ids: Vec<String>,
    /// Why, kept with each decision.
    #[arg(long, default_value = "")]
    pub note: String,
}
