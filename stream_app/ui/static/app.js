// foldmem memory explorer: plain ES module, no build step. Every view reads bounded, paged
// API routes (/tenants/{t}/explore/..., POST /tenants/{t}/query); nothing loads a whole graph.
// Text from the memory is always set as textContent, never as HTML.

const PAGE = 20;
const COLUMNS = [
  ["pending", "Pending"],
  ["scheduled", "Scheduled"],
  ["deferred", "Deferred"],
  ["resolved", "Resolved"],
  ["closed", "Rejected / expired"],
];
const KIND_COLOURS = {
  EVENT: "#3b82f6", FACT: "#16a34a", CONCEPT: "#f59e0b", INTENT: "#dc2626", TIME: "#8b5cf6",
};
const SVG = "http://www.w3.org/2000/svg";

const state = { tenant: null, category: "", selectedIntent: null };
const $ = (id) => document.getElementById(id);

// ------------------------------------------------------------------ DOM helpers
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined) node.append(child);
  }
  return node;
}

function svg(tag, attrs = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

function day(iso) {  // the calendar day as the stream wrote it (its own UTC offset)
  if (!iso) return "";
  const d = new Date(`${iso.slice(0, 10)}T12:00:00Z`);
  return d.toLocaleDateString("en-GB", {
    day: "numeric", month: "short", year: "numeric", timeZone: "UTC",
  });
}

function short(text, size) {
  return text.length <= size ? text : text.slice(0, size - 1) + "…";
}

function kindBadge(kind) {
  return el("span", { class: `kind ${kind}`, text: kind });
}

function notice(message) {
  const box = $("notice");
  box.textContent = message || "";
  box.hidden = !message;
}

// ------------------------------------------------------------------ API and token
let tokenWaiters = [];

function askToken(message) {
  const dialog = $("token-dialog");
  $("token-error").textContent = message || "";
  if (!dialog.open) dialog.showModal();
  $("token-input").focus();
  return new Promise((resolve) => tokenWaiters.push(resolve));
}

$("token-form").addEventListener("submit", () => {
  sessionStorage.setItem("foldmem-token", $("token-input").value.trim());
  $("token-input").value = "";
  const waiters = tokenWaiters;
  tokenWaiters = [];
  waiters.forEach((resolve) => resolve());
});

async function api(path, options = {}) {
  for (;;) {
    const token = sessionStorage.getItem("foldmem-token");
    const headers = { ...(options.headers || {}) };
    if (token) headers.Authorization = `Bearer ${token}`;
    if (options.body) headers["Content-Type"] = "application/json";
    const response = await fetch(path, { ...options, headers });
    if (response.status === 401) {
      await askToken(token ? "That token was not accepted." : "");
      continue;
    }
    const body = await response.json().catch(() => ({}));
    if (!response.ok) {
      const detail = typeof body.detail === "string" ? body.detail : JSON.stringify(body.detail);
      throw new Error(`${response.status}: ${detail || response.statusText}`);
    }
    return body;
  }
}

const tenantPath = (rest) => `/tenants/${encodeURIComponent(state.tenant)}${rest}`;

function query(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (Array.isArray(value)) value.forEach((v) => search.append(key, v));
    else if (value !== undefined && value !== null && value !== "") search.set(key, value);
  }
  return `?${search}`;
}

// ------------------------------------------------------------------ tenants and routing
async function loadTenants() {
  const tenants = await api("/explore/tenants");
  const select = $("tenant");
  select.replaceChildren(
    ...tenants.map((t) =>
      el("option", { value: t.tenant, text: `${t.tenant} (${t.nodes} nodes, ${t.open_intents} open)` })
    )
  );
  const wanted = new URLSearchParams(location.search).get("tenant")
    || localStorage.getItem("foldmem-tenant");
  const names = tenants.map((t) => t.tenant);
  state.tenant = names.includes(wanted) ? wanted : names[0] || null;
  if (state.tenant) select.value = state.tenant;
  if (!state.tenant) notice("No tenants yet: fold some events first (foldmem run FILE).");
}

$("tenant").addEventListener("change", (event) => {
  state.tenant = event.target.value;
  localStorage.setItem("foldmem-tenant", state.tenant);
  state.category = "";
  state.selectedIntent = null;
  route();
});

function route() {
  const [view, ...rest] = location.hash.replace(/^#\/?/, "").split("/");
  const name = ["intents", "search", "graph", "beliefs"].includes(view) ? view : "intents";
  for (const section of document.querySelectorAll(".view")) {
    section.hidden = section.id !== `view-${name}`;
  }
  for (const link of document.querySelectorAll("header nav a")) {
    link.classList.toggle("active", link.dataset.view === name);
  }
  if (!state.tenant) return;
  const arg = rest.length ? decodeURIComponent(rest.join("/")) : null;
  const show = { intents: showIntents, search: showSearch, graph: showGraph, beliefs: showBeliefs };
  show[name](arg).catch((error) => notice(error.message));
}

window.addEventListener("hashchange", route);

// ------------------------------------------------------------------ intents board
async function showIntents(intentId) {
  notice("");
  const board = $("board");
  board.replaceChildren(
    ...COLUMNS.map(([status, label]) =>
      el("div", { class: "column", "data-status": status, "data-testid": `column-${status}` },
        el("h2", {}, el("span", { text: label }), el("span", { class: "count" })),
        el("div", { class: "cards" }),
        el("button", { class: "more", hidden: true, text: "more" }))
    )
  );
  await Promise.all(COLUMNS.map(([status]) => loadColumn(status, 0)));
  if (intentId) await openIntent(intentId);
}

async function loadColumn(status, offset) {
  const column = document.querySelector(`.column[data-status="${status}"]`);
  const page = await api(tenantPath("/explore/intents") + query({
    status, category: state.category, offset, limit: PAGE,
  }));
  if (status === "pending") fillCategories(page.categories);
  column.querySelector(".count").textContent = page.total;
  const cards = column.querySelector(".cards");
  if (offset === 0) cards.replaceChildren();
  for (const intent of page.items) cards.append(card(intent));
  const more = column.querySelector(".more");
  const shown = offset + page.items.length;
  more.hidden = shown >= page.total;
  more.textContent = `more (${page.total - shown})`;
  more.onclick = () => loadColumn(status, shown);
}

function fillCategories(categories) {
  const select = $("category");
  const current = state.category;
  select.replaceChildren(
    el("option", { value: "", text: "all" }),
    ...categories.map((c) => el("option", { value: c, text: c }))
  );
  select.value = current;
}

$("category").addEventListener("change", (event) => {
  state.category = event.target.value;
  showIntents(null).catch((error) => notice(error.message));
});

function card(intent) {
  return el("div", {
    class: `card${intent.id === state.selectedIntent ? " selected" : ""}`,
    "data-testid": "intent-card",
    "data-intent": intent.id,
    onclick: () => { location.hash = `#/intents/${encodeURIComponent(intent.id)}`; },
  },
  el("div", { class: "title", text: intent.title }),
  el("div", { class: "meta" },
    el("span", { class: "chip", text: intent.category }),
    intent.deadline ? el("span", { text: `due ${day(intent.deadline)}` }) : null));
}

async function openIntent(intentId) {
  state.selectedIntent = intentId;
  for (const node of document.querySelectorAll(".card")) {
    node.classList.toggle("selected", node.dataset.intent === intentId);
  }
  const detail = await api(tenantPath(`/explore/intents/${encodeURIComponent(intentId)}`));
  const intent = detail.intent;
  const panel = $("intent-detail");
  const act = (verb) => el("button", {
    "data-testid": `action-${verb}`,
    class: verb === "resolve" ? "primary" : "",
    text: verb,
    onclick: () => changeStatus(intent.id, verb),
  });
  const open = ["pending", "action_scheduled", "deferred", "expired"].includes(intent.status);
  panel.replaceChildren(
    el("h2", { text: intent.title }),
    el("div", { class: "meta" },
      el("span", { class: `status ${intent.status}`, "data-testid": "intent-status", text: intent.status }),
      " ", el("span", { class: "chip", text: intent.category }),
      intent.deadline ? el("span", { class: "muted", text: ` due ${day(intent.deadline)}` }) : null),
    el("p", { class: "why", "data-testid": "intent-why", text: detail.why }),
    open ? el("div", { class: "actions" }, act("resolve"), act("reject"), act("defer"),
      act("schedule")) : null,
    el("h3", { text: `Evidence: the latest ${detail.evidence.length} events of this goal and its concepts` }),
    el("ul", { class: "list", "data-testid": "intent-evidence" },
      detail.evidence.map((event) => el("li", {
        class: "event",
        onclick: () => { location.hash = `#/graph/${encodeURIComponent(event.id)}`; },
      },
      el("div", { text: event.title }),
      el("div", { class: "when", text: `${day(event.ts)} · ${event.source || ""}` })))),
    el("h3", { text: "Supporting concepts" }),
    el("div", { class: "chips" },
      detail.concepts.map((concept) => el("a", {
        class: "chip", href: `#/graph/${encodeURIComponent(concept.id)}`, text: concept.title,
      }))),
    el("h3", { text: "Description" }),
    el("p", { class: "muted", text: intent.description }),
    el("a", { href: `#/graph/${encodeURIComponent(intent.id)}`, text: "show in the graph" }),
  );
  panel.dataset.intent = intent.id;
  panel.hidden = false;
}

async function changeStatus(intentId, verb) {
  try {
    await api(tenantPath(`/intents/${encodeURIComponent(intentId)}/status`), {
      method: "POST", body: JSON.stringify({ status: verb, note: "from the explorer" }),
    });
  } catch (error) {
    notice(error.message);
    return;
  }
  await showIntents(intentId);
}

// ------------------------------------------------------------------ search
$("search-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const text = $("search-input").value.trim();
  if (text) location.hash = `#/search/${encodeURIComponent(text)}`;
});

function whyRanked(x) {
  const notes = [];
  if (x.bm25_rank) notes.push(`keyword rank ${x.bm25_rank}`);
  if (x.dense_rank) notes.push(`meaning rank ${x.dense_rank} (cosine ${x.dense_cosine.toFixed(2)})`);
  if (x.hops) notes.push(`${x.hops} hop${x.hops > 1 ? "s" : ""} from a direct hit`);
  if (x.surfaced_by) notes.push(`${x.surfaced_by} matching events support it`);
  if (x.anchors && x.anchors.length) notes.push(`names ${x.anchors.join(", ")}`);
  if (x.shared_name) notes.push(`shares the name ${x.shared_name}`);
  if (x.in_period) notes.push("in the period asked about");
  if (x.collapsed && x.collapsed.length) notes.push(`${x.collapsed.length} similar items merged in`);
  return notes.join(" · ") || "related";
}

async function showSearch(text) {
  notice("");
  const list = $("search-results");
  if (!text) { list.replaceChildren(); $("search-input").focus(); return; }
  $("search-input").value = text;
  list.replaceChildren(el("li", { class: "muted", text: "searching…" }));
  const response = await api(tenantPath("/query"), {
    method: "POST", body: JSON.stringify({ text, k: 10 }),
  });
  const cited = [...new Set(response.items.flatMap((hit) => hit.event_ids.slice(0, 5)))];
  const events = cited.length
    ? (await api(tenantPath("/explore/events") + query({ ids: cited.slice(0, 200) }))).events
    : [];
  const byId = new Map(events.map((e) => [e.source_event_id, e]));
  list.replaceChildren(...response.items.map((hit) => hitItem(hit, byId)));
  if (!response.items.length) list.append(el("li", { class: "muted", text: "no results" }));
}

function hitItem(hit, events) {
  const cited = hit.event_ids.slice(0, 5).map((id) => events.get(id)).filter(Boolean);
  return el("li", { class: "hit", "data-testid": "hit" },
    el("div", { class: "head" }, kindBadge(hit.kind),
      el("a", { href: `#/graph/${encodeURIComponent(hit.node_id)}`, text: hit.title || short(hit.text, 90) }),
      hit.ts ? el("span", { class: "muted", text: day(hit.ts) }) : null,
      el("span", { class: "score", text: hit.score.toFixed(3) })),
    hit.text && hit.text !== hit.title ? el("div", { class: "text", text: short(hit.text, 300) }) : null,
    el("div", { class: "why-ranked", "data-testid": "why-ranked", text: `why: ${whyRanked(hit.explanation)}` }),
    hit.chain ? el("div", {}, el("a", {
      href: `#/beliefs/${encodeURIComponent(hit.chain[hit.chain.length - 1].node_id)}`,
      text: `revised ${hit.chain.length - 1} time(s): see the timeline`,
    })) : null,
    el("div", { class: "cited" },
      el("span", { class: "muted", text: `cites ${hit.event_ids.length} event(s):` }),
      el("ul", { class: "list", "data-testid": "cited-events" },
        cited.map((event) => el("li", { class: "event" },
          el("span", { text: event.title }),
          el("span", { class: "when", text: ` · ${day(event.ts)} · ${event.source || ""}` }))))));
}

// ------------------------------------------------------------------ graph
const graphLimit = () => Number($("graph-limit").value);
$("graph-limit").addEventListener("change", route);
$("graph-kind").addEventListener("change", route);

async function showGraph(nodeId) {
  notice("");
  drawLegend();
  const concepts = await api(tenantPath("/explore/nodes") + query({ kind: "CONCEPT", limit: 30 }));
  $("graph-picker").replaceChildren(...concepts.items.map((c) =>
    el("a", { class: "chip", href: `#/graph/${encodeURIComponent(c.id)}`, text: c.title })));
  if (!nodeId) {
    if (!concepts.items.length) return;
    nodeId = concepts.items[0].id;
  }
  const found = await api(tenantPath(`/explore/nodes/${encodeURIComponent(nodeId)}/neighbourhood`)
    + query({ limit: graphLimit(), kind: $("graph-kind").value }));
  $("graph-title").textContent = `Graph: ${found.node.title}`;
  drawGraph(found);
  const side = $("graph-side");
  side.replaceChildren(el("div", {},
    el("div", {}, kindBadge(found.node.kind), " ", el("strong", { text: found.node.title })),
    found.node.ts ? el("div", { class: "muted", text: day(found.node.ts) }) : null,
    el("p", { text: found.node.text }),
    el("p", { class: "muted", "data-testid": "graph-count",
      text: `${found.neighbours.length} of ${found.neighbour_count} neighbours drawn `
        + `(${found.degree} links in all)` }),
    found.node.kind === "INTENT"
      ? el("a", { href: `#/intents/${encodeURIComponent(found.node.id)}`, text: "open the intent" }) : null,
    found.has_chain
      ? el("a", { href: `#/beliefs/${encodeURIComponent(found.node.id)}`, text: "see how this belief changed" }) : null,
  ));
}

function drawLegend() {
  $("legend").replaceChildren(...Object.entries(KIND_COLOURS).map(([kind, colour]) =>
    el("span", {}, Object.assign(el("i"), { style: `background:${colour}` }), kind)));
}

function drawGraph(found) {
  const area = $("graph-svg");
  const [width, height] = [900, 640];
  const [cx, cy] = [width / 2, height / 2];
  const n = found.neighbours.length;
  const place = new Map([[found.node.id, [cx, cy]]]);
  found.neighbours.forEach((node, i) => {  // one ring, or two alternating when crowded
    const ring = n > 16 && i % 2 ? 0.62 : 1;
    const angle = (2 * Math.PI * i) / Math.max(n, 1) - Math.PI / 2;
    place.set(node.id, [cx + Math.cos(angle) * 340 * ring, cy + Math.sin(angle) * 260 * ring]);
  });
  area.replaceChildren();
  const defs = svg("defs");
  const marker = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: "22", refY: "5",
    markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse" });
  marker.append(svg("path", { d: "M 0 0 L 10 5 L 0 10 z", fill: "#98a2b3" }));
  defs.append(marker);
  area.append(defs);
  const pairs = new Map();  // one line and one label per pair of nodes, every kind named
  for (const edge of found.edges) {
    const key = [edge.src, edge.dst].sort().join("|");
    const pair = pairs.get(key) || { edge, kinds: [], weight: 0 };
    pair.kinds.push(edge.kind);
    pair.weight = Math.max(pair.weight, edge.weight);
    pairs.set(key, pair);
  }
  for (const { edge, kinds, weight } of pairs.values()) {
    const [a, b] = [place.get(edge.src), place.get(edge.dst)];
    if (!a || !b) continue;
    area.append(svg("line", { class: "edge", x1: a[0], y1: a[1], x2: b[0], y2: b[1],
      "marker-end": "url(#arrow)", "stroke-opacity": 0.35 + 0.65 * Math.min(1, weight) }));
    const [near, far] = edge.src === found.node.id || edge.dst !== found.node.id ? [a, b] : [b, a];
    const at = 0.72;  // near the neighbour: labels crowd less there than at the centre
    area.append(svg("text", { class: "edge-label", x: near[0] + (far[0] - near[0]) * at,
      y: near[1] + (far[1] - near[1]) * at - 4, "text-anchor": "middle",
      "data-testid": "edge-label" }, kinds.join(", ")));
  }
  for (const node of [found.node, ...found.neighbours]) {
    const [x, y] = place.get(node.id);
    const centre = node.id === found.node.id;
    const group = svg("g", { "data-testid": "graph-node", "data-node": node.id });
    const circle = svg("circle", { class: `node${centre ? " center" : ""}`, cx: x, cy: y,
      r: centre ? 16 : 10, fill: KIND_COLOURS[node.kind] || "#999" });
    circle.append(svg("title", {}, `${node.kind}: ${node.title}\n${node.text}`));
    circle.addEventListener("click", () => { location.hash = `#/graph/${encodeURIComponent(node.id)}`; });
    // a neighbour's label points away from the centre, so neighbours' labels crowd less
    const [dx, dy] = centre ? [0, 1] : [x - cx, y - cy].map((v) => v / Math.hypot(x - cx, y - cy));
    const anchor = dx > 0.12 ? "start" : dx < -0.12 ? "end" : "middle";
    const gap = centre ? 30 : 15;
    group.append(circle, svg("text", { class: "node-label", x: x + dx * gap,
      y: y + dy * gap + (anchor === "middle" ? (dy > 0 ? 8 : -2) : 4), "text-anchor": anchor },
    short(node.title || node.id, centre ? 40 : 26)));
    area.append(group);
  }
}

// ------------------------------------------------------------------ beliefs
let beliefTimer = null;
$("belief-filter").addEventListener("input", () => {
  clearTimeout(beliefTimer);
  beliefTimer = setTimeout(() => loadBeliefs().catch((e) => notice(e.message)), 250);
});

async function loadBeliefs() {
  const page = await api(tenantPath("/explore/nodes") + query({
    kind: "FACT", chained: true, q: $("belief-filter").value.trim(), limit: 50,
  }));
  $("belief-list").replaceChildren(...page.items.map((fact) => el("li", {
    "data-testid": "belief", onclick: () => { location.hash = `#/beliefs/${encodeURIComponent(fact.id)}`; },
  }, el("div", { text: short(fact.text || fact.title, 140) }),
  el("div", { class: "muted", text: day(fact.ts) }))));
  if (!page.items.length) $("belief-list").append(el("li", { class: "muted", text: "no revised facts" }));
  return page;
}

async function showBeliefs(nodeId) {
  notice("");
  const page = await loadBeliefs();
  const chosen = nodeId || (page.items[0] && page.items[0].id);
  if (!chosen) { $("timeline").replaceChildren(); return; }
  const found = await api(tenantPath(`/explore/nodes/${encodeURIComponent(chosen)}/chain`));
  $("timeline").replaceChildren(...found.links.map((link) => el("div", {
    class: `revision${link.current ? " current" : ""}`, "data-testid": "revision",
  },
  el("div", { class: "when", text: [
    link.valid_from ? `from ${day(link.valid_from)}` : day(link.ts),
    link.valid_to ? `until ${day(link.valid_to)}` : "",
    link.current ? "· holds now" : "",
  ].filter(Boolean).join(" ") }),
  el("div", { text: link.text || link.title }),
  link.events.length ? el("div", { class: "muted", text: `said in ${link.events.join(", ")}` }) : null,
  el("a", { href: `#/graph/${encodeURIComponent(link.id)}`, class: "muted", text: "graph" }))));
}

// ------------------------------------------------------------------ start
loadTenants().then(route).catch((error) => notice(error.message));
