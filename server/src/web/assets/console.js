// Lore console: progressive enhancement only; every page works without it.
// No inline script is allowed by the page's Content-Security-Policy, so
// behaviour hangs off data- attributes.
"use strict";

// A list that follows new items live: <ol data-live="/sessions/ID/live">.
// The server sends each new action as an HTML fragment it escaped itself.
function follow(list) {
  const status = document.querySelector("[data-live-status]");
  const source = new EventSource(list.dataset.live);
  const say = (text) => { if (status) status.textContent = text; };
  source.addEventListener("open", () => say("Following live"));
  source.addEventListener("error", () => say("Reconnecting…"));
  source.addEventListener("action", (event) => {
    const template = document.createElement("template");
    template.innerHTML = event.data;
    const item = template.content.firstElementChild;
    if (!item || (item.id && document.getElementById(item.id))) return;
    item.classList.add("fresh");
    list.append(item);
    const count = document.querySelector("[data-live-count]");
    if (count) count.textContent = String(list.children.length);
  });
}

// <button data-select-all="name">: ticks every checkbox of that name.
function selectAll(button) {
  button.addEventListener("click", () => {
    document.querySelectorAll(`input[type=checkbox][name="${button.dataset.selectAll}"]`)
      .forEach((box) => { box.checked = true; });
  });
}

document.querySelectorAll("[data-live]").forEach(follow);
document.querySelectorAll("[data-select-all]").forEach(selectAll);
