//! `lore synonyms` and `lore categories`: what words and categories mean to
//! search, listed and edited.

use lore_proto::v1 as proto;

use crate::commands::Channel;

#[derive(clap::Subcommand)]
pub enum SynonymsCommand {
    /// The project's synonyms, then the global ones.
    List {
        #[arg(long, env = "LORE_PROJECT")]
        project: String,
    },
    /// A query holding TERM also looks for EXPANSION, and the other way round.
    Add(SynonymArgs),
    /// Forget a synonym.
    Remove(SynonymArgs),
}

#[derive(clap::Args)]
pub struct SynonymArgs {
    term: String,
    expansion: String,
    /// The project; with --global, every project (an admin token).
    #[arg(long, env = "LORE_PROJECT", required_unless_present = "global")]
    project: Option<String>,
    #[arg(long, conflicts_with = "project")]
    global: bool,
}

impl SynonymArgs {
    fn synonym(self) -> proto::Synonym {
        proto::Synonym {
            project: if self.global { String::new() } else { self.project.unwrap_or_default() },
            term: self.term,
            expansion: self.expansion,
        }
    }
}

#[derive(clap::Subcommand)]
pub enum CategoriesCommand {
    /// The project's related categories.
    List {
        #[arg(long, env = "LORE_PROJECT")]
        project: String,
    },
    /// Relate two categories: a query of one ranks entries of the other
    /// next after its own.
    Relate(RelationArgs),
    /// Unrelate two categories.
    Unrelate(RelationArgs),
}

#[derive(clap::Args)]
pub struct RelationArgs {
    category: String,
    related: String,
    #[arg(long, env = "LORE_PROJECT")]
    project: String,
}

impl RelationArgs {
    fn relation(self) -> proto::CategoryRelation {
        proto::CategoryRelation { project: self.project, category: self.category, related: self.related }
    }
}

pub async fn synonyms(channel: Channel, command: SynonymsCommand) -> anyhow::Result<()> {
    let mut client = crate::commands::knowledge_client(channel);
    match command {
        SynonymsCommand::List { project } => {
            let listed = client.list_synonyms(proto::ListSynonymsRequest { project }).await?.into_inner();
            for synonym in listed.synonyms {
                let scope = if synonym.project.is_empty() { "global" } else { synonym.project.as_str() };
                println!("{} = {}  ({scope})", synonym.term, synonym.expansion);
            }
        }
        SynonymsCommand::Add(args) => {
            let put =
                client.put_synonym(proto::PutSynonymRequest { synonym: Some(args.synonym()) }).await?.into_inner();
            let synonym = put.synonym.unwrap_or_default();
            let said = if put.created { "added" } else { "already there" };
            println!("{said}: {} = {}", synonym.term, synonym.expansion);
        }
        SynonymsCommand::Remove(args) => {
            let synonym = args.synonym();
            let deleted = client
                .delete_synonym(proto::DeleteSynonymRequest { synonym: Some(synonym.clone()) })
                .await?
                .into_inner()
                .deleted;
            let said = if deleted { "removed" } else { "there was no such synonym" };
            println!("{said}: {} = {}", synonym.term, synonym.expansion);
        }
    }
    Ok(())
}

pub async fn categories(channel: Channel, command: CategoriesCommand) -> anyhow::Result<()> {
    let mut client = crate::commands::knowledge_client(channel);
    match command {
        CategoriesCommand::List { project } => {
            let listed =
                client.list_category_relations(proto::ListCategoryRelationsRequest { project }).await?.into_inner();
            for relation in listed.relations {
                println!("{} ~ {}", relation.category, relation.related);
            }
        }
        CategoriesCommand::Relate(args) => {
            let put = client
                .put_category_relation(proto::PutCategoryRelationRequest { relation: Some(args.relation()) })
                .await?
                .into_inner();
            let relation = put.relation.unwrap_or_default();
            let said = if put.created { "related" } else { "already related" };
            println!("{said}: {} ~ {}", relation.category, relation.related);
        }
        CategoriesCommand::Unrelate(args) => {
            let relation = args.relation();
            let deleted = client
                .delete_category_relation(proto::DeleteCategoryRelationRequest { relation: Some(relation.clone()) })
                .await?
                .into_inner()
                .deleted;
            let said = if deleted { "unrelated" } else { "they were not related" };
            println!("{said}: {} ~ {}", relation.category, relation.related);
        }
    }
    Ok(())
}
