// The teaching page of `fxverify serve`: lessons, an editor, the Check button, and what the
// checker answers. Every text from the server is inserted as text (textContent), never as HTML;
// the only markup taken as is are the SVG pictures fxverify's own renderers made.
"use strict";

const PLAYGROUND = `# Your own policy: edit it and press Check.
# An attention kernel writes a KV block while a copy on another stream reads it.
policy "my-policy"

fabric {
  device gpu0: gpu hooks [launch, copy_done]
  device cpu0: cpu hooks [dma_done]
  link gpu0 -- cpu0 : pcie ordered
}
space hbm0 on gpu0 size 80 GiB
space host0 on cpu0 base 0x1_0000_0000 size 16 GiB
region kv_blk in hbm0 at 0x2000_0000 size 2 MiB owner gpu0 dtype bf16 init
region kv_host in host0 at 0x1_4000_0000 size 2 MiB owner gpu0 dtype bf16

flow decode_step {
  edge attn: write kv_blk by gpu0.launch stream compute
  edge offload: move kv_blk -> kv_host by gpu0.copy_done stream copy
}
`;

const state = { lessons: [], current: null, original: "" };
const $ = (id) => document.getElementById(id);

function el(tag, attrs = {}, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "text") e.textContent = v; else if (k === "cls") e.className = v; else e.setAttribute(k, v);
  }
  for (const k of kids) e.append(k);
  return e;
}

async function api(path, body) {
  const opts = body === undefined ? {} : { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) };
  const res = await fetch(path, opts);
  const data = await res.json().catch(() => ({ error: `HTTP ${res.status}` }));
  if (!res.ok) throw new Error(data.error || `HTTP ${res.status}`);
  return data;
}

function navItems() {
  const box = $("lessons");
  box.replaceChildren();
  let family = null, list = null;
  for (const l of state.lessons) {
    if (l.family !== family) {
      family = l.family;
      list = el("ul");
      box.append(el("h4", { text: family }), list);
    }
    const a = el("a", { href: `#lesson=${encodeURIComponent(l.path)}`, cls: `lesson ${l.kind}`, "data-path": l.path, title: l.path });
    a.append(el("span", { cls: "mark", text: l.kind === "fail" ? "✗" : "✓" }), el("span", { text: l.title }));
    list.append(el("li", {}, a));
  }
  if (!state.lessons.length) box.append(el("p", { cls: "muted", text: "no corpus in this repository: use your own policy" }));
}

function showWork(show) {
  $("lesson").hidden = !show;
  $("work").hidden = !show;
  $("codes").hidden = show;
}

function clearResult() {
  $("verdict").hidden = true;
  $("findings").replaceChildren();
  $("graph").replaceChildren(el("p", { cls: "pending", text: "Check the policy to see its movement graph and its happens-before graph." }));
}

// An SVG picture made by fxverify's renderers (they escape every name they draw), as an element.
function picture(svg, cls) {
  const fig = el("figure", { cls });
  fig.innerHTML = svg;
  return fig;
}

function showGraphs(r) {
  const box = $("graph");
  box.replaceChildren(el("p", { cls: "pending", text: r.graph_note }));
  for (const g of r.graphs) {
    const fig = picture(g.svg, `graph ${g.view}`);
    fig.prepend(el("figcaption", { text: g.title }));
    box.append(fig);
  }
}

async function openLesson(path) {
  showWork(true);
  clearResult();
  for (const a of document.querySelectorAll("a.lesson")) a.classList.toggle("active", a.dataset.path === path);
  const l = await api(`/api/lesson?path=${encodeURIComponent(path)}`);
  state.current = l;
  state.original = l.source;
  $("crumb").textContent = `${l.family || ""} · ${l.kind === "fail" ? "refuted: find the bug" : l.kind === "ok" ? "proved" : ""}`;
  $("title").textContent = l.title;
  $("lesson-text").replaceChildren(...(l.text || "").split("\n\n").map((p) => el("p", { text: p })));
  const twin = $("twin");
  twin.hidden = !l.twin;
  if (l.twin) twin.replaceChildren("Its twin: ", el("a", { href: `#lesson=${encodeURIComponent(l.twin)}`, text: l.twin }));
  $("file").textContent = l.path;
  $("editor").value = l.source;
}

function openPlayground() {
  showWork(true);
  clearResult();
  for (const a of document.querySelectorAll("a.lesson")) a.classList.remove("active");
  state.current = null;
  state.original = PLAYGROUND;
  $("crumb").textContent = "free editor";
  $("title").textContent = "Your own policy";
  $("lesson-text").replaceChildren(el("p", { text: "Write any policy here; it is checked by the same checker as `fxverify check`, as a file at the root of the repository (its includes resolve from there), and never saved." }));
  $("twin").hidden = true;
  $("file").textContent = "playground.fx (not saved)";
  $("editor").value = PLAYGROUND;
}

async function openCodes() {
  showWork(false);
  const body = $("code-table").querySelector("tbody");
  if (!body.children.length) {
    const { codes } = await api("/api/codes");
    for (const c of codes) {
      const a = el("a", { href: `#code=${c.code}`, cls: "code", text: c.code });
      body.append(el("tr", {}, el("td", {}, a), el("td", { text: c.severity }), el("td", { text: c.title })));
    }
  }
}

async function explain(code) {
  const aside = $("explain");
  try {
    const x = await api(`/api/explain?code=${encodeURIComponent(code)}`);
    $("explain-title").textContent = `${x.code}: ${x.title}`;
    $("explain-text").textContent = x.text;
    $("explain-hint").hidden = true;
  } catch (err) {
    $("explain-title").textContent = code;
    $("explain-text").textContent = String(err.message || err);
  }
  aside.classList.add("open");
}

function codeLink(code) {
  const a = el("a", { href: "#", cls: "code", text: code, title: `explain ${code}` });
  a.addEventListener("click", (ev) => { ev.preventDefault(); explain(code); });
  return a;
}

// Select a finding's span in the editor when it is in the file being edited.
function showSpan(span) {
  const here = state.current ? state.current.path : "playground.fx";
  if (span.file !== here) return;
  const ed = $("editor");
  ed.focus();
  ed.setSelectionRange(span.start, span.end);
  const line = ed.value.slice(0, span.start).split("\n").length - 1;
  ed.scrollTop = Math.max(0, line * 18.85 - ed.clientHeight / 3);
}

function traceTable(trace) {
  const t = el("table", { cls: "trace" });
  t.append(el("tr", {}, ...["", "step", "t (ns)", "device.hook", "edge", "event", "what"].map((h) => el("th", { text: h }))));
  for (const e of trace.events) {
    const row = el("tr", { cls: e.violation ? "violation" : "" });
    const where = e.hook ? `${e.device}.${e.hook}` : e.device;
    for (const v of [e.violation ? ">>" : "", e.step, e.time_ns ?? "-", where, e.edge, e.event, e.detail]) row.append(el("td", { text: String(v) }));
    t.append(row);
  }
  return t;
}

function finding(f) {
  const art = el("article", { cls: `finding ${f.severity}`, "data-code": f.code });
  const head = el("h3", {}, codeLink(f.code), el("span", { cls: "title", text: ` ${f.title}: ` }), el("span", { text: f.message }));
  art.append(head);
  if (f.primary) {
    const where = el("a", { href: "#", cls: "where", text: `${f.primary.file}:${f.primary.line}:${f.primary.column}`, title: "show in the editor" });
    where.addEventListener("click", (ev) => { ev.preventDefault(); showSpan(f.primary); });
    art.append(el("p", {}, where));
  }
  if (f.trace) {
    const lane = el("div", { cls: "swimlane slot", "data-slot": "swimlane" });
    if (f.swimlane_svg) lane.append(picture(f.swimlane_svg, "lanes"));
    else lane.append(el("p", { cls: "pending", text: f.swimlane_note || "no picture of this trace" }));
    lane.append(el("p", { cls: "pending", text: "the replayed trace, step by step (>> marks where the rule breaks):" }), traceTable(f.trace));
    art.append(lane);
    if (f.trace.why) art.append(el("p", { cls: "why", text: `why: ${f.trace.why}` }));
  }
  if (f.help) art.append(el("p", { cls: "help", text: `help: ${f.help}` }));
  const det = el("details", {}, el("summary", { text: "as `fxverify check` prints it" }), el("pre", { cls: "report", text: f.text }));
  art.append(det);
  return art;
}

async function check() {
  const button = $("check");
  button.disabled = true;
  const v = $("verdict");
  v.hidden = false;
  v.className = "verdict running";
  v.textContent = "checking…";
  $("findings").replaceChildren();
  try {
    const r = await api("/api/check", { source: $("editor").value, path: state.current ? state.current.path : null });
    const o = r.obligations;
    v.className = `verdict ${r.verdict}`;
    v.textContent = `${r.verdict}: ${o.proved} proved, ${o.refuted} refuted, ${o.unknown} unknown obligations` +
      (r.findings.length ? `; ${r.findings.length} finding${r.findings.length === 1 ? "" : "s"}` : "") + ` (${r.seconds} s)`;
    $("findings").replaceChildren(...r.findings.map(finding));
    showGraphs(r);
  } catch (err) {
    v.className = "verdict error";
    v.textContent = `the server refused: ${err.message || err}`;
  } finally {
    button.disabled = false;
  }
}

async function route() {
  const h = decodeURIComponent(location.hash.slice(1));
  try {
    if (h.startsWith("lesson=")) await openLesson(h.slice(7));
    else if (h === "codes") await openCodes();
    else if (h.startsWith("code=")) { await openCodes(); await explain(h.slice(5)); }
    else if (h === "playground" || !state.lessons.length) openPlayground();
    else location.hash = `lesson=${encodeURIComponent(state.lessons[0].path)}`;
  } catch (err) {
    $("title").textContent = "cannot open this";
    $("lesson-text").replaceChildren(el("p", { text: String(err.message || err) }));
  }
}

async function start() {
  $("check").addEventListener("click", check);
  $("reset").addEventListener("click", () => { $("editor").value = state.original; clearResult(); });
  $("editor").addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); check(); }
  });
  try {
    state.lessons = (await api("/api/lessons")).lessons;
  } catch (err) {
    state.lessons = [];
  }
  navItems();
  window.addEventListener("hashchange", route);
  await route();
  document.body.dataset.ready = "1";
}

start();
