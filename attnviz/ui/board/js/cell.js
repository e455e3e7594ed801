// attnviz board, per-chart module: a clicked cell of the scores or weights worked out in the
// browser, at once, from data already sent (issue 20: "the panel shows within 150 ms of the
// click"). The server's panel (attnviz/ui/cell.py) then adds what the browser does not do
// cheaply: the equations (KaTeX) and the LaTeX to copy.
//
// - The data: an attention chart whose link carries `arithmetic` (attnviz.ui.cell.cell_data:
//   {scale, mask: ["1101", ...] | null, labels, key_labels?, decimals, terms, heads: {h: {q, k,
//   v}}}, q the head's (N, d_k) query rows, k, v its (M, d_k) key and value rows as plotly's
//   base64 float64; cross-attention: N target tokens, M source tokens, key_labels the
//   source's). Sent only while small
//   (ui.cell.CLIENT_MAX_N tokens).
// - On a click (or Enter from keys.js) on an attention cell of any board of the page (the
//   board's api.onSelect), every chart with data computes that cell of its own view: the
//   head the click names if it has it, its only head when the click names none (Compare:
//   A's and B's boards each work the cell out in their own head). The text goes in a region
//   under the chart's board, with a heading naming the cell (one level below the heading
//   before it: levelAfter), aria-live="polite".
// - The numbers are those of attnviz.teaching.explain.cell (float64, the same steps), the lines those
//   of attnviz.teaching.latex.cell_steps' plain text (same rounding: Python's round half to even).
//
// Pure parts, tested by tests/ui/test_cell_js.py (against explain.cell and latex.cell_steps):
// headData, pickHead, arithmetic, fixed, plain, steps, heading.

import { attentionCells, decode } from "./figure.js";
import { _, fill } from "./i18n.js";

export const DECIMALS = 4; // latex.CELL_DECIMALS
export const TERMS = 12; // latex.CELL_TERMS

// ------------------------------------------------------------------ pure: the numbers

/** The arrays of head `h` of `data` as rows: {q, k, v} (N x d_k each), or null. */
export function headData(data, h) {
  const raw = data && data.heads && data.heads[String(h)];
  if (!raw) return null;
  return { q: decode(raw.q), k: decode(raw.k), v: decode(raw.v) };
}

/** The head of `data` that a selection `sel` ({query, key, head}) names: its head if the
 * data has it, the data's only head if the selection names none; else null. */
export function pickHead(data, sel) {
  const heads = Object.keys((data && data.heads) || {});
  if (sel.head != null) return heads.includes(String(sel.head)) ? Number(sel.head) : null;
  return heads.length === 1 ? Number(heads[0]) : null;
}

const sum = (xs) => xs.reduce((s, x) => s + x, 0);

/** One cell's arithmetic (the fields of attnviz.teaching.explain.Cell), or null if (query, key) is
 * outside the data. */
export function arithmetic(data, head, query, key) {
  const hd = headData(data, head);
  const n = hd ? hd.q.length : 0; // queries (the target's tokens in cross-attention)
  const m = hd ? hd.k.length : 0; // keys (the source's)
  if (!hd || !(query >= 0 && query < n && key >= 0 && key < m)) return null;
  const scale = Number(data.scale);
  // 1. q_i and k_j term by term, and the dot product
  const q = hd.q[query]; // (d_k,)
  const k = hd.k[key]; // (d_k,)
  const products = q.map((x, t) => x * k[t]); // (d_k,)
  const dot = sum(products);
  // 2-3. the row's scores, scaled, -inf where the mask hides a key
  const maskRow = data.mask ? data.mask[query] : null;
  const visible = hd.k.map((_, m) => !maskRow || maskRow[m] === "1"); // (N,)
  const rowScores = hd.k.map((km, m) =>
    visible[m] ? sum(km.map((x, t) => x * q[t])) * scale : -Infinity,
  );
  const masked = !visible[key];
  const score = masked ? -Infinity : dot * scale;
  // 4. exponentials shifted by the row's largest visible score (0 where masked)
  const seen = rowScores.filter((_, m) => visible[m]);
  const rowMax = seen.length ? Math.max(...seen) : 0;
  const rowExps = rowScores.map((s, m) => (visible[m] ? Math.exp(s - rowMax) : 0));
  const expSum = sum(rowExps);
  // 5. the weights of the row (0 for a fully masked row); 6. the output row, term by term
  const rowWeights = rowExps.map((e) => (expSum > 0 ? e / expSum : 0));
  const outputTerms = hd.v.map((vm, m) => vm.map((x) => rowWeights[m] * x)); // (N, d_v)
  const output = hd.v[0].map((_, f) => sum(outputTerms.map((r) => r[f]))); // (d_v,)
  return {
    head,
    query,
    key,
    q,
    k,
    products,
    dot,
    scale,
    masked,
    score,
    rowScores,
    rowMax,
    rowExps,
    expSum,
    weight: rowWeights[key],
    rowWeights,
    values: hd.v,
    outputTerms,
    output,
    fullyMasked: !seen.length,
  };
}

// ------------------------------------------------------------------ pure: the text

/** `v` with `d` decimals as Python's f"{v:.{d}f}" writes it: round half to even (toFixed
 * rounds a tie away from zero; a double is a tie only when v * 2^(d+1) is an odd integer). */
export function fixed(v, d) {
  const t = Math.abs(v) * 2 ** (d + 1);
  if (!(Number.isInteger(t) && t % 2 === 1)) return v.toFixed(d);
  const lo = Math.floor(Math.abs(v) * 10 ** d); // exact: |v| * 10^d is lo + 1/2
  const n = lo % 2 === 0 ? lo : lo + 1;
  return (v < 0 ? "-" : "") + (n / 10 ** d).toFixed(d);
}

/** A number of the plain text (latex._plain): `d` decimals, no "-0.0000", "−∞" masked. */
export function plain(v, d = DECIMALS) {
  if (!Number.isFinite(v)) return v < 0 ? "−∞" : "∞";
  const s = fixed(v, d);
  return s.startsWith("-") && Number(s) === 0 ? s.slice(1) : s;
}

const paren = (s) => (s.startsWith("-") ? `(${s})` : s);

/** Indices of a list of `n` written out (latex._shown): all, or the first ones, null (…),
 * the last 2. */
export function shown(n, terms = TERMS) {
  if (n <= terms) return [...Array(n).keys()];
  return [...[...Array(terms - 2).keys()], null, n - 2, n - 1];
}

const vec = (a, d, terms) =>
  "[" + shown(a.length, terms).map((i) => (i == null ? "…" : plain(a[i], d))).join(", ") + "]";

/** The steps of a cell as [title, text] (latex.cell_steps' titles and plain text). */
export function steps(c, d = DECIMALS, terms = TERMS) {
  const i = c.query;
  const j = c.key;
  const p = (v) => paren(plain(v, d));
  const V = (a) => vec(a, d, terms);
  const idx = shown(c.products.length, terms);
  const terms1 = idx.map((t) => (t == null ? "…" : `${p(c.q[t])}·${p(c.k[t])}`)).join(" + ");
  const prods = idx.map((t) => (t == null ? "…" : p(c.products[t]))).join(" + ");
  const out = [
    [
      fill(_("1. Dot product of query {i} and key {j} (d_k = {dk} terms)"), {
        i,
        j,
        dk: c.products.length,
      }),
      `q_${i} = ${V(c.q)}; k_${j} = ${V(c.k)}. q_${i} · k_${j} = ${terms1} = ${prods} = ` +
        `${plain(c.dot, d)}.`,
    ],
    [
      fill(_("2. Scale: times {f}"), { f: plain(c.scale, 4) }),
      `${plain(c.dot, d)} × ${plain(c.scale, 4)} = ${plain(c.dot * c.scale, d)}.`,
    ],
    c.masked
      ? [
          _("3. Mask: this key is hidden"),
          fill(
            _("Key {j} is masked for query {i}: the score s_{i},{j} is −∞ and the weight is 0."),
            { i, j },
          ),
        ]
      : [
          _("3. Mask: this key is visible"),
          fill(_("Key {j} is visible to query {i}: the score s_{i},{j} = {s}."), {
            i,
            j,
            s: plain(c.score, d),
          }),
        ],
    c.fullyMasked
      ? [
          _("4. Exponentials: none (every key is masked)"),
          fill(_("Query {i} may see no key at all: every exponential is 0 and so is their sum."), {
            i,
          }),
        ]
      : [
          fill(_("4. Exponentials of row {i}, shifted by its largest score {max}"), {
            i,
            max: plain(c.rowMax, d),
          }),
          fill(
            _(
              "e_{i},m = exp(s_{i},m − {max}) for the {n} keys (0 where masked) = {exps}; their sum = {sum}.",
            ),
            { i, max: p(c.rowMax), n: c.rowExps.length, exps: V(c.rowExps), sum: plain(c.expSum, d) },
          ),
        ],
    [
      fill(_("5. Weight a_{i},{j} = {w}"), { i, j, w: plain(c.weight, d) }),
      c.fullyMasked
        ? fill(_("a_{i},{j} = 0 (query {i} has no key to attend to)."), { i, j })
        : fill(_("a_{i},{j} = e_{i},{j} / sum = {e} / {sum} = {w}."), {
            i,
            j,
            e: plain(c.rowExps[j], d),
            sum: plain(c.expSum, d),
            w: plain(c.weight, d),
          }),
    ],
  ];
  const sumTerms = shown(c.rowWeights.length, terms)
    .map((m) => (m == null ? "…" : `${plain(c.rowWeights[m], d)}·${V(c.values[m])}`))
    .join(" + ");
  out.push([
    fill(_("6. Output of query {i}: the weighted sum of the values"), { i }),
    fill(_("out_{i} = sum over m of a_{i},m · v_m = {terms} = {out}."), {
      i,
      terms: sumTerms,
      out: V(c.output),
    }),
  ]);
  return out;
}

/** The panel's heading: "Weight a_3,1 = 0.1234, head 1: query 3 (t3), key 1 (t1)" (the
 * comma keeps a_12,5 apart from a_1,25). */
export function heading(c, labels = [], title = "", d = DECIMALS, keyLabels = null) {
  const tok = (t, names) => (t < names.length ? ` (${names[t]})` : "");
  return (
    title +
    fill(_("Weight a_{i},{j} = {w}, head {h}: query {i}{qtok}, key {j}{ktok}"), {
      i: c.query,
      j: c.key,
      w: plain(c.weight, d),
      h: c.head,
      qtok: tok(c.query, labels),
      ktok: tok(c.key, keyLabels || labels),
    }) +
    (c.masked ? " " + _("(masked: this key is hidden from this query)") : "")
  );
}

// ------------------------------------------------------------------ DOM

/** The panel under the chart's board (made when `make`), or null. */
function panelOf(api, make) {
  const root = api.cell && api.cell.closest(".attnviz-board");
  if (!root) return null;
  let panel = root.querySelector(":scope > .attnviz-arith");
  if (!panel && make) {
    const doc = root.ownerDocument;
    panel = doc.createElement("section");
    panel.className = "attnviz-arith";
    panel.id = `attnviz-arith-${root.dataset.board || Math.random().toString(36).slice(2)}`;
    panel.setAttribute("aria-live", "polite");
    panel.setAttribute("aria-labelledby", panel.id + "-h");
    panel.hidden = true;
    root.appendChild(panel);
  }
  return panel;
}

/** The level of a panel's heading: one below the last heading before the panel in the
 * document (the page's h1, a section's h2), so that a screen reader's list of headings
 * skips no level wherever the panel opens. Panels' own headings do not count: two panels
 * side by side (Compare's A and B) are at the same level, neither under the other. */
export function levelAfter(panel) {
  const FOLLOWING = 4; // Node.DOCUMENT_POSITION_FOLLOWING: the panel comes after h
  let level = 1;
  for (const h of panel.ownerDocument.querySelectorAll("h1, h2, h3, h4, h5, h6")) {
    if (h.closest(".attnviz-arith")) continue; // a panel's heading (this one's: replaced)
    if (!(h.compareDocumentPosition(panel) & FOLLOWING)) break;
    level = Number(h.tagName[1]);
  }
  return Math.min(level + 1, 6);
}

/** Show cell `sel` of `data` in `panel` (hidden when the data has no such cell). */
export function render(panel, data, sel, title = "") {
  const h = pickHead(data, sel);
  const c = h == null ? null : arithmetic(data, h, Number(sel.query), Number(sel.key));
  panel.__attnvizSel = sel;
  if (!c) {
    panel.hidden = true;
    panel.replaceChildren();
    return null;
  }
  const doc = panel.ownerDocument;
  const head = doc.createElement(`h${levelAfter(panel)}`);
  head.className = "attnviz-arith-title";
  head.id = panel.id + "-h";
  head.textContent = heading(c, data.labels || [], title, DECIMALS, data.key_labels || null);
  const list = doc.createElement("ol");
  for (const [t, text] of steps(c, data.decimals || DECIMALS, data.terms || TERMS)) {
    const li = doc.createElement("li");
    const strong = doc.createElement("strong");
    strong.textContent = t + ".";
    li.append(strong, " " + text);
    list.appendChild(li);
  }
  panel.replaceChildren(head, list);
  panel.dataset.cell = `${c.head},${c.query},${c.key}`;
  panel.hidden = false;
  return c;
}

/** The hook: a chart whose link carries `arithmetic` works out the cells clicked on the
 * page under its board. A redraw with new data redoes the cell shown (or hides it). */
export function attach(chartElement, figure, api = {}) {
  const cells = attentionCells(api.link);
  const data = cells && cells.arithmetic;
  const panel = panelOf(api, !!data);
  if (!panel) return null;
  if (!data) {
    if (!panel.__attnvizData) panel.hidden = true; // no chart of the board has data now
    return null;
  }
  panel.__attnvizData = data;
  const title = data.title || "";
  if (panel.__attnvizSel) render(panel, data, panel.__attnvizSel, title);
  const off = api.onSelect ? api.onSelect((sel) => render(panel, data, sel, title)) : null;
  return () => {
    if (off) off();
    if (panel.__attnvizData === data) panel.__attnvizData = null;
  };
}
