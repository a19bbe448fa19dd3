// cuberobot's page: renders what the daemon publishes (/api/events) and sends commands.
"use strict";

const SCHEMES = {
  "white-green": { U: "#f4f4f4", R: "#c41e3a", F: "#009e60", D: "#ffd500", L: "#ff5800", B: "#0051ba" },
  "white-red": { U: "#f4f4f4", R: "#0051ba", F: "#c41e3a", D: "#ffd500", L: "#009e60", B: "#ff5800" },
};
const FACES = "URFDLB";
const NET_PLACE = { U: [0, 1], L: [1, 0], F: [1, 1], R: [1, 2], B: [1, 3], D: [2, 1] };

const view = { status: {}, scan: null, solution: null, done: 0, page: 1 };
const $ = (id) => document.getElementById(id);

function token() {
  return sessionStorage.getItem("cuberobot-token") || "";
}

function renderStatus(s) {
  view.status = s;
  $("robot-id").textContent = s.robot_id || "";
  $("state").textContent = s.state || "—";
  $("state").dataset.state = s.state || "";
  $("progress").value = s.progress || 0;
  $("moves").textContent = `${s.moves_done || 0} / ${s.moves_total || 0} moves`;
  $("eta").textContent = s.eta_s != null ? `${Number(s.eta_s).toFixed(1)} s left` : "";
  const fw = s.firmware || {};
  $("firmware").textContent = fw.connected ? `connected (${fw.version || "?"})` : "not connected";
  $("firmware").dataset.ok = String(Boolean(fw.connected));
  const err = s.error;
  $("error").hidden = !err;
  $("error").textContent = err ? `${err.code}: ${err.message}` : "";
  view.done = s.moves_done || 0;
  renderSolution();
  renderRecovery(s);
}

// What the daemon's status says an operator may do to go on: resume an interrupted job (only
// with a fresh scan when the firmware does not match the journal), or start again once the
// mechanism's parts are set to their start pose by hand (after a parts_unknown refusal).
function renderRecovery(s) {
  const r = s.resumable;
  const idle = ["IDLE", "DONE", "ERROR", "ABORTED"].includes(s.state);
  const show = {
    "btn-resume": Boolean(idle && r && !r.needs_rescan),
    "btn-resume-rescan": Boolean(idle && r),
    "btn-start-pose": Boolean(idle && s.error && s.error.code === "parts_unknown"),
  };
  for (const [id, on] of Object.entries(show)) $(id).hidden = !on;
  $("recovery").hidden = !Object.values(show).some(Boolean);
}

function renderNet(facelets, doubtful, scheme) {
  const net = $("net");
  net.replaceChildren();
  if (!facelets) return;
  const n = Math.round(Math.sqrt(facelets.length / 6));
  const colours = SCHEMES[scheme] || SCHEMES["white-green"];
  net.style.setProperty("--n", n);
  FACES.split("").forEach((face, f) => {
    const grid = document.createElement("div");
    grid.className = "face";
    grid.dataset.face = face;
    const [row, col] = NET_PLACE[face];
    grid.style.gridRow = row + 1;
    grid.style.gridColumn = col + 1;
    for (let i = 0; i < n * n; i++) {
      const cell = document.createElement("div");
      const letter = facelets[f * n * n + i];
      cell.className = "sticker";
      cell.style.background = colours[letter] || "#444";
      // the scan names stickers in LTR coordinates: row 0 is the bottom row
      const name = `${face}[${n - 1 - Math.floor(i / n)},${i % n}]`;
      const doubt = doubtful.get(name);
      cell.title = doubt != null ? `${name}: confidence ${doubt}` : name;
      if (doubt != null) cell.classList.add("doubtful");
      grid.appendChild(cell);
    }
    net.appendChild(grid);
  });
}

function renderScan(scan) {
  view.scan = scan;
  const doubtful = new Map((scan.low_confidence || []).map((d) => [d.sticker, d.confidence]));
  renderNet(scan.facelets, doubtful, view.status.colour_scheme);
  const note = scan.valid ? "scan valid" : "scan NOT valid";
  $("scan-note").textContent = `${note}; ${doubtful.size} doubtful sticker(s)` +
    (scan.min_confidence != null ? `, lowest confidence ${scan.min_confidence}` : "");
}

function renderSolution() {
  const box = $("solution");
  box.replaceChildren();
  if (!view.solution) return;
  view.solution.moves.split(" ").filter(Boolean).forEach((m, i) => {
    const span = document.createElement("span");
    span.textContent = m;
    span.className = i < view.done ? "move done" : "move";
    box.appendChild(span);
  });
}

function renderStages(stages, total) {
  const parts = Object.entries(stages).map(([name, s]) => `${name} ${Number(s).toFixed(2)} s`);
  if (total != null) parts.push(`total ${Number(total).toFixed(2)} s`);
  $("stages").textContent = parts.join(" · ");
}

async function loadFrames() {
  const res = await fetch("/api/frames");
  if (!res.ok) return;
  const { frames } = await res.json();
  const box = $("frames");
  box.replaceChildren();
  for (const name of frames) {
    const fig = document.createElement("figure");
    const img = document.createElement("img");
    img.src = `/api/frames/${encodeURIComponent(name)}.png?t=${Date.now()}`;
    img.alt = `camera ${name}`;
    const cap = document.createElement("figcaption");
    cap.textContent = name;
    fig.append(img, cap);
    box.appendChild(fig);
  }
}

async function loadHistory() {
  const res = await fetch(`/api/history?page=${view.page}&size=10`);
  if (!res.ok) return;
  const data = await res.json();
  const body = document.querySelector("#history tbody");
  body.replaceChildren();
  for (const job of data.jobs) {
    const tr = document.createElement("tr");
    for (const key of ["id", "kind", "outcome", "moves", "started"]) {
      const td = document.createElement("td");
      td.textContent = job[key] == null ? "" : String(job[key]);
      tr.appendChild(td);
    }
    body.appendChild(tr);
  }
  $("page").textContent = `${data.page} of ${Math.max(1, Math.ceil(data.total / data.size))}`;
  $("prev").disabled = data.page <= 1;
  $("next").disabled = data.page * data.size >= data.total;
}

async function loadLive() {
  const res = await fetch("/api/calibration");
  if (!res.ok) {
    $("calibration-reply").textContent = await res.text();
    $("calibration-reply").dataset.ok = "false";
    return;
  }
  const { frames } = await res.json();
  const box = $("live");
  box.replaceChildren();
  for (const name of frames) {
    const fig = document.createElement("figure");
    const img = document.createElement("img");
    img.src = `/api/calibration/${encodeURIComponent(name)}.png?t=${Date.now()}`;
    img.alt = `live ${name}`;
    const cap = document.createElement("figcaption");
    cap.textContent = `${name} (live)`;
    fig.append(img, cap);
    box.appendChild(fig);
  }
}

async function saveCalibration() {
  const res = await fetch("/api/calibration/save", {
    method: "POST",
    headers: { Authorization: `Bearer ${token()}` },
  });
  const reply = await res.json().catch(() => ({ ok: false }));
  const lines = reply.error
    ? [`${reply.error.code}: ${reply.error.message}`]
    : Object.entries(reply.cameras || {}).map(([name, r]) =>
      `${name}: ${r.saved ? `saved to ${r.file}` : `not saved (${r.why})`}`);
  $("calibration-reply").textContent = lines.join("\n");
  $("calibration-reply").dataset.ok = String(Boolean(reply.ok));
  if (reply.ok) loadLive();
}

async function send(verb, payload) {
  const res = await fetch(`/api/cmd/${verb}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${token()}` },
    body: JSON.stringify(payload),
  });
  let reply;
  try {
    reply = await res.json();
  } catch {
    reply = { ok: false, error: { code: "http", message: `HTTP ${res.status}` } };
  }
  $("reply").textContent = reply.ok
    ? `${verb}: ok`
    : `${verb}: ${reply.error ? `${reply.error.code}: ${reply.error.message}` : "refused"}`;
  $("reply").dataset.ok = String(Boolean(reply.ok));
  return reply;
}

const handlers = {
  status: renderStatus,
  scan_complete: (e) => { renderScan(e); loadFrames(); },
  solution: (e) => { view.solution = e; view.done = 0; $("stages").textContent = ""; renderSolution(); },
  move_executed: (e) => { view.done = Math.max(view.done, e.index); renderSolution(); },
  done: (e) => { renderStages(e.stage_times_s || {}, e.total_s); loadHistory(); },
  error: () => { loadHistory(); },
  aborted: () => { loadHistory(); },
};

function connect() {
  const source = new EventSource("/api/events");
  source.onopen = () => {
    $("connection").textContent = "live";
    $("connection").dataset.ok = "true";
  };
  source.onerror = () => {
    $("connection").textContent = "reconnecting…";
    $("connection").dataset.ok = "false";
  };
  for (const [name, fn] of Object.entries(handlers)) {
    source.addEventListener(name, (ev) => fn(JSON.parse(ev.data)));
  }
}

function wire() {
  $("token").value = token();
  $("token").addEventListener("change", (e) => sessionStorage.setItem("cuberobot-token", e.target.value));
  for (const id of ["btn-start", "btn-abort", "btn-estop", "btn-home"]) {
    $(id).addEventListener("click", () => send($(id).dataset.verb, { source: "web" }));
  }
  $("btn-resume").addEventListener("click", () => send("resume", { source: "web" }));
  $("btn-resume-rescan").addEventListener("click", () =>
    send("resume", { rescan: true, source: "web" }));
  $("btn-start-pose").addEventListener("click", () =>
    send("start", { start_pose: true, source: "web" }));
  $("btn-solve").addEventListener("click", () =>
    send("solve", { facelets: $("facelets").value.trim(), source: "web" }));
  $("btn-live").addEventListener("click", loadLive);
  $("btn-calibrate").addEventListener("click", saveCalibration);
  $("prev").addEventListener("click", () => { view.page = Math.max(1, view.page - 1); loadHistory(); });
  $("next").addEventListener("click", () => { view.page += 1; loadHistory(); });
}

wire();
connect();
loadFrames();
loadHistory();
