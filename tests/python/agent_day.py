"""An agent's day against Lore, from a client Lore did not write: Python
stubs that grpcio-tools generated from proto/ (PYTHONPATH points at them).

Run in phases, each its own process, by tests/tests/python_agent.rs:

    agent_day.py yesterday          another agent's history: a lesson, failures
    agent_day.py morning STATE      plan, work, lose the server, keep working
    agent_day.py afternoon STATE    a new process resumes, fails, fixes, exports

The morning asks its driver to stop and start the server by printing
`need: stop-server` / `need: start-server` and waiting for `done` on stdin.
Every step asserts its result; any failure exits non-zero with the reason.

Environment: LORE_SERVER and LORE_SIDECAR (host:port), LORE_TOKEN (an
agent token for project lore).
"""

import json
import os
import sys
import time
import uuid

import grpc
from google.protobuf import struct_pb2, timestamp_pb2

from lore.v1 import actions_pb2 as actions
from lore.v1 import actions_pb2_grpc as actions_grpc
from lore.v1 import common_pb2 as common
from lore.v1 import knowledge_pb2 as knowledge
from lore.v1 import knowledge_pb2_grpc as knowledge_grpc
from lore.v1 import qa_pb2 as qa
from lore.v1 import qa_pb2_grpc as qa_grpc

PROJECT = "lore"
AGENT = "py-agent"
LESSON = "Login tests fail when the database is not ready: retry the connection"
METADATA = [("authorization", "Bearer " + os.environ["LORE_TOKEN"])]


def step(text):
    print("step: " + text, flush=True)


def need(request):
    print("need: " + request, flush=True)
    answer = sys.stdin.readline().strip()
    assert answer == "done", "driver answered %r to %s" % (answer, request)


def now():
    stamp = timestamp_pb2.Timestamp()
    stamp.GetCurrentTime()
    return stamp


def context(**fields):
    value = struct_pb2.Struct()
    value.update(fields)
    return value


def server_stubs():
    channel = grpc.insecure_channel(os.environ["LORE_SERVER"])
    return (
        actions_grpc.ActionServiceStub(channel),
        knowledge_grpc.KnowledgeServiceStub(channel),
        qa_grpc.QaLearningServiceStub(channel),
    )


def task(task_id, title):
    return qa.Task(task_id=task_id, title=title, category="backend", files=["server/src/login.rs"])


def capture(qa_stub, task_id, title, session_id=""):
    return qa_stub.CaptureFailure(
        qa.CaptureFailureRequest(
            failure_id=str(uuid.uuid4()),
            project=PROJECT,
            task=task(task_id, title),
            session_id=session_id,
            error_messages=["test login::submit failed: connection refused (os error 111) to 127.0.0.1:5432"],
            files_modified=["server/src/login.rs"],
            occurred_at=now(),
        ),
        metadata=METADATA,
    )


def yesterday():
    _, knowledge_stub, qa_stub = server_stubs()
    step("another agent wrote a lesson")
    entry = knowledge.Entry(
        project=PROJECT,
        kind=knowledge.ENTRY_KIND_LEARNING,
        title=LESSON,
        body="The login tests open a connection before PostgreSQL accepts them. Retry with backoff.",
        category="testing",
    )
    stored = knowledge_stub.UpsertEntry(knowledge.UpsertEntryRequest(entry=entry), metadata=METADATA)
    assert stored.entry.entry_id, stored
    step("and failed the same way twice")
    for task_id in ("T-1", "T-2"):
        response = capture(qa_stub, task_id, "fix the login form validation")
        assert response.ack.id and not response.ack.duplicate, response


def log(stub, session_id, index, outcome=common.OUTCOME_SUCCESS):
    action_id = str(uuid.uuid4())
    response = stub.LogAction(
        actions.LogActionRequest(
            action=actions.Action(
                action_id=action_id,
                session_id=session_id,
                project=PROJECT,
                agent_id=AGENT,
                action_type="shell",
                category="build",
                context=context(command="cargo test -p login", step=index, token="sk_live_ReTllpYQYfIZu2Jnf2lAPFjD"),
                outcome=outcome,
                duration_ms=40 + index,
                occurred_at=now(),
            )
        ),
        metadata=METADATA,
    )
    assert response.ack.id == action_id, response
    return action_id


def morning(state_file):
    sidecar = actions_grpc.ActionServiceStub(grpc.insecure_channel(os.environ["LORE_SIDECAR"]))
    _, knowledge_stub, qa_stub = server_stubs()

    step("start a session through the sidecar")
    started = sidecar.StartSession(
        actions.StartSessionRequest(project=PROJECT, agent_id=AGENT, kind=actions.SESSION_KIND_WORK),
        metadata=METADATA,
    )
    session_id = started.session.session_id
    assert session_id and started.session.agent_id == AGENT, started
    # Knowledge and QA calls with the session id become tool_call actions.
    as_tool = METADATA + [("x-lore-session-id", session_id), ("x-lore-agent-id", AGENT)]

    step("search knowledge before planning")
    found = knowledge_stub.Search(
        knowledge.SearchRequest(
            project=PROJECT,
            query=knowledge.SearchQuery(text="login test fails: connection refused to the database", limit=3),
        ),
        metadata=as_tool,
    )
    assert found.hits and found.hits[0].entry.title == LESSON, found

    step("get QA warnings for the task")
    warned = qa_stub.GetWarnings(
        qa.GetWarningsRequest(project=PROJECT, task=task("T-3", "fix the login form validation"), session_id=session_id),
        metadata=as_tool,
    )
    assert warned.warnings, warned
    assert "connection\u02c6refused" in warned.warnings[0].text, warned.warnings[0]

    step("log actions through the sidecar")
    action_ids = [log(sidecar, session_id, index) for index in range(5)]

    need("stop-server")
    step("keep logging while the server is gone")
    action_ids += [log(sidecar, session_id, index) for index in range(5, 9)]
    action_ids.append(log(sidecar, session_id, 9, common.OUTCOME_FAILURE))
    need("start-server")

    with open(state_file, "w") as state:
        json.dump(
            {
                "session_id": session_id,
                "action_ids": action_ids,
                "delivery_ids": [warning.delivery_id for warning in warned.warnings],
            },
            state,
        )


def resume(actions_stub, session_id, expected):
    """Resumes the agent's last session once every expected action is on
    the server (the sidecar ships the outage's actions on reconnect)."""
    deadline = time.monotonic() + 60
    while True:
        events = list(
            actions_stub.Resume(
                actions.ResumeRequest(project=PROJECT, agent_id=AGENT, recent_limit=50), metadata=METADATA
            )
        )
        summary = events[0].summary
        seen = [event.action.action_id for event in events if event.HasField("action")]
        if set(expected) <= set(seen) or time.monotonic() > deadline:
            return summary, seen
        time.sleep(0.2)


def afternoon(state_file):
    with open(state_file) as state:
        state = json.load(state)
    actions_stub, _, qa_stub = server_stubs()

    step("resume from the action log in a new process")
    summary, seen = resume(actions_stub, state["session_id"], state["action_ids"])
    assert summary.session.session_id == state["session_id"], summary
    missing = set(state["action_ids"]) - set(seen)
    assert not missing, "actions lost: %s" % missing
    assert summary.last_action.outcome == common.OUTCOME_FAILURE, summary.last_action

    step("capture the failure")
    captured = capture(qa_stub, "T-3", "fix the login form validation", state["session_id"])
    assert captured.links and captured.links[0].pattern_id, captured
    assert not captured.links[0].new_pattern, "the warned-about pattern recurred: %s" % captured

    step("record the fix")
    fixed = qa_stub.RecordFixAttempt(
        qa.RecordFixAttemptRequest(
            attempt_id=str(uuid.uuid4()),
            failure_id=captured.ack.id,
            attempt_number=1,
            approach="retry the database connection with backoff",
            files_changed=["server/src/login.rs"],
            outcome=qa.FIX_OUTCOME_SUCCESS,
        ),
        metadata=METADATA,
    )
    assert fixed.ack.id and fixed.resolved, fixed

    step("record what the warning did")
    recorded = qa_stub.RecordOutcome(
        qa.RecordOutcomeRequest(delivery_ids=state["delivery_ids"], outcome=qa.WARNING_OUTCOME_FAILED_ANYWAY),
        metadata=METADATA,
    )
    # Capturing the failure of a warned task already recorded the warning as
    # failed anyway: nothing left to update, and the pattern's standing says so.
    assert recorded.updated == 0, recorded
    assert recorded.patterns and recorded.patterns[0].effectiveness == 0.0, recorded

    step("export the day as training data")
    chunks = list(
        actions_stub.Export(
            actions.ExportRequest(
                project=PROJECT, format=actions.EXPORT_FORMAT_JSONL, session_id=state["session_id"]
            ),
            metadata=METADATA,
        )
    )
    assert chunks and chunks[-1].last, chunks[-1:]
    rows = [json.loads(line) for line in b"".join(chunk.data for chunk in chunks).decode().splitlines()]
    exported = {row["action_id"] for row in rows}
    assert set(state["action_ids"]) <= exported, "not exported: %s" % (set(state["action_ids"]) - exported)
    assert len(rows) == len(exported), "an action exported twice"
    assert all("sk_live_" not in json.dumps(row) for row in rows), "a secret reached the export"
    tool_calls = [row for row in rows if row.get("action_type") == "tool_call"]
    assert len(tool_calls) == 2, "the search and the warnings, as tool calls: %s" % tool_calls
    print("exported %d actions" % len(rows), flush=True)


if __name__ == "__main__":
    phase = sys.argv[1]
    if phase == "yesterday":
        yesterday()
    elif phase == "morning":
        morning(sys.argv[2])
    elif phase == "afternoon":
        afternoon(sys.argv[2])
    else:
        sys.exit("unknown phase " + phase)
    print("ok: " + phase, flush=True)
