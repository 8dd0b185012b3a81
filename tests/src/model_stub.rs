//! A scripted stand-in for the model API, on loopback, so the real Claude
//! Code CLI runs a whole session with no network (`ANTHROPIC_BASE_URL`),
//! and the real Codex CLI too (a model provider whose `base_url` is
//! [`ModelStub::openai_base_url`]).
//!
//! For Codex it answers `POST /v1/responses` with the Responses API's
//! streaming events: `response.created`, one `response.output_item.done`
//! per item (a `message`, or a `function_call`; an MCP tool named
//! `mcp__SERVER__TOOL` is called in its namespace, `mcp__SERVER`, as Codex
//! offers it) and `response.completed`.
//!
//! For Gemini CLI (`GOOGLE_GEMINI_BASE_URL` is [`ModelStub::base_url`]) it
//! answers `POST /v1beta/models/MODEL:streamGenerateContent?alt=sse` with
//! one server-sent event: a candidate whose parts are texts and
//! `functionCall`s. Gemini's own side requests (a JSON answer its
//! generation config asks for) get a JSON object that says little.
//!
//! For Claude Code it answers `POST /v1/messages` with the Messages API's streaming events:
//! `message_start`, then per block `content_block_start`, one
//! `content_block_delta` (`text_delta`, or `input_json_delta` for a tool
//! call) and `content_block_stop`, then `message_delta` with the stop
//! reason and `message_stop`. Each request of the agent's main loop (one
//! that offers tools) gets the next turn of the script; side requests
//! (a title, a summary) get a short text. Every request is recorded, so a
//! test can read what the agent put in front of the model.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// One block of an assistant message.
#[derive(Debug, Clone)]
pub enum Block {
    Text(String),
    ToolUse { name: String, input: Value },
}

impl Block {
    pub fn tool(name: &str, input: Value) -> Self {
        Self::ToolUse { name: name.to_owned(), input }
    }
}

#[derive(Default)]
struct Script {
    turns: VecDeque<Vec<Block>>,
    requests: Vec<Value>,
    tool_calls: usize,
}

/// The running stand-in; it stops when dropped.
pub struct ModelStub {
    addr: SocketAddr,
    script: Arc<Mutex<Script>>,
    server: tokio::task::JoinHandle<()>,
}

impl ModelStub {
    /// Serves `turns` in order, then ends every further turn with a text.
    pub async fn start(turns: Vec<Vec<Block>>) -> Self {
        let script = Arc::new(Mutex::new(Script { turns: turns.into(), ..Script::default() }));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind the model stand-in");
        let addr = listener.local_addr().expect("local addr");
        let app = axum::Router::new()
            .route("/v1/messages", axum::routing::post(messages))
            .route("/v1/responses", axum::routing::post(responses))
            .route("/v1beta/models/{call}", axum::routing::post(generate_content))
            .fallback(|| async { (axum::http::StatusCode::NOT_FOUND, "not part of the stand-in") })
            .with_state(Arc::clone(&script));
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self { addr, script, server }
    }

    /// What to give the agent as `ANTHROPIC_BASE_URL`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// What to give Codex as its model provider's `base_url`.
    pub fn openai_base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Every request body received, in order.
    pub fn requests(&self) -> Vec<Value> {
        self.script.lock().expect("script").requests.clone()
    }

    /// The requests of the agent's main loop: those offering tools.
    pub fn main_requests(&self) -> Vec<Value> {
        self.requests().into_iter().filter(offers_tools).collect()
    }
}

impl Drop for ModelStub {
    fn drop(&mut self) {
        self.server.abort();
    }
}

fn offers_tools(body: &Value) -> bool {
    body.get("tools").and_then(Value::as_array).is_some_and(|tools| !tools.is_empty())
}

/// Records the request and takes its turn of the script, with an id per
/// block.
fn next_turn(script: &Mutex<Script>, body: &Value, id_prefix: &str) -> (Vec<Block>, Vec<String>) {
    let mut script = script.lock().expect("script");
    script.requests.push(body.clone());
    let blocks = if offers_tools(body) {
        script.turns.pop_front().unwrap_or_else(|| vec![Block::Text("Done.".into())])
    } else {
        vec![Block::Text("Lore session".into())]
    };
    let ids = blocks
        .iter()
        .map(|_| {
            script.tool_calls += 1;
            format!("{id_prefix}{}", script.tool_calls)
        })
        .collect();
    (blocks, ids)
}

async fn messages(State(script): State<Arc<Mutex<Script>>>, body: axum::body::Bytes) -> Response {
    let Ok(body) = serde_json::from_slice::<Value>(&body) else {
        return (axum::http::StatusCode::BAD_REQUEST, "not JSON").into_response();
    };
    let (blocks, ids) = next_turn(&script, &body, "toolu_stub_");
    let model = body.get("model").cloned().unwrap_or(json!("stand-in"));
    if body.get("stream").and_then(Value::as_bool) != Some(true) {
        return ([(header::CONTENT_TYPE, "application/json")], whole_message(&model, &blocks, &ids).to_string())
            .into_response();
    }
    ([(header::CONTENT_TYPE, "text/event-stream")], event_stream(&model, &blocks, &ids)).into_response()
}

fn stop_reason(blocks: &[Block]) -> &'static str {
    if blocks.iter().any(|block| matches!(block, Block::ToolUse { .. })) { "tool_use" } else { "end_turn" }
}

fn usage() -> Value {
    json!({"input_tokens": 10, "output_tokens": 5})
}

fn whole_message(model: &Value, blocks: &[Block], ids: &[String]) -> Value {
    let content: Vec<Value> = blocks
        .iter()
        .zip(ids)
        .map(|(block, id)| match block {
            Block::Text(text) => json!({"type": "text", "text": text}),
            Block::ToolUse { name, input } => json!({"type": "tool_use", "id": id, "name": name, "input": input}),
        })
        .collect();
    json!({
        "id": "msg_stub", "type": "message", "role": "assistant", "model": model, "content": content,
        "stop_reason": stop_reason(blocks), "stop_sequence": null, "usage": usage(),
    })
}

fn event_stream(model: &Value, blocks: &[Block], ids: &[String]) -> String {
    let mut events = String::new();
    let mut event = |kind: &str, data: Value| events.push_str(&format!("event: {kind}\ndata: {data}\n\n"));
    event(
        "message_start",
        json!({"type": "message_start", "message": {
            "id": "msg_stub", "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": null, "stop_sequence": null, "usage": usage(),
        }}),
    );
    for (index, (block, id)) in blocks.iter().zip(ids).enumerate() {
        let (start, delta) = match block {
            Block::Text(text) => (json!({"type": "text", "text": ""}), json!({"type": "text_delta", "text": text})),
            Block::ToolUse { name, input } => (
                json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
                json!({"type": "input_json_delta", "partial_json": input.to_string()}),
            ),
        };
        event("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": start}));
        event("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": delta}));
        event("content_block_stop", json!({"type": "content_block_stop", "index": index}));
    }
    event(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop_reason(blocks), "stop_sequence": null}, "usage": {"output_tokens": 5}}),
    );
    event("message_stop", json!({"type": "message_stop"}));
    events
}

async fn responses(State(script): State<Arc<Mutex<Script>>>, body: axum::body::Bytes) -> Response {
    let Ok(body) = serde_json::from_slice::<Value>(&body) else {
        return (axum::http::StatusCode::BAD_REQUEST, "not JSON").into_response();
    };
    let (blocks, ids) = next_turn(&script, &body, "call_stub_");
    let mut events = String::new();
    let mut event = |kind: &str, mut data: Value| {
        data["type"] = json!(kind);
        events.push_str(&format!("event: {kind}\ndata: {data}\n\n"));
    };
    let response_id = format!("resp_{}", ids.first().map_or("none", String::as_str));
    event("response.created", json!({"response": {"id": response_id}}));
    for (block, id) in blocks.iter().zip(&ids) {
        let item = match block {
            Block::Text(text) => json!({
                "type": "message", "role": "assistant", "id": format!("msg_{id}"),
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }),
            Block::ToolUse { name, input } => {
                let mut item = json!({"type": "function_call", "call_id": id, "arguments": input.to_string()});
                match name.strip_prefix("mcp__").and_then(|rest| rest.split_once("__")) {
                    Some((server, tool)) => {
                        item["namespace"] = json!(format!("mcp__{server}"));
                        item["name"] = json!(tool);
                    }
                    None => item["name"] = json!(name),
                }
                item
            }
        };
        event("response.output_item.done", json!({ "item": item }));
    }
    event(
        "response.completed",
        json!({"response": {"id": response_id, "usage": {
            "input_tokens": 10, "input_tokens_details": null, "output_tokens": 5,
            "output_tokens_details": null, "total_tokens": 15,
        }}}),
    );
    ([(header::CONTENT_TYPE, "text/event-stream")], events).into_response()
}

async fn generate_content(
    State(script): State<Arc<Mutex<Script>>>,
    axum::extract::Path(call): axum::extract::Path<String>,
    body: axum::body::Bytes,
) -> Response {
    let Ok(body) = serde_json::from_slice::<Value>(&body) else {
        return (axum::http::StatusCode::BAD_REQUEST, "not JSON").into_response();
    };
    let wants_json = body.pointer("/generationConfig/responseMimeType") == Some(&json!("application/json"));
    let parts: Vec<Value> = if wants_json && !offers_tools(&body) {
        script.lock().expect("script").requests.push(body.clone());
        // Gemini's own checks (who speaks next, how hard a task is): the
        // user speaks, and it is easy.
        let answer = json!({"reasoning": "stand-in", "next_speaker": "user",
                            "complexity_reasoning": "stand-in", "complexity_score": 10});
        vec![json!({"text": answer.to_string()})]
    } else {
        let (blocks, _) = next_turn(&script, &body, "gemini_stub_");
        blocks
            .iter()
            .map(|block| match block {
                Block::Text(text) => json!({"text": text}),
                Block::ToolUse { name, input } => json!({"functionCall": {"name": name, "args": input}}),
            })
            .collect()
    };
    let answer = json!({
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": "stand-in",
    });
    if call.ends_with(":streamGenerateContent") {
        ([(header::CONTENT_TYPE, "text/event-stream")], format!("data: {answer}\r\n\r\n")).into_response()
    } else {
        ([(header::CONTENT_TYPE, "application/json")], answer.to_string()).into_response()
    }
}
