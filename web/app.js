// app.js - the page of `simhash serve`: compare two texts, search the store,
// add a document. Everything the server sends back (ids, titles, metadata) is
// put into the page with textContent, never as markup, so a stored title
// can never inject elements or scripts; the server's Content-Security-Policy
// forbids inline scripts as a second line.
"use strict";

const $ = (id) => document.getElementById(id);

async function api(method, path, body, token) {
  const headers = {};
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (token) headers["Authorization"] = "Bearer " + token;
  const r = await fetch(path, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body),
  });
  let data = null;
  try { data = await r.json(); } catch (e) { data = null; }
  return { status: r.status, data };
}

function showError(el, res) {
  const e = res.data && res.data.error;
  el.textContent = e ? `${res.status} ${e.code}: ${e.message}` : `HTTP ${res.status}`;
  el.hidden = false;
}

function fixed(x, n) {
  return x === null || x === undefined ? "n/a" : Number(x).toFixed(n);
}

// The bits of a hex fingerprint, most significant first.
function bits(hex) {
  const out = [];
  for (const c of hex) {
    const v = parseInt(c, 16);
    for (let i = 3; i >= 0; i--) out.push((v >> i) & 1);
  }
  return out;
}

function drawGrid(grid, a, b) {
  const ba = bits(a), bb = bits(b);
  grid.replaceChildren();
  grid.dataset.bits = String(ba.length);
  let differing = 0;
  ba.forEach((x, i) => {
    const cell = document.createElement("div");
    const pos = ba.length - 1 - i;
    const diff = x !== bb[i];
    differing += diff ? 1 : 0;
    cell.className = "bit " + (diff ? "diff" : x ? "same1" : "same0");
    cell.title = `bit ${pos}: A=${x} B=${bb[i]}`;
    cell.textContent = diff ? "\u00d7" : String(x);
    grid.appendChild(cell);
  });
  grid.dataset.differing = String(differing);
}

async function compare(ev) {
  ev.preventDefault();
  const err = $("compare-error");
  err.hidden = true;
  const res = await api("POST", "/v1/compare", { a: $("text-a").value, b: $("text-b").value });
  if (res.status !== 200) { showError(err, res); $("compare-result").hidden = true; return; }
  const d = res.data;
  $("fp-a").textContent = d.a;
  $("fp-b").textContent = d.b;
  $("distance").textContent = `${d.distance} of ${d.bits} bits`;
  $("similarity").textContent = fixed(d.similarity, 4);
  $("cosine").textContent = fixed(d.cosine, 4);
  $("jaccard").textContent = fixed(d.jaccard, 4);
  drawGrid($("bit-grid"), d.a, d.b);
  $("compare-result").hidden = false;
}

function cell(row, text, cls) {
  const td = document.createElement("td");
  td.textContent = text;
  if (cls) td.className = cls;
  row.appendChild(td);
  return td;
}

async function search(ev) {
  ev.preventDefault();
  const err = $("search-error");
  err.hidden = true;
  const body = { text: $("search-text").value, k: Number($("search-k").value),
                 limit: Number($("search-limit").value) };
  const res = await api("POST", "/v1/query", body);
  const table = $("search-results");
  const tbody = table.querySelector("tbody");
  tbody.replaceChildren();
  if (res.status !== 200) { showError(err, res); table.hidden = true; $("search-summary").textContent = ""; return; }
  const m = res.data.matches;
  $("search-summary").textContent =
    `${m.length} near-duplicate${m.length === 1 ? "" : "s"} within ${res.data.k} bits of ${res.data.fingerprint}`;
  for (const x of m) {
    const tr = document.createElement("tr");
    cell(tr, String(x.distance));
    cell(tr, x.id, "id");
    const meta = x.meta && typeof x.meta === "object" ? x.meta : null;
    cell(tr, meta && typeof meta.title === "string" ? meta.title : "", "title");
    const fp = cell(tr, "");
    const code = document.createElement("code");
    code.textContent = x.fingerprint;
    fp.appendChild(code);
    cell(tr, x.meta === null ? "" : JSON.stringify(x.meta), "meta");
    tbody.appendChild(tr);
  }
  table.hidden = m.length === 0;
}

async function add(ev) {
  ev.preventDefault();
  const err = $("add-error");
  err.hidden = true;
  $("add-result").textContent = "";
  const meta = {};
  if ($("add-title").value) meta.title = $("add-title").value;
  if ($("add-url").value) meta.url = $("add-url").value;
  const body = { id: $("add-id").value, text: $("add-text").value, check: true,
                 k: Number($("add-k").value) };
  if (Object.keys(meta).length) body.meta = meta;
  if ($("add-unique").checked) body.if_unique = true;
  const res = await api("POST", "/v1/documents", body, $("add-token").value);
  const d = res.data || {};
  if (res.status === 201) {
    const n = d.duplicates.length;
    $("add-result").textContent = `Added ${d.id} (${d.fingerprint}); ${n} near-duplicate${n === 1 ? "" : "s"} already stored.`;
  } else if (res.status === 409) {
    $("add-result").textContent =
      `Not added: ${d.duplicates.length} near-duplicate(s) stored, nearest ${d.duplicates[0].id} at distance ${d.duplicates[0].distance}.`;
  } else {
    showError(err, res);
  }
  refreshStatus();
}

async function refreshStatus() {
  const res = await api("GET", "/v1/stats");
  if (res.status !== 200) return;
  const s = res.data;
  $("status").textContent = s.store
    ? `${s.store.documents} documents \u00b7 ${s.bits}-bit fingerprints \u00b7 scheme ${s.scheme}`
    : `no store \u00b7 ${s.bits}-bit fingerprints \u00b7 scheme ${s.scheme}`;
}

$("compare-form").addEventListener("submit", compare);
$("search-form").addEventListener("submit", search);
$("add-form").addEventListener("submit", add);
refreshStatus();
