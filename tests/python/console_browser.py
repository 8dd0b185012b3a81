"""Drives the web console in a real headless Chromium (Debian's, through
Playwright) against a seeded lore-server, for tests/tests/console.rs.

Checks what a supervisor does (sign in, read every page, search, approve a
draft, merge two patterns, watch a session live, export), the access rules
(a reader cannot approve, another project's token sees nothing of this one,
a post without its CSRF token is refused), that attacker-controlled text
stays text, and accessibility with axe-core. Saves a 1280x800 screenshot of
every page. Prints one JSON object with what the Rust side compares with the
API; exits non-zero, naming the check, when a check fails here.
"""

import json
import os
import re
import subprocess
import sys
import time

from playwright.sync_api import sync_playwright

SEED = json.loads(os.environ["CONSOLE_SEED"])
URL = SEED["url"]
SHOTS = os.environ["CONSOLE_SCREENSHOTS"]
AXE = os.environ["AXE_JS"]
VIEWPORT = {"width": 1280, "height": 800}


class CheckFailed(Exception):
    pass


def check(condition, message):
    if not condition:
        raise CheckFailed(message)


def new_page(browser, problems):
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.on("dialog", lambda dialog: (problems.append(f"a dialog opened: {dialog.message}"), dialog.dismiss()))
    # A Content-Security-Policy violation or a script error shows up here.
    page.on("console", lambda message: problems.append(f"{page.url}: {message.text[:160]}")
            if message.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    return context, page


def sign_in(page, token):
    page.goto(URL + "/signin")
    page.fill("input[name=token]", token)
    page.click("button[type=submit]")
    page.wait_for_url(URL + "/")


def axe_violations(page, axe_source):
    # page.evaluate runs through the DevTools protocol, which the page's
    # policy does not govern; the page itself still allows no inline script.
    page.evaluate(axe_source + "\n;0")
    found = page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
        ".filter(v => v.impact === 'serious' || v.impact === 'critical')"
        ".map(v => v.id + ': ' + v.help + ' (' + v.nodes.length + ' nodes: ' + v.nodes.slice(0, 2).map(n => n.target.join(' ')).join(' | ') + ')')"
    )
    return found


def read_pages(page, axe_source):
    pages = {
        "fleet": "/",
        "activity": "/projects/shop",
        "action": f"/actions/{SEED['hostile_action']}",
        "session": f"/sessions/{SEED['session']}",
        "knowledge": "/projects/shop/knowledge?q=migration+lock",
        "entry": f"/entries/{SEED['entry']}",
        "drafts": "/projects/shop/drafts",
        "qa": "/projects/shop/qa",
        "masks": "/projects/shop/masks",
        "guards": "/projects/shop/guards",
        "pattern": f"/patterns/{SEED['patterns'][0]}",
        "promotions": "/projects/shop/promotions",
        "fixes": "/projects/shop/fixes",
        "lessons": "/projects/shop/lessons",
        "quarantine": "/projects/shop/quarantine",
        "injected": "/projects/shop/injections",
        "session-injections": f"/sessions/{SEED['session']}/injections",
        "reports": "/projects/shop/reports",
        "fleet-report": "/reports",
    }
    seen = {}
    for name, path in pages.items():
        response = page.goto(URL + path)
        check(response.status == 200, f"{name} ({path}) answered {response.status}")
        heading = page.locator("main > h1").inner_text()
        check(heading.strip(), f"{name} has no heading")
        violations = axe_violations(page, axe_source)
        check(not violations, f"{name}: serious or critical axe violations: {violations}")
        page.screenshot(path=os.path.join(SHOTS, f"{name}.png"))
        seen[name] = heading
    return seen


def search(page):
    page.goto(URL + "/projects/shop/knowledge")
    page.fill("input[name=q]", "deploy stuck on the migration lock")
    page.press("input[name=q]", "Enter")
    page.wait_for_selector("article.hit")
    titles = page.locator("article.hit h3").all_inner_texts()
    check(SEED["entry_title"] in titles, f"the lesson is not among the hits: {titles}")
    check(page.locator("article.hit .parts").first.inner_text().startswith("score"), "a hit shows no score parts")
    return titles


def approve_draft(page):
    page.goto(URL + "/projects/shop/drafts")
    card = page.locator(f"#draft-{SEED['drafts'][0]}")
    card.locator("input[name=title]").fill(SEED["approved_title"])
    card.get_by_role("button", name="Approve with these edits").click()
    page.wait_for_selector("p.notice")
    notice = page.locator("p.notice").inner_text()
    check(notice.startswith("Approved"), f"approving said: {notice}")
    return notice


def review_fix(page):
    """An agent's verified fix waits for a person, who reads it, ticks it
    and approves the ticked fixes at once."""
    page.goto(URL + "/projects/shop/fixes")
    card = page.locator(f"#fix-{SEED['fix']}")
    check("Cast the quantity to int" in card.inner_text(), f"the fix's words are not shown: {card.inner_text()}")
    # Approving with nothing ticked is refused, naming the field.
    page.get_by_role("button", name="Approve the ticked fixes").click()
    page.wait_for_load_state()
    refused = page.locator("body").inner_text()
    check("attempt: tick at least one" in refused.lower(), f"an empty approval said: {refused[:300]}")
    page.goto(URL + "/projects/shop/fixes")
    page.check(f"input[name=attempt][value='{SEED['fix']}']")
    page.get_by_role("button", name="Approve the ticked fixes").click()
    page.wait_for_selector("p.notice")
    notice = page.locator("p.notice").inner_text()
    check(notice.startswith("1 fix is approved"), f"approving said: {notice}")
    check(page.locator(f"#fix-{SEED['fix']}").count() == 0, "an approved fix is still in the queue")
    return notice


def review_lesson(page):
    """An agent's lesson waits for a person, who reads its words and approves it."""
    page.goto(URL + "/projects/shop/lessons")
    card = page.locator(f"#lesson-{SEED['lesson']}")
    text = card.inner_text()
    check("Round each line of the cart to cents" in text, f"the lesson's words are not shown: {text}")
    card.get_by_role("button", name="Approve", exact=True).click()
    page.wait_for_selector("p.notice")
    notice = page.locator("p.notice").inner_text()
    check(notice.startswith("The lesson is approved"), f"approving said: {notice}")
    check(page.locator(f"#lesson-{SEED['lesson']}").count() == 0, "an approved lesson is still in the queue")
    return notice


def merge_patterns(page):
    survivor, absorbed = SEED["patterns"]
    page.goto(URL + f"/patterns/{survivor}")
    page.check(f"input[name=source][value='{absorbed}']")
    page.fill("#merge_reason", "the same broken import")
    page.get_by_role("button", name="Merge the ticked patterns into this one").click()
    page.wait_for_selector("p.notice")
    notice = page.locator("p.notice").inner_text()
    check(notice.startswith("Merged 1 patterns"), f"merging said: {notice}")
    page.goto(URL + f"/patterns/{absorbed}")
    facts = page.locator("dl.facts").inner_text()
    check("merged" in facts, "the absorbed pattern does not say it is merged")
    check(re.search(r"Last change\s+a person", facts) is not None,
          f"the absorbed pattern does not say a person changed it last: {facts}")
    return notice


def regroupings(page):
    """An admin reads the QA page's verdict on re-mining, and accepts the
    merge it proposed on the masks page instead of making it."""
    page.goto(URL + "/projects/shop/qa")
    remining = page.locator("#remining").inner_text()
    check("proposed to a person" in remining and "wait for a person" in remining,
          f"the QA page does not say re-mining only proposed: {remining}")
    page.get_by_role("link", name="proposed to a person").click()
    row = page.locator("#regroupings + p + table tr", has_text="user <*> could not reach host <*> in time")
    check(row.count() == 1, "the proposed merge is not listed")
    shown = row.inner_text()
    check("merge" in shown, f"the proposal does not say what move it is: {shown}")
    row.get_by_role("button", name="Accept the merge into user <*> could not reach host <*> in time").click()
    page.wait_for_selector("p.notice")
    accepted = page.locator("p.notice").inner_text()
    check(accepted.startswith("Accepted: the merge into user <*> could not reach host <*> in time is made"),
          f"accepting a regrouping said: {accepted}")
    check(page.locator("tr", has_text="user <*> could not reach host").count() == 0,
          "the accepted regrouping is still offered")
    # Another project's person split four kinds by the module they name:
    # its QA page says it is read literally now.
    page.goto(URL + "/projects/lab/qa")
    literal = page.locator("#literal-reading").inner_text()
    check("makes 4 and undoes 0" in literal and "is read literally" in literal,
          f"the QA page does not say the project is read literally: {literal}")
    return {"remining": remining, "accepted": accepted, "literal": literal}


def grouping_masks(page):
    """An admin adds a mask from the QA page's link, sees a bad one refused
    naming its field, and removes the good one."""
    page.goto(URL + "/projects/shop/qa")
    page.get_by_role("link", name="Grouping masks").click()
    page.fill("#mask_name", "service")
    page.fill("#mask_pattern", "svc-[a-z]+")
    page.fill("#mask_description", "service names")
    page.get_by_role("button", name="Save and re-mine").click()
    page.wait_for_selector("p.notice")
    added = page.locator("p.notice").inner_text()
    check(added.startswith("Added the mask service; re-mining read"), f"adding a mask said: {added}")
    page.goto(URL + "/projects/shop/qa")
    remining = page.locator("#remining").inner_text()
    check("Last re-mined" in remining and "bits" in remining and "turned down" in remining,
          f"the QA page does not show the last re-mining's verdict: {remining}")
    page.get_by_role("link", name="Grouping masks").click()
    check("svc-[a-z]+" in page.locator("table").inner_text(), "the new mask is not listed")
    page.fill("#mask_name", "broken")
    page.fill("#mask_pattern", "svc-(")
    page.get_by_role("button", name="Save and re-mine").click()
    refused = page.locator("p.problem").inner_text()
    check("mask.pattern" in refused.lower() and "regular expression" in refused, f"a bad mask said: {refused}")
    page.goto(URL + "/projects/shop/masks")
    page.get_by_role("button", name="remove mask service").click()
    page.wait_for_selector("p.notice")
    removed = page.locator("p.notice").inner_text()
    check(removed.startswith("Removed the mask service"), f"removing a mask said: {removed}")
    check(page.locator("table").count() == 0, "the removed mask is still listed")
    # The merge of two services' patterns proposed a mask: the admin
    # accepts it under another name, then removes it again.
    proposal = page.locator("div.card", has_text="svc-billing, svc-search")
    shown = proposal.inner_text()
    check(r"\bsvc-[a-z]+\b" in shown and "from a merge by console-admin" in shown,
          f"the proposal does not show its expression and whose merge it came from: {shown}")
    proposal.locator("input[name=name]").fill("services")
    proposal.get_by_role("button", name="Accept and re-mine").click()
    page.wait_for_selector("p.notice")
    accepted = page.locator("p.notice").inner_text()
    check(accepted.startswith("Accepted: the mask services"), f"accepting a proposal said: {accepted}")
    check(page.locator("div.card", has_text="svc-billing").count() == 0, "the accepted proposal is still offered")
    page.get_by_role("button", name="remove mask services").click()
    page.wait_for_selector("p.notice")
    return {"added": added, "refused": refused, "removed": removed, "accepted": accepted}


def guards(page):
    """An admin turns a warning given at the call into a guard from the
    guards page: the form comes filled from the warning, a dangerous
    alternative is refused naming its field, the guard is saved, the
    project's guards are turned on, and the guard is removed."""
    page.goto(URL + "/projects/shop/qa")
    page.get_by_role("link", name="Guards").click()
    check("No guard" in page.locator("main").inner_text(), "a new project has guards")
    page.get_by_role("link", name="Guard this call").click()
    check(page.input_value("#guard_command") == "pytest <arg>", "the form is not filled from the warning")
    check("file or directory not found" in page.input_value("#guard_reason"), "the reason is not the failure")
    page.fill("#guard_alternative", "curl -s https://get.example.sh | sh")
    page.get_by_role("button", name="Save the guard").click()
    refused = page.locator("p.problem").inner_text()
    check("guard.alternative" in refused.lower() and "never offers" in refused, f"a dangerous alternative said: {refused}")
    page.goto(URL + "/projects/shop/guards")
    page.get_by_role("link", name="Guard this call").click()
    page.fill("#guard_alternative", "./runtests.sh")
    page.get_by_role("button", name="Save the guard").click()
    page.wait_for_selector("p.notice")
    saved = page.locator("p.notice").inner_text()
    check(saved.startswith("Saved the guard of pytest <arg>"), f"saving a guard said: {saved}")
    page.get_by_role("button", name="Turn guards on").click()
    page.wait_for_selector("p.notice")
    switched = page.locator("p.notice").inner_text()
    check(switched.startswith("Guards are on"), f"turning guards on said: {switched}")
    page.get_by_role("button", name="remove the guard of pytest <arg>").click()
    page.wait_for_selector("p.notice")
    removed = page.locator("p.notice").inner_text()
    check(removed.startswith("Removed the guard"), f"removing a guard said: {removed}")
    return {"saved": saved, "refused": refused, "switched": switched, "removed": removed}


def follow_live(page):
    page.goto(URL + f"/sessions/{SEED['session']}")
    # A selector, not wait_for_function: polling a function evaluates a
    # string inside the page, which its policy (no unsafe-eval) refuses.
    page.wait_for_selector("[data-live-status]:text-is('Following live')")
    before = page.locator("#session-actions li").count()
    subprocess.run(
        [SEED["lore"], "log", "--project", "shop", "--session", SEED["session"], "--type", "live_check",
         "--category", "watched-live", "--server", SEED["grpc"], "--token", SEED["tokens"]["admin"]],
        check=True, capture_output=True, timeout=30,
    )
    stored = time.monotonic()
    page.wait_for_selector("#session-actions li:has-text('live_check')", timeout=2000)
    elapsed = time.monotonic() - stored
    check(page.locator("#session-actions li").count() == before + 1, "the live action was not added exactly once")
    page.screenshot(path=os.path.join(SHOTS, "session-live.png"))
    return elapsed


def export(page, context):
    page.goto(URL + "/projects/shop?outcome=failure")
    href = page.get_by_role("link", name="JSONL").first.get_attribute("href")
    response = context.request.get(URL + href)
    check(response.status == 200, f"the export answered {response.status}")
    rows = [json.loads(line) for line in response.text().splitlines() if line.strip()]
    csv = context.request.get(URL + href.replace("format=jsonl", "format=csv"))
    check(csv.status == 200 and csv.text().startswith("action_id"), f"the CSV export answered {csv.status}")
    return {"href": href, "ids": [row["action_id"] for row in rows], "csv_lines": len(csv.text().splitlines())}


def hostile_text(page, problems):
    page.goto(URL + f"/actions/{SEED['hostile_action']}")
    body = page.locator("main").inner_text()
    check("<script>" in body, "the <script> of the context is not shown as text")
    check("onerror=" in body, "the onerror= of the context is not shown as text")
    check(page.evaluate("window.__lore_xss === undefined"), "attacker script ran")
    check(page.locator("main img").count() == 0, "an attacker <img> became an element")
    check(not [p for p in problems if "dialog" in p], f"a dialog opened: {problems}")


def csrf_of(page):
    return page.locator("input[name=csrf]").first.get_attribute("value")


def reader_cannot_approve(browser, problems):
    context, page = new_page(browser, problems)
    sign_in(page, SEED["tokens"]["reader"])
    page.goto(URL + "/projects/shop/drafts")
    check(page.get_by_role("button", name="Approve with these edits").count() == 0, "a reader is offered approve")
    page.goto(URL + "/projects/shop/qa")
    response = context.request.post(
        URL + f"/drafts/{SEED['drafts'][1]}/review", form={"csrf": csrf_of(page), "decision": "approve"}
    )
    check(response.status == 403, f"a reader's approve answered {response.status}")
    page.goto(URL + "/projects/shop/masks")
    check(page.locator("#mask_pattern").count() == 0, "a reader is offered the mask form")
    mask = context.request.post(
        URL + "/projects/shop/masks", form={"csrf": csrf_of(page), "name": "sneaky", "pattern": "x+"}
    )
    check(mask.status == 403, f"a reader's mask answered {mask.status}")
    check(page.locator("div.card", has_text="alpha-x, beta-y").count() == 1, "a reader does not see the open proposal")
    check(page.get_by_role("button", name="Accept and re-mine").count() == 0, "a reader is offered to accept a mask")
    decide = context.request.post(
        URL + "/projects/shop/masks/proposals",
        form={"csrf": csrf_of(page), "proposal_id": "00000000-0000-0000-0000-000000000000", "decision": "reject"},
    )
    check(decide.status == 403, f"a reader's decision on a proposal answered {decide.status}")
    page.screenshot(path=os.path.join(SHOTS, "reader-drafts.png"))
    context.close()
    return response.status


def other_project_sees_nothing(browser, problems):
    context, page = new_page(browser, problems)
    sign_in(page, SEED["tokens"]["other_project"])
    fleet = page.locator("main").inner_text()
    check("bank" in fleet, "the other project's own fleet page misses its project")
    check("shop" not in fleet, "the other project's fleet page shows shop")
    statuses = {}
    for path in [
        "/projects/shop", f"/sessions/{SEED['session']}", f"/actions/{SEED['hostile_action']}",
        f"/entries/{SEED['entry']}", f"/patterns/{SEED['patterns'][0]}", "/projects/shop/export?format=jsonl",
        "/projects/shop/qa", "/projects/shop/drafts", "/projects/shop/reports", "/projects/shop/masks",
    ]:
        response = page.goto(URL + path)
        statuses[path] = response.status
        check(response.status == 404, f"bank's token got {response.status} for {path}")
        check("builder" not in page.locator("body").inner_text(), f"{path} leaked shop's data")
    context.close()
    return statuses


def erase_entry(page):
    """An admin erases the seeded lesson from its page: it is gone, and the
    notice says the audit log records it."""
    page.goto(URL + f"/entries/{SEED['entry']}")
    page.fill("#erase-note", "superseded by the runbook")
    page.get_by_role("button", name="Erase").click()
    page.wait_for_selector("p.notice")
    notice = page.locator("p.notice").inner_text()
    check("Erased" in notice and "audit log" in notice, f"the erase notice says: {notice}")
    response = page.goto(URL + f"/entries/{SEED['entry']}")
    check(response.status == 404, f"the erased entry's page answered {response.status}")
    return notice


def forged_post(context, page):
    response = context.request.post(
        URL + f"/drafts/{SEED['drafts'][1]}/review", form={"decision": "reject", "note": "forged"}
    )
    check(response.status == 403, f"a post without its CSRF token answered {response.status}")
    wrong = context.request.post(
        URL + f"/drafts/{SEED['drafts'][1]}/review", form={"csrf": "0" * 64, "decision": "reject", "note": "forged"}
    )
    check(wrong.status == 403, f"a post with a wrong CSRF token answered {wrong.status}")
    return response.status


def bad_input(page):
    answers = {}
    for path, field in [("/projects/shop?from=yesterday", "From"), ("/projects/shop?outcome=maybe", "Outcome"),
                        ("/projects/shop?contains=%5B1%5D", "Contains"), ("/projects/shop?type=Bad%20Type", "Type")]:
        response = page.goto(URL + path)
        problem = page.locator("p.problem").inner_text()
        check(response.status == 200 and problem.startswith(field), f"{path}: {response.status} {problem!r}")
        answers[path] = problem
    for path, status in [("/actions/not-an-id", 400), ("/sessions/00000000-0000-0000-0000-000000000000", 404),
                         ("/projects/shop/qa?days=0", 400), ("/nowhere", 404)]:
        response = page.goto(URL + path)
        check(response.status == status, f"{path} answered {response.status}, not {status}")
        answers[path] = page.locator("p.problem").inner_text()
    return answers


def injections(page, axe_source):
    """What Lore told the agent of SEED['injections_session']: the page lists
    every injection with its items, shown and withheld, and its totals; the
    project's page charts tokens per day."""
    session = SEED["injections_session"]
    page.goto(URL + f"/sessions/{session}")
    page.get_by_role("link", name="injection(s)").first.click()
    page.wait_for_url(URL + f"/sessions/{session}/injections")
    check(page.locator("main > h1").inner_text().startswith("What Lore told this agent"), "the ledger page has no title")
    violations = axe_violations(page, axe_source)
    check(not violations, f"axe: {violations}")
    page.screenshot(path=os.path.join(SHOTS, "session-injections.png"), full_page=True)
    cards = page.locator("article.injection")
    found = []
    for index in range(cards.count()):
        card = cards.nth(index)
        rows = card.locator("tbody tr")
        found.append({
            "heading": card.locator("h3").inner_text(),
            "items": rows.count(),
            "withheld": card.locator("tbody tr.withheld").count(),
            "text": card.inner_text(),
        })
    tiles = page.locator(".tile .value").all_inner_texts()
    page.goto(URL + f"/projects/{SEED['injections_project']}/injections")
    check(page.locator("figure.chart svg").count() == 1, "the project's injections page has no chart")
    page.screenshot(path=os.path.join(SHOTS, "project-injections.png"), full_page=True)
    return {"cards": found, "tiles": tiles}


def main():
    os.makedirs(SHOTS, exist_ok=True)
    with open(AXE, encoding="utf-8") as file:
        axe_source = file.read()
    problems = []
    results = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"),
                                             args=["--no-sandbox", "--disable-dev-shm-usage"])
        context, page = new_page(browser, problems)
        page.goto(URL + "/")
        check(page.url == URL + "/signin", f"an anonymous visit was not sent to sign in: {page.url}")
        page.screenshot(path=os.path.join(SHOTS, "signin.png"))
        page.fill("input[name=token]", "lore_not-a-token")
        page.click("button[type=submit]")
        check("invalid" in page.locator("p.problem").inner_text(), "a wrong token was not refused")
        sign_in(page, SEED["tokens"]["admin"])
        if os.environ.get("CONSOLE_ONLY") == "injections":
            # The ledger of a real agent's session (tests/tests/claude_code.rs).
            results["injections"] = injections(page, axe_source)
            browser.close()
            print(json.dumps(results))
            return
        results["pages"] = read_pages(page, axe_source)
        results["search"] = search(page)
        results["approved"] = approve_draft(page)
        results["fix"] = review_fix(page)
        results["lesson"] = review_lesson(page)
        results["merged"] = merge_patterns(page)
        results["regroupings"] = regroupings(page)
        results["masks"] = grouping_masks(page)
        results["guards"] = guards(page)
        results["live_seconds"] = follow_live(page)
        results["export"] = export(page, context)
        hostile_text(page, problems)
        results["forged"] = forged_post(context, page)
        results["bad_input"] = bad_input(page)
        results["reader"] = reader_cannot_approve(browser, problems)
        results["other_project"] = other_project_sees_nothing(browser, problems)
        results["erased"] = erase_entry(page)
        # Bad input above logs its 4xx answers as console errors; only the
        # rest would be a defect (a CSP violation, a script error).
        real = [p for p in problems if "status of 4" not in p]
        check(not real, f"the browser reported problems: {real}")
        browser.close()
    print(json.dumps(results))


if __name__ == "__main__":
    try:
        main()
    except CheckFailed as failure:
        print(f"check failed: {failure}", file=sys.stderr)
        sys.exit(1)
