// svclab ui: polls /api/state and draws the lab; sends traffic on request.
// Everything the page shows comes from this server; nothing from elsewhere.
// The link `svclab ui` printed carries the page's token after "#" (the
// browser never sends it): the page trades it for a session cookie that
// no script can read, and takes it off the address bar.
"use strict";

const pollEvery = 2000;
const noSession = "no session: open the link `svclab ui` printed in its terminal (it ends in #token=…)";
let shownGeneration = null;
let shownTrace = null;
let shownTraffic = null;

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else e.setAttribute(k, v);
  }
  for (const c of children) {
    if (c !== null && c !== undefined) e.append(c);
  }
  return e;
}

// setSVG puts an SVG document drawn by svclab itself (labs/graph,
// labs/traffic/bars: every text escaped) into a container, inline.
function setSVG(container, svgText) {
  const doc = new DOMParser().parseFromString(svgText, "image/svg+xml");
  const svg = doc.documentElement;
  if (svg.nodeName !== "svg") return;
  container.replaceChildren(document.importNode(svg, true));
}

// withoutJump is a rule's spec without its "-j TARGET" (shown apart).
function withoutJump(rule) {
  return rule.spec.split(" ").filter((w, i, all) => !(w === "-j" || w === "-g" || (i > 0 && (all[i - 1] === "-j" || all[i - 1] === "-g")))).join(" ");
}

function renderRule(rule) {
  const li = el("li", { "data-packets": String(rule.packets), "class": rule.packets > 0 ? "hit" : "" },
    el("span", { "class": "count", title: rule.bytes + " bytes" }, String(rule.packets)),
    el("span", { "class": "rule" },
      rule.target ? el("span", { "class": "target" }, "→ " + rule.target + " ") : null,
      el("span", { "class": "comment" }, rule.comment ? rule.comment : withoutJump(rule))));
  li.title = rule.spec;
  return li;
}

// renderChain is a chain's box; an ip6tables chain (family "IPv6") says
// so in its heading and its data-family, beside the IPv4 chain of the
// same name.
function renderChain(chain, ol) {
  if (!chain.family) return el("div", { "class": "chain", "data-chain": chain.name }, el("h4", {}, chain.name), ol);
  return el("div", { "class": "chain family-" + chain.family, "data-chain": chain.name, "data-family": chain.family },
    el("h4", {}, chain.name, el("span", { "class": "family" }, chain.family)), ol);
}

function renderNode(node) {
  const section = el("section", { "class": "node", "data-node": node.name },
    el("h3", {}, node.name, el("span", { "class": "mode" }, (node.mode || "no proxy") + (node.backend ? " · " + node.backend : ""))));
  if (node.error) section.append(el("div", { "class": "error" }, node.error));
  for (const chain of node.chains || []) {
    const ol = el("ol");
    for (const rule of chain.rules) ol.append(renderRule(rule));
    section.append(renderChain(chain, ol));
  }
  for (const vs of node.virtualServers || []) {
    const ol = el("ol");
    for (const rs of vs.real) {
      ol.append(el("li", { "data-packets": String(rs.stats.inPkts), "class": rs.stats.inPkts > 0 ? "hit" : "" },
        el("span", { "class": "count" }, String(rs.stats.inPkts)),
        el("span", { "class": "rule" }, el("span", { "class": "target" }, "→ " + rs.address + " "),
          el("span", { "class": "comment" }, rs.stats.conns + " connections"))));
    }
    section.append(el("div", { "class": "chain", "data-chain": vs.protocol + " " + vs.address },
      el("h4", {}, vs.protocol + " " + vs.address + " — " + vs.stats.inPkts + " packets in"), ol));
  }
  return section;
}

function renderServices(services) {
  const select = document.getElementById("service");
  const chosen = select.value;
  const keys = services.map(s => s.key).join("\n");
  if (select.dataset.keys !== keys) {
    select.replaceChildren(...services.map(s => el("option", { value: s.key, title: s.target }, s.key)));
    select.dataset.keys = keys;
    if (services.some(s => s.key === chosen)) select.value = chosen;
  }
  document.getElementById("send").disabled = services.length === 0 || select.dataset.busy === "1";
}

function renderTrace(trace) {
  const box = document.getElementById("trace");
  const key = trace.present ? trace.modified : "";
  if (key === shownTrace) return;
  shownTrace = key;
  if (!trace.present) {
    box.replaceChildren(el("p", { "class": "muted" }, "no trace yet"));
    return;
  }
  box.replaceChildren(el("img", { src: "/api/trace.svg?t=" + encodeURIComponent(trace.modified), alt: "the last svclab trace" }));
}

function renderTraffic(view) {
  if (!view || view === shownTraffic) return;
  shownTraffic = view;
  const box = document.getElementById("traffic-result");
  box.dataset.verdict = view.verdict;
  box.dataset.service = view.service;
  setSVG(box, view.svg);
  document.getElementById("traffic-message").replaceChildren(
    el("span", { "class": "verdict-" + view.verdict }, view.verdict.toUpperCase()),
    el("span", {}, " · " + view.count + " connections from " + view.from + " to " + view.service + " (" + view.target + ")"));
}

function render(state) {
  document.getElementById("lab").textContent = state.lab;
  document.getElementById("client").textContent = state.client;
  document.title = "svclab ui — " + state.lab;
  if (state.generation !== shownGeneration) {
    setSVG(document.getElementById("topology"), state.topology);
    shownGeneration = state.generation;
  }
  document.getElementById("nodes").replaceChildren(...state.nodes.map(renderNode));
  renderServices(state.services);
  renderTrace(state.trace);
  if (state.traffic && (!shownTraffic || state.traffic.svg !== shownTraffic.svg)) renderTraffic(state.traffic);
  const modes = [...new Set(state.nodes.map(n => n.mode || "?"))].join(", ");
  document.getElementById("status").textContent =
    state.nodes.length + " node" + (state.nodes.length === 1 ? "" : "s") + " · proxy mode " + modes +
    " · generation " + state.generation + " · updated " + new Date().toLocaleTimeString();
}

// failure is the message of a response that is not ok.
async function failure(resp) {
  if (resp.status === 401) return noSession;
  try {
    const body = await resp.json();
    if (body.error) return body.error;
  } catch (err) {
    // not JSON: the status says it
  }
  return resp.status + " " + resp.statusText;
}

async function refresh() {
  try {
    const resp = await fetch("/api/state", { cache: "no-store" });
    if (!resp.ok) throw new Error(await failure(resp));
    render(await resp.json());
    document.body.dataset.loaded = "1";
  } catch (err) {
    document.getElementById("status").textContent = "cannot read the lab: " + err.message;
  }
}

// openSession trades the token for the session cookie.
async function openSession(token) {
  const resp = await fetch("/api/session", {
    method: "POST", cache: "no-store",
    headers: { "Content-Type": "application/json", "X-Svclab-Token": token },
  });
  if (!resp.ok) throw new Error(await failure(resp));
}

async function send(service, count) {
  const select = document.getElementById("service");
  const button = document.getElementById("send");
  select.dataset.busy = "1";
  button.disabled = true;
  document.getElementById("traffic-message").textContent = "sending " + count + " connections to " + service + "…";
  try {
    const resp = await fetch("/api/traffic", {
      method: "POST", cache: "no-store",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ service: service, count: count }),
    });
    if (!resp.ok) throw new Error(await failure(resp));
    renderTraffic(await resp.json());
  } catch (err) {
    document.getElementById("traffic-message").replaceChildren(el("span", { "class": "verdict-fail" }, "traffic failed: " + err.message));
  } finally {
    select.dataset.busy = "";
    button.disabled = false;
    await refresh();
  }
}

// The topology's text is small beside the chains: "enlarge" gives it the
// page's whole width (the other panels follow below it).
document.getElementById("zoom").addEventListener("click", () => {
  const zoomed = document.querySelector("main").classList.toggle("zoomed");
  document.getElementById("zoom").textContent = zoomed ? "back" : "enlarge";
});

document.getElementById("traffic-form").addEventListener("submit", ev => {
  ev.preventDefault();
  const count = parseInt(document.getElementById("count").value, 10) || 300;
  send(document.getElementById("service").value, count);
});

// #token=T[&send=KEY[&count=N]]: the link `svclab ui` printed, and for
// tests a traffic run once the page has loaded — only with the token, so
// another site's link sends nothing.
(async function start() {
  const params = new URLSearchParams(location.hash.slice(1));
  const token = params.get("token");
  let autoSend = null;
  if (token) {
    history.replaceState(null, "", location.pathname);
    try {
      await openSession(token);
      if (params.get("send")) autoSend = { service: params.get("send"), count: parseInt(params.get("count") || "300", 10) };
    } catch (err) {
      document.getElementById("status").textContent = "cannot open a session: " + err.message;
    }
  }
  await refresh();
  if (autoSend) {
    document.getElementById("service").value = autoSend.service;
    document.getElementById("count").value = String(autoSend.count);
    await send(autoSend.service, autoSend.count);
  }
  setInterval(refresh, pollEvery);
})();
