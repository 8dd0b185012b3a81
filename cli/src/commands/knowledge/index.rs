//! `lore index PATH`: index a markdown file or every markdown file under a
//! folder through IndexDocument, with a progress bar. Unchanged documents
//! are no-ops on the server, so running it again is cheap. Files that
//! cannot be indexed are listed with the reason at the end, and the exit
//! status says some failed.
//!
//! `lore index push DIR --prefix P`: the same from CI, keeping the project's
//! documents under `P/` equal to the folder: a document whose file is gone
//! is removed too (a sidecar's `--index` does this as files change).

use std::path::{Path, PathBuf};

use crate::commands::Channel;
use anyhow::{Context as _, bail};
use futures_util::{StreamExt as _, stream};
use indicatif::{ProgressBar, ProgressStyle};
use lore_proto::v1 as proto;

/// `lore index PATH`, or `lore index push DIR` (main.rs lets the subcommand
/// stand in for the path).
#[derive(clap::Args)]
pub struct Command {
    #[command(subcommand)]
    push: Option<Push>,
    #[command(flatten)]
    args: Option<Args>,
}

#[derive(clap::Subcommand)]
enum Push {
    /// Make the project's documents under --prefix what the folder holds:
    /// new and changed files indexed, documents whose file is gone removed.
    Push(Args),
}

#[derive(clap::Args)]
pub struct Args {
    /// A markdown file, or a folder to index every `.md` file under.
    path: PathBuf,
    #[arg(long, env = "LORE_PROJECT")]
    project: String,
    /// Put the documents under this path in the project (e.g. to index two
    /// folders into one project without their paths colliding).
    #[arg(long)]
    prefix: Option<String>,
    /// Documents in flight at once.
    #[arg(long, default_value_t = 4)]
    concurrency: usize,
    /// Return once the documents are stored, without waiting for the server
    /// to embed them (search finds them by their words meanwhile).
    #[arg(long)]
    no_wait: bool,
}

/// The markdown files to index with their document paths, sorted.
fn documents(root: &Path, prefix: Option<&str>) -> anyhow::Result<Vec<(PathBuf, String)>> {
    let metadata = std::fs::metadata(root).with_context(|| format!("cannot read {}", root.display()))?;
    let with_prefix = |relative: String| match prefix {
        Some(prefix) => format!("{}/{relative}", prefix.trim_matches('/')),
        None => relative,
    };
    if metadata.is_file() {
        let name = root.file_name().and_then(|name| name.to_str()).context("not a UTF-8 file name")?;
        return Ok(vec![(root.to_owned(), with_prefix(name.to_owned()))]);
    }
    // The same files a sidecar's --index watches.
    let found = lore_sidecar::folders::markdown_files(root);
    if let Some(error) = found.unreadable.into_iter().next() {
        return Err(error.into());
    }
    for path in &found.not_utf8 {
        eprintln!("skipped {}: not a UTF-8 file name", path.display());
    }
    Ok(found.documents.into_iter().map(|(path, relative)| (path, with_prefix(relative))).collect())
}

pub async fn run(channel: Channel, command: Command) -> anyhow::Result<()> {
    match command.push {
        Some(Push::Push(args)) => push(channel, args).await,
        None => match command.args {
            Some(args) => index(channel, args).await,
            None => bail!("lore index: give a markdown file or folder, or `push DIR`"),
        },
    }
}

/// Indexes the folder, then removes the documents under the prefix that
/// have no file in it any more.
async fn push(channel: Channel, args: Args) -> anyhow::Result<()> {
    let Some(prefix) = args.prefix.as_deref().map(|prefix| prefix.trim_matches('/').to_owned()) else {
        bail!("lore index push needs --prefix: the documents under it are made equal to the folder, and no others");
    };
    anyhow::ensure!(!prefix.is_empty(), "--prefix: empty; name the part of the project the folder owns");
    let present: std::collections::BTreeSet<String> =
        documents(&args.path, Some(&prefix))?.into_iter().map(|(_, path)| path).collect();
    let mut client = crate::commands::knowledge_client(channel.clone());
    let project = args.project.clone();
    if !present.is_empty() {
        index(channel, args).await?;
    }
    let gone: Vec<String> = indexed_paths(&mut client, &project)
        .await?
        .into_iter()
        .filter(|path| path.starts_with(&format!("{prefix}/")) && !present.contains(path))
        .collect();
    for path in &gone {
        client.remove_document(proto::RemoveDocumentRequest { project: project.clone(), path: path.clone() }).await?;
    }
    println!("removed under {prefix}/: {} (their files are gone)", gone.len());
    Ok(())
}

/// The source paths of the project's active documents.
async fn indexed_paths(
    client: &mut lore_proto::v1::knowledge_service_client::KnowledgeServiceClient<Channel>,
    project: &str,
) -> anyhow::Result<Vec<String>> {
    let mut paths = Vec::new();
    let mut cursor = String::new();
    loop {
        let request = proto::ListEntriesRequest {
            project: project.to_owned(),
            kinds: vec![proto::EntryKind::Learning.into()],
            page: Some(proto::PageRequest { page_size: 500, cursor }),
            ..Default::default()
        };
        let page = client.list_entries(request).await?.into_inner();
        paths.extend(page.entries.into_iter().filter_map(|entry| match entry.details {
            Some(proto::entry::Details::Learning(learning)) if !learning.source_path.is_empty() => {
                Some(learning.source_path)
            }
            _ => None,
        }));
        if page.next_cursor.is_empty() {
            return Ok(paths);
        }
        cursor = page.next_cursor;
    }
}

async fn index(channel: Channel, args: Args) -> anyhow::Result<()> {
    let files = documents(&args.path, args.prefix.as_deref())?;
    if files.is_empty() {
        bail!("no markdown files under {}", args.path.display());
    }
    let client = crate::commands::knowledge_client(channel);
    let bar = ProgressBar::new(files.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{msg:>8} [{bar:40}] {pos}/{len} {per_sec} eta {eta}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_message("indexing");
    let project = args.project.clone();
    let results: Vec<(String, Result<bool, String>)> = stream::iter(files)
        .map(|(file, path)| {
            let (mut client, project, bar) = (client.clone(), project.clone(), bar.clone());
            async move {
                let result = async {
                    let bytes = tokio::fs::read(&file).await.map_err(|error| format!("cannot read: {error}"))?;
                    let content = String::from_utf8(bytes).map_err(|error| {
                        format!("not UTF-8 text (invalid byte at offset {})", error.utf8_error().valid_up_to())
                    })?;
                    let request = proto::IndexDocumentRequest { project, path: path.clone(), content };
                    let response =
                        client.index_document(request).await.map_err(|status| status.message().to_owned())?;
                    Ok(response.into_inner().changed)
                }
                .await;
                bar.inc(1);
                (path, result)
            }
        })
        .buffer_unordered(args.concurrency.max(1))
        .collect()
        .await;
    bar.finish_and_clear();
    let changed = results.iter().filter(|(_, result)| matches!(result, Ok(true))).count();
    let unchanged = results.iter().filter(|(_, result)| matches!(result, Ok(false))).count();
    let mut failed: Vec<(&String, &String)> =
        results.iter().filter_map(|(path, result)| result.as_ref().err().map(|error| (path, error))).collect();
    failed.sort();
    println!("{} documents: {changed} indexed, {unchanged} unchanged, {} failed", results.len(), failed.len());
    for (path, error) in &failed {
        eprintln!("failed {path}: {error}");
    }
    if changed > 0 && !args.no_wait {
        match lore_eval::embedding_progress::wait(&client, &args.project).await? {
            lore_eval::embedding_progress::Embedded::All { waited } => {
                println!("every document is searchable by meaning ({:.1} s of embedding)", waited.as_secs_f64())
            }
            lore_eval::embedding_progress::Embedded::Stalled { pending, reason } => eprintln!(
                "{pending} documents are not embedded yet ({reason}); the server keeps retrying, and search finds \
                 them by their words meanwhile"
            ),
        }
    }
    if !failed.is_empty() {
        bail!("{} documents could not be indexed", failed.len());
    }
    Ok(())
}
