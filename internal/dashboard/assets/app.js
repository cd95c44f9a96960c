// galeon dashboard: polls the admin HTTP API every 2 s and draws the
// cluster. Everything shown comes from /api/tables/*; the buttons post to
// /api/actions, which runs the same SQL an operator would type.
"use strict";

const POLL_MS = 2000;
const WINDOW = 150; // points kept per chart: 5 minutes at 2 s
const COLORS = ["#0969da", "#cf222e", "#1a7f37", "#8250df", "#b58100", "#bf3989", "#1b7c83", "#57606a"];

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

// api is an API URL on this origin. It is built from location.origin, not
// relative to the page: a page opened as http://user:pw@host/ui/ would
// otherwise resolve to URLs with credentials, which fetch() refuses.
const api = (path) => location.origin + "/api/" + path;

async function table(name) {
  const r = await fetch(api("tables/" + name + (name === "events" ? "?limit=60" : "")), { credentials: "same-origin", cache: "no-store" });
  if (r.status === 404) return [];
  if (!r.ok) throw new Error(name + ": HTTP " + r.status);
  return r.json();
}

function byName(rows, key) {
  const m = {};
  for (const r of rows) m[r[key]] = r;
  return m;
}

const num = (v) => { const f = parseFloat(v); return isNaN(f) ? null : f; };

// --- charts -----------------------------------------------------------------

const charts = {};
const series = { t: [], by: {} }; // by[chart][node] = values aligned with t

// chart creates the chart id. Its y axis starts at 0 and reaches at least
// minTop, so an idle series reads as a flat zero, not as noise magnified.
function chart(id, fmt, minTop) {
  if (charts[id] || typeof uPlot === "undefined") return charts[id];
  const div = document.getElementById(id);
  const nodes = Object.keys(series.by[id] || {}).sort();
  const opts = {
    width: Math.max(280, div.clientWidth || 400), height: 180,
    scales: { x: { time: true }, y: { range: (u, min, max) => [0, Math.max(max || 0, minTop)] } },
    axes: [{}, { values: (u, vals) => vals.map(fmt), size: 70 }],
    series: [{}].concat(nodes.map((n, i) => ({ label: n, stroke: COLORS[i % COLORS.length], width: 1.5, value: (u, v) => v == null ? "–" : fmt(v) }))),
  };
  const c = new uPlot(opts, [[]].concat(nodes.map(() => [])), div);
  c._nodes = nodes.join(",");
  charts[id] = c;
  return c;
}

function push(id, node, value) {
  const by = (series.by[id] = series.by[id] || {});
  if (!by[node]) by[node] = new Array(series.t.length - 1).fill(null);
  by[node].push(value);
}

function redraw(id, fmt, minTop) {
  if (typeof uPlot === "undefined") return;
  const by = series.by[id] || {};
  const nodes = Object.keys(by).sort();
  for (const n of nodes) while (by[n].length < series.t.length) by[n].push(null);
  let c = charts[id];
  if (c && c._nodes !== nodes.join(",")) { c.destroy(); delete charts[id]; document.getElementById(id).textContent = ""; c = null; }
  c = c || chart(id, fmt, minTop);
  c.setData([series.t].concat(nodes.map((n) => by[n])));
}

window.addEventListener("resize", () => {
  for (const [id, c] of Object.entries(charts)) c.setSize({ width: Math.max(280, document.getElementById(id).clientWidth), height: 180 });
});

// --- state from the previous poll, for rates ---------------------------------

let prev = null; // {at, queries: {node: n}, cert: {node: n}, fcns: {node: n}}

function rate(now, before, dt) {
  if (now == null || before == null || dt <= 0 || now < before) return null;
  return (now - before) / dt;
}

// --- drawing ------------------------------------------------------------------

function stateClass(server, check) {
  if (server && server.status === "ONLINE" && (!check || check.local_state === "Synced")) return "ok";
  if (server && server.admin_state === "drain") return "warn";
  if (check && (check.local_state === "Donor/Desynced" || check.local_state === "Joining" || check.local_state === "Joined")) return "warn";
  return "bad";
}

function drawNodes(servers, checks, pool, writer) {
  const box = document.getElementById("nodes");
  box.textContent = "";
  const cs = byName(checks, "name");
  const ps = byName(pool, "srv_name");
  for (const s of servers) {
    const c = cs[s.name] || {};
    const isWriter = writer && writer.node === s.name;
    const dl = el("dl", {},
      // A node that stopped answering keeps its last wsrep figures in
      // galera_checks; say so rather than show a dead node as Synced.
      el("dt", {}, "state"), el("dd", {}, c.error ? "unreachable · was " + (c.local_state || "?")
        : (c.local_state || "?") + (c.cluster_status ? " · " + c.cluster_status : "")),
      el("dt", {}, "routing"), el("dd", {}, s.status + (s.reason ? " (" + s.reason + ")" : "")),
      el("dt", {}, "address"), el("dd", {}, s.address),
      el("dt", {}, "weights"), el("dd", {}, "writer " + s.writer_weight + " · reader " + s.reader_weight),
      s.site ? el("dt", {}, "site") : null, s.site ? el("dd", {}, s.site) : null,
      c.segment != null ? el("dt", {}, "segment") : null, c.segment != null ? el("dd", {}, String(c.segment)) : null,
      el("dt", {}, "cluster"), el("dd", {}, (c.cluster_size || "?") + " nodes · seqno " + (c.last_committed || "?")),
      ps[s.name] ? el("dt", {}, "connections") : null,
      ps[s.name] ? el("dd", {}, ps[s.name].ConnUsed + " used · " + ps[s.name].ConnFree + " idle") : null,
      // Settings that let a crash of every node lose acknowledged
      // commits (galera.DurabilityRisk).
      c.durability_risk ? el("dt", {}, "durability") : null,
      c.durability_risk ? el("dd", { class: "risk" }, c.durability_risk) : null);
    const actions = el("div", { class: "actions" });
    if (s.admin_state === "drain") actions.append(el("button", { onclick: () => act("undrain", s.name) }, "Undrain"));
    else actions.append(el("button", { onclick: () => act("drain", s.name) }, "Drain"));
    if (!isWriter && s.status === "ONLINE" && s.writer_weight > 0) actions.append(el("button", { onclick: () => act("switchover", s.name) }, "Make writer"));
    box.append(el("div", { class: "card " + stateClass(s, checks.length ? c : null) },
      el("span", { class: "role" + (isWriter ? " writer" : "") }, isWriter ? "writer" : (s.role || "")),
      el("div", { class: "name" }, s.name), dl, actions));
  }
}

function drawTransfers(transfers) {
  const box = document.getElementById("transfers");
  box.textContent = "";
  for (const x of transfers) {
    const pct = num(x.percent);
    box.append(el("div", { class: "transfer" },
      el("span", { class: "arrow" }, (x.donor || "?") + " → " + x.node), " " + x.kind + " ",
      pct != null ? el("progress", { max: "100", value: String(pct) }) : null,
      " " + (pct != null ? pct.toFixed(0) + "% · " : "") + (x.done || "") + (x.total ? " of " + x.total : "") +
      (x.eta_s ? " · ETA " + x.eta_s + " s" : "")));
  }
}

function drawOperations(ops) {
  const box = document.getElementById("operation");
  const running = ops.filter((o) => o.step !== "planned");
  box.textContent = "";
  box.hidden = running.length === 0;
  for (const o of running) {
    const done = num(o.nodes_done), total = num(o.nodes_total);
    box.append(el("div", { class: "transfer" + (o.failed ? " stopped" : "") },
      el("span", { class: "arrow" }, o.kind + " (" + o.method + ")"), " " + o.statement + " ",
      total ? el("progress", { max: String(total), value: String(done || 0) }) : null,
      " " + (done || 0) + " of " + (total || "?") + " nodes" + (o.node ? " · " + o.node + ": " + o.step : "") + (o.detail ? " · " + o.detail : ""),
      o.failed
        ? el("div", {}, "stopped: " + o.failed + " ",
          o.kind === "schema-change"
            ? el("button", { onclick: () => opAct("run", o.id, "Resume " + o.statement + "? Nodes already changed are skipped; the one it stopped at is read again.") }, "Resume")
            : "put the node right as said, then ",
          el("button", { class: "danger", onclick: () => opAct("cancel", o.id, "Abandon " + o.statement + "? Nothing more runs; a node it stopped at may stay drained (undrain it on its card once it is right).") }, "Abandon"))
        : el("button", { onclick: () => opAct("cancel", o.id, "Stop " + o.statement + "? It stops where it is, the node in hand left drained; you can resume it later.") }, "Stop")));
  }
  const plans = document.getElementById("plans");
  plans.textContent = "";
  for (const o of ops.filter((o) => o.step === "planned")) {
    plans.append(el("div", { class: "transfer plan" },
      el("span", { class: "arrow" }, o.method.toUpperCase()), " ", el("code", {}, o.statement),
      el("div", { class: "muted" }, o.detail),
      el("button", { class: "danger", onclick: () => opAct("run", o.id, "Run " + o.statement + " (" + o.method + ")? " + o.detail) }, "Run"),
      el("button", { onclick: () => opAct("cancel", o.id, null) }, "Discard")));
  }
}

function drawProxies(proxies) {
  const sec = document.getElementById("proxies-section");
  sec.hidden = proxies.length === 0;
  const body = document.getElementById("proxies");
  body.textContent = "";
  for (const p of proxies) {
    body.append(el("tr", {},
      el("td", {}, p.name), el("td", {}, p.controller ? "controller" : "follower"),
      el("td", {}, p.writer || "(none)"), el("td", {}, String(p.epoch)),
      el("td", {}, p.agrees ? "yes" : "no"), el("td", {}, p.degraded ? "degraded (etcd unreachable)" : "normal")));
  }
}

function drawEvents(events) {
  const body = document.getElementById("events");
  body.textContent = "";
  for (const e of events.slice().sort((a, b) => b.id - a.id)) { // newest first
    body.append(el("tr", { class: e.kind }, el("td", {}, e.time), el("td", {}, e.kind), el("td", {}, e.node || ""), el("td", {}, e.detail || "")));
  }
}

function notice(text) {
  const n = document.getElementById("notice");
  n.hidden = !text;
  n.textContent = text || "";
}

// --- actions --------------------------------------------------------------------

const WHAT = {
  drain: (n) => "Drain " + n + "? New transactions go to other nodes; in-flight ones finish.",
  undrain: (n) => "Return " + n + " to service?",
  switchover: (n) => "Move the writer role to " + n + "? In-flight writes finish on the current writer; new ones pause for a moment.",
};

function confirmDialog(text) {
  const d = document.getElementById("confirm");
  document.getElementById("confirm-text").textContent = text;
  if (typeof d.showModal !== "function") return Promise.resolve(window.confirm(text));
  return new Promise((resolve) => {
    // Escape closes the dialog without setting returnValue: clear the
    // previous answer, or a cancelled action would run.
    d.returnValue = "";
    d.addEventListener("close", () => resolve(d.returnValue === "ok"), { once: true });
    d.showModal();
  });
}

async function act(action, node) {
  if (!(await confirmDialog(WHAT[action](node)))) return;
  try {
    const r = await post({ action, node });
    notice(r.ok ? "done: " + r.body.statement : action + " " + node + " refused: " + r.body.error);
  } catch (e) {
    notice(action + " " + node + " failed: " + e.message);
  }
}

async function post(body) {
  const r = await fetch(api("actions"), {
    method: "POST", credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-Galeon-Action": "1" },
    body: JSON.stringify(body),
  });
  return { ok: r.ok, body: await r.json() };
}

// refreshOperations redraws the operations at once after an action (the
// poll redraws everything else in its time).
const refreshOperations = () => table("operations").then(drawOperations, () => {});

// opAct runs, stops or forgets an operation or plan, after confirmation
// when question is given.
async function opAct(action, id, question) {
  if (question && !(await confirmDialog(question))) return;
  try {
    const r = await post({ action, id });
    notice(r.ok ? "done: " + r.body.statement : action + " " + id + " refused: " + r.body.error);
  } catch (e) {
    notice(action + " " + id + " failed: " + e.message);
  }
  refreshOperations();
}

document.getElementById("ddl-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const statement = document.getElementById("ddl-statement").value;
  const schema = document.getElementById("ddl-schema").value;
  const method = document.getElementById("ddl-method").value;
  notice("planning… (the change is tried on an empty copy of the table)");
  try {
    const r = await post({ action: "plan", statement, schema, method });
    notice(r.ok ? "planned: confirm it below" : "not planned: " + r.body.error);
  } catch (e) {
    notice("plan failed: " + e.message);
  }
  refreshOperations();
});

// --- the poll loop --------------------------------------------------------------

async function poll() {
  try {
    const [servers, writerRows, checks, pool, events, proxies, transfers, operations] = await Promise.all(
      ["servers", "writer", "galera_checks", "stats_connection_pool", "events", "proxies", "state_transfers", "operations"].map(table));
    const writer = writerRows[0];
    document.getElementById("writer").textContent = writer && writer.node
      ? "writer: " + writer.node + " · epoch " + writer.epoch + (writer.pending ? " · moving to " + writer.pending : "")
      : "writer: none — writes fail";
    drawNodes(servers, checks, pool, writer);
    drawTransfers(transfers);
    drawOperations(operations);
    drawProxies(proxies);
    drawEvents(events);

    const at = Date.now() / 1000;
    const cur = { at, queries: {}, cert: {}, fcns: {} };
    for (const p of pool) cur.queries[p.srv_name] = num(p.Queries);
    for (const c of checks) { cur.cert[c.name] = num(c.cert_failures); cur.fcns[c.name] = num(c.fc_paused_ns); }
    series.t.push(at);
    const dt = prev ? at - prev.at : 0;
    for (const p of pool) {
      push("chart-qps", p.srv_name, prev ? rate(cur.queries[p.srv_name], prev.queries[p.srv_name], dt) : null);
      push("chart-latency", p.srv_name, num(p.Latency_us) == null ? null : num(p.Latency_us) / 1000);
    }
    for (const c of checks) {
      push("chart-recv", c.name, num(c.recv_queue));
      push("chart-cert", c.name, prev ? rate(cur.cert[c.name], prev.cert[c.name], dt) : null);
      const fc = prev ? rate(cur.fcns[c.name], prev.fcns[c.name], dt) : null;
      push("chart-fc", c.name, fc == null ? null : fc / 1e9);
    }
    prev = cur;
    if (series.t.length > WINDOW) {
      series.t.shift();
      for (const by of Object.values(series.by)) for (const n of Object.keys(by)) by[n].shift();
    }
    const count = (v) => (v >= 10 || v === 0 ? v.toFixed(0) : v.toFixed(1));
    redraw("chart-qps", count, 1);
    redraw("chart-latency", (v) => v.toFixed(2), 1);
    redraw("chart-recv", count, 5);
    redraw("chart-fc", (v) => (v * 100).toFixed(v < 0.01 ? 2 : 1) + "%", 0.01);
    redraw("chart-cert", count, 1);
    document.getElementById("updated").textContent = "updated " + new Date().toLocaleTimeString();
  } catch (e) {
    document.getElementById("updated").textContent = "cannot reach galeon: " + e.message;
  }
}

document.getElementById("charts-missing").hidden = typeof uPlot !== "undefined";
// The next poll is scheduled when this one is done: a slow server never
// has two polls of the same page in flight.
(async function loop() {
  await poll();
  setTimeout(loop, POLL_MS);
})();
