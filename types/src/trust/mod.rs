//! Where what Lore injects came from ([`Origin`]) and how far it is
//! trusted ([`Trust`]); why the injection screen held a text ([`Held`]);
//! and the review queue's vocabulary ([`quarantine`]). The screen and the
//! queue themselves are lore-domain's `trust`.

pub mod quarantine;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::actions::StoredName;

/// How far an item is trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "snake_case")]
pub enum Trust {
    /// A person wrote or approved it.
    Reviewed,
    /// A passing check or task result was recorded for the task after it
    /// (the item's own "it worked" does not count).
    Verified,
    /// Everything else: what an agent wrote or a tool printed.
    Observed,
}

impl StoredName for Trust {}

impl Trust {
    /// Whether the item's written text (a fix's approach, a lesson's prose)
    /// may reach another agent in its own words, rather than only the
    /// observed facts around it: only once a person has read it. A passing
    /// result verifies what was done, not what the agent wrote about it,
    /// and a payload needs to pass a screen only once to be repeated to
    /// every later agent (issue 56).
    pub fn speaks(self) -> bool {
        self == Trust::Reviewed
    }

    /// The least trusted of two (an item built from both is no better).
    pub fn least(self, other: Trust) -> Trust {
        self.max(other)
    }
}

/// A person's decision on words an agent wrote, a fix's or a lesson's
/// (issue 56): approved, they reach other agents; rejected, never.
#[derive(Debug, Clone, PartialEq)]
pub struct ReviewRecord {
    pub approved: bool,
    /// The reviewer's token name.
    pub by: String,
    pub at: DateTime<Utc>,
    pub note: String,
}

/// Who wrote an item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, strum::IntoStaticStr)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Author {
    /// A person: a token with the admin role, in the console or the CLI.
    Person,
    /// An agent: any other token, through MCP, hooks or RPC.
    #[default]
    Agent,
    /// A tool's output, captured by an agent's hook or an RPC.
    Tool,
    /// Lore itself, from other items (a gotcha from a fix, a draft from the
    /// log).
    Lore,
}

/// Where an item came from: stored as JSON with the item.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Origin {
    #[serde(default)]
    pub author: Author,
    /// What it came through: console, cli, mcp, hook, rpc, sidecar, folder
    /// or lore (what a client says of itself in `x-lore-client`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub channel: String,
    /// The token's name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub token: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub role: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<Uuid>,
}

/// Channels a client may name; anything else is recorded as `rpc`.
const CHANNELS: [&str; 8] = ["console", "cli", "mcp", "hook", "rpc", "sidecar", "folder", "lore"];
/// The channels of Lore's agent clients.
const AGENT_CHANNELS: [&str; 3] = ["mcp", "hook", "sidecar"];

impl Origin {
    /// The caller of a request: a person when its token is an admin's, an
    /// agent otherwise. Lore's own agent clients (hooks, the MCP server, a
    /// sidecar shipping for them) always write as agents, whatever token
    /// they hold: an agent's hook set up with an admin's token (the dev
    /// server's, say) is still an agent, and what it writes is no person's
    /// review. With auth off there is no token and every caller is an
    /// admin (auth is off only behind something else that authenticates),
    /// so the client alone decides.
    pub fn caller(token: Option<(&str, &str)>, channel: Option<&str>) -> Self {
        let channel = channel.map(str::trim).filter(|channel| CHANNELS.contains(channel)).unwrap_or("rpc");
        let person = !AGENT_CHANNELS.contains(&channel) && token.is_none_or(|(_, role)| role == "admin");
        let (token, role) = token.unwrap_or_default();
        Self {
            author: if person { Author::Person } else { Author::Agent },
            channel: channel.to_owned(),
            token: token.to_owned(),
            role: role.to_owned(),
            agent_id: None,
            session_id: None,
        }
    }

    /// Lore itself, deriving an item from others.
    pub fn lore() -> Self {
        Self { author: Author::Lore, channel: "lore".into(), ..Self::default() }
    }

    /// A document from a watched folder or IndexDocument.
    pub fn document() -> Self {
        Self { author: Author::Person, channel: "folder".into(), ..Self::default() }
    }

    /// The same caller, speaking for an agent session.
    pub fn in_session(mut self, agent_id: Option<&str>, session_id: Option<Uuid>) -> Self {
        if let Some(agent_id) = agent_id.filter(|agent| !agent.is_empty()) {
            self.agent_id = Some(agent_id.to_owned());
        }
        self.session_id = session_id.or(self.session_id);
        self
    }

    /// What it carries is a tool's output (a captured failure), whoever
    /// captured it.
    pub fn tool_output(mut self) -> Self {
        self.author = Author::Tool;
        self
    }

    /// The trust an item gets from its origin alone: a person's is
    /// reviewed, everything else observed until a result verifies it.
    pub fn trust(&self) -> Trust {
        if self.author == Author::Person { Trust::Reviewed } else { Trust::Observed }
    }

    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_else(|_| serde_json::json!({}))
    }

    /// Reads a stored origin; an unreadable one is an unknown agent.
    pub fn from_json(value: &serde_json::Value) -> Self {
        serde_json::from_value(value.clone()).unwrap_or_default()
    }

    /// In words: "agent claude-7 (token vm-17, session 0190a1b2) through
    /// hook", "a person (token ops) through console", "captured tool output
    /// (agent claude-7, token vm-17) through hook", "Lore".
    pub fn describe(&self) -> String {
        let mut who = match self.author {
            Author::Person => "a person".to_owned(),
            Author::Agent => match &self.agent_id {
                Some(agent) => format!("agent {agent}"),
                None => "an agent".to_owned(),
            },
            Author::Tool => "captured tool output".to_owned(),
            Author::Lore => return "Lore".to_owned(),
        };
        let mut details = Vec::new();
        if self.author == Author::Tool
            && let Some(agent) = &self.agent_id
        {
            details.push(format!("agent {agent}"));
        }
        if !self.token.is_empty() {
            details.push(format!("token {}", self.token));
        }
        if let Some(session) = self.session_id {
            details.push(format!("session {}", &session.simple().to_string()[..8]));
        }
        if !details.is_empty() {
            who.push_str(&format!(" ({})", details.join(", ")));
        }
        if !self.channel.is_empty() {
            who.push_str(&format!(" through {}", self.channel));
        }
        who
    }
}

/// Why an item was held by the injection screen: the part the screen held (the one with the highest
/// score), an excerpt of it and the reasons.
#[derive(Debug, Clone, PartialEq)]
pub struct Held {
    /// The field ("approach", "title") or a message's index ("message 2").
    pub part: String,
    pub excerpt: String,
    pub reasons: Vec<String>,
    pub score: f64,
}

impl Held {
    /// The reasons in one sentence.
    pub fn reason(&self) -> String {
        self.reasons.join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_admin_is_a_person_and_everyone_else_an_agent() {
        let person = Origin::caller(Some(("ops", "admin")), Some("console"));
        assert_eq!((person.author, person.trust()), (Author::Person, Trust::Reviewed));
        assert_eq!(person.describe(), "a person (token ops) through console");
        let agent = Origin::caller(Some(("vm-17", "agent")), Some("hook")).in_session(Some("claude-7"), None);
        assert_eq!((agent.author, agent.trust()), (Author::Agent, Trust::Observed));
        assert_eq!(agent.describe(), "agent claude-7 (token vm-17) through hook");
        // Auth off: every caller is an admin, but Lore's agent clients say
        // what they are.
        let no_token = Origin::caller(None, Some("not a channel"));
        assert_eq!((no_token.channel.as_str(), no_token.trust()), ("rpc", Trust::Reviewed));
        assert_eq!(Origin::caller(None, Some("hook")).trust(), Trust::Observed);
        // An agent's client holding an admin's token is still an agent.
        assert_eq!(Origin::caller(Some(("dev", "admin")), Some("hook")).trust(), Trust::Observed);
        assert_eq!(Origin::caller(Some(("dev", "admin")), Some("mcp")).author, Author::Agent);
        let tool = agent.clone().tool_output();
        assert_eq!(tool.describe(), "captured tool output (agent claude-7, token vm-17) through hook");
        assert_eq!(Origin::from_json(&tool.to_json()), tool);
        assert_eq!(Origin::from_json(&serde_json::json!({"author": "martian"})), Origin::default());
    }

    #[test]
    fn only_what_a_person_read_speaks() {
        assert!(Trust::Reviewed.speaks() && !Trust::Verified.speaks() && !Trust::Observed.speaks());
        assert_eq!(Trust::Reviewed.least(Trust::Observed), Trust::Observed);
        assert_eq!(Trust::Verified.least(Trust::Reviewed), Trust::Verified);
    }
}
