// The student's page of a live class (attnviz/classroom/web/student.py serves it and its API).
//
// 1. The student id stays in the page's link (student=), so a reload is the same student.
// 2. A Check goes into an outbox kept in localStorage with a client id (cid) and is sent
//    from there, in order, until the server answers: with the network down the page says
//    "Not sent yet" and sends it when the network is back; the server stores a retried cid
//    once.
// 3. What the teacher does (reveal, end, a question on the projector) arrives by a long
//    poll: state?since=<version> answers when the class changed, or 204 after 25 s.
// 4. Its words are in the page's language: the server writes this script's messages into
//    it in that language (attnviz/classroom/web/words.py: each message of _() translated,
//    each ngettext's forms by CLDR plural category); every API call sends lang= so that
//    the server's sentences match the page.

const main = document.getElementById("class");
const code = main.dataset.code;
const api = code
  ? new URL(`${main.dataset.join}/api/${encodeURIComponent(code)}/`, document.baseURI)
  : null;

const RETRY_MS = [1000, 2000, 3000, 5000];
const $ = (sel, root = document) => root.querySelector(sel);

// --------------------------------------------------------------------------- words

const LANG = document.documentElement.lang || "en";

// A message, as the server wrote it in the page's language.
const _ = (message) => message;

// A count's form: the server wrote the message's forms by CLDR plural category.
function ngettext(forms, n) {
  let category = "other";
  try {
    category = new Intl.PluralRules(LANG).select(n);
  } catch {
    // an unknown language: its "other" form
  }
  return forms[category] ?? forms.other;
}

// "{name}" in a translated message replaced by its value (the values are not read again).
const fill = (text, values) =>
  text.replace(/\{(\w+)\}/g, (hole, name) => (name in values ? String(values[name]) : hole));

// An API address with the page's language.
function apiURL(path) {
  const url = new URL(path, api);
  url.searchParams.set("lang", LANG);
  return url;
}

function setHTML(el, html, cls) {
  el.innerHTML = html; // server-made HTML: escaped there (attnviz/classroom/web/render.py)
  el.className = el.className.split(" ")[0] + (cls ? ` ${cls}` : "");
}

function setText(el, text, cls) {
  el.textContent = text;
  el.className = el.className.split(" ")[0] + (cls ? ` ${cls}` : "");
}

function status(text) {
  const box = $("#status");
  box.hidden = !text;
  box.textContent = text || "";
}

// --------------------------------------------------------------------------- the student

function studentId() {
  const link = new URL(location.href);
  let id = link.searchParams.get("student");
  if (!id || !/^[A-Za-z0-9]{8,32}$/.test(id)) {
    id = main.dataset.student;
    link.searchParams.set("student", id);
    history.replaceState(null, "", link);
  }
  return id;
}

function newCid() {
  const bytes = new Uint8Array(12);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

// --------------------------------------------------------------------------- the outbox

const NICK_MAX = 24;

function store(key, value) {
  try {
    if (value === undefined) return JSON.parse(localStorage.getItem(key) || "null");
    localStorage.setItem(key, JSON.stringify(value));
  } catch {
    return null; // private mode: the outbox lives in memory only
  }
  return value;
}

class Outbox {
  constructor(key) {
    this.key = key;
    this.items = store(key) || [];
    this.busy = false;
    this.wait = 0;
  }
  save() {
    store(this.key, this.items);
  }
  add(entry) {
    // a newer answer to the same question replaces one not yet sent
    this.items = this.items.filter((e) => !(e.kind === entry.kind && e.target === entry.target));
    this.items.push(entry);
    this.save();
    this.flush();
  }
  async flush() {
    if (this.busy) return;
    this.busy = true;
    try {
      while (this.items.length) {
        const entry = this.items[0];
        const done = await send(entry);
        if (!done) {
          const ms = RETRY_MS[Math.min(this.wait++, RETRY_MS.length - 1)];
          await new Promise((ok) => setTimeout(ok, entry.retryAfter || ms));
          continue;
        }
        this.wait = 0;
        // the entry sent, not the first: a newer answer may have replaced it meanwhile
        this.items = this.items.filter((e) => e !== entry);
        this.save();
      }
    } finally {
      this.busy = false;
    }
  }
}

// The answer of one POST: true when it is settled (stored, or refused for good), false to
// send it again.
async function send(entry) {
  const shown = entry.kind === "answer" ? cardOf(entry.target) : null;
  let res;
  try {
    res = await fetch(apiURL(entry.kind), {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(entry.body),
      credentials: "same-origin",
    });
  } catch {
    pending(entry, _("Not sent yet: no connection to the class. Your answer is kept here and " +
      "sent when the connection is back."));
    return false;
  }
  let data = {};
  try {
    data = await res.json();
  } catch {
    data = { message: fill(_("The server answered {status}."), { status: res.status }) };
  }
  entry.retryAfter = 0;
  if (res.status === 429 || res.status >= 500) {
    entry.retryAfter = (Number(res.headers.get("Retry-After")) || 0) * 1000;
    const why = data.message || _("the server is busy");
    pending(entry, fill(_("Not sent yet: {why} It is sent again in a moment."), { why }));
    return false;
  }
  if (entry.kind === "hello") return true;
  if (entry.kind === "predict") {
    predictDone(entry, res.ok, data);
    return true;
  }
  if (!res.ok) {
    const said = data.message || fill(_("Not sent ({status})."), { status: res.status });
    setText($(".verdict", shown), said, "wrong");
    return true;
  }
  showVerdict(entry.target, data, entry.body.cid);
  return true;
}

function pending(entry, text) {
  if (entry.kind === "hello") return;
  const box = entry.kind === "answer" ? $(".verdict", cardOf(entry.target)) : $("#predict-verdict");
  setText(box, text, "pending");
}

// --------------------------------------------------------------------------- questions

const cardOf = (item) => document.getElementById(`q${item}`);
// The answers checked on this page (their cids): their verdicts are scrolled into view.
const checked = new Set();

// The verdict of question ``item``; scrolled into view when it answers a Check of this
// page (a reload's stored verdicts are not: the page stays where it is).
function showVerdict(item, data, cid) {
  const box = $(".verdict", cardOf(item));
  const note = data.message ? `<p>${escapeHTML(data.message)}</p>` : "";
  setHTML(box, data.verdict + note, data.right ? "right" : "wrong");
  if (checked.delete(cid)) inView(box);
}

// ``box`` scrolled just enough to be on the screen (below a Check the phone's keyboard
// may have hidden), at once: no animation to wait for.
function inView(box) {
  box.scrollIntoView({ block: "nearest", inline: "nearest" });
}

function escapeHTML(text) {
  const p = document.createElement("p");
  p.textContent = text;
  return p.innerHTML;
}

function nickname() {
  const value = $("#nickname").value.trim();
  return value || null;
}

function nicknameProblem() {
  const value = $("#nickname").value.trim();
  if (value.length > NICK_MAX) {
    const said = ngettext(
      "Your nickname is {n} character long; at most {max}. Your answers are not sent until " +
        "you change it.",
      "Your nickname is {n} characters long; at most {max}. Your answers are not sent " +
        "until you change it.",
      value.length,
    );
    return fill(said, { n: value.length, max: NICK_MAX });
  }
  return "";
}

function check(form, outbox, student) {
  const item = Number(form.dataset.item);
  const box = $(".verdict", cardOf(item));
  const input = form.elements.answer;
  const value = (input instanceof RadioNodeList ? input.value : input.value || "").trim();
  if (!value) {
    setText(box, _("Type an answer first."), "wrong");
    inView(box);
    return;
  }
  const problem = nicknameProblem();
  if (problem) {
    setText(box, problem, "wrong");
    $("#nickname").focus();
    return;
  }
  setText(box, _("Sending…"), "pending");
  inView(box);
  const cid = newCid();
  checked.add(cid);
  outbox.add({
    kind: "answer",
    target: item,
    body: { student, cid, item, answer: value, nickname: nickname() },
  });
}

// --------------------------------------------------------------------------- the class

let question = null;
let restored = null; // the stored prediction, { qid, choice }, until its question shows

function applyState(state) {
  document.body.classList.toggle("closed", state.closed);
  status(
    state.closed
      ? _("The teacher has ended this class: your answers are still checked here, but no " +
          "longer sent.")
      : "",
  );
  for (const [item, shown] of Object.entries(state.revealed)) {
    const box = $(".revealed", cardOf(item));
    if (!box || box.dataset.shown) continue;
    box.dataset.shown = "1";
    box.hidden = false;
    cardOf(item).classList.add("shown"); // its explanation once: here, not in the verdict
    const said = fill(_("Revealed by the teacher: the answer is {answer}"), {
      answer: shown.answer,
    });
    setHTML(box, `<p><strong>${escapeHTML(said)}</strong></p>${shown.html}`);
  }
  showQuestion(state.question);
}

function showQuestion(q) {
  const box = $("#predict");
  if (!q) {
    box.hidden = true;
    question = null;
    return;
  }
  const isNew = !question || question.qid !== q.qid;
  const kept = restored && restored.qid === q.qid ? restored.choice : null;
  question = { ...q, mine: isNew ? kept : question.mine };
  box.hidden = false;
  $("#predict-prompt").textContent = q.prompt;
  const link = $("#predict-link");
  link.hidden = !q.link || q.revealed;
  if (q.link) $("a", link).href = q.link;
  if (isNew) {
    const choices = $("#predict-choices");
    choices.replaceChildren(
      ...q.choices.map((c, i) => {
        const label = document.createElement("label");
        label.className = "choice";
        const input = document.createElement("input");
        Object.assign(input, { type: "radio", name: "choice", value: String(i) });
        label.append(input, ` ${c}`);
        return label;
      }),
    );
    setText($("#predict-verdict"), "");
  }
  $("#predict-form").hidden = q.revealed;
  if (q.revealed) {
    const mine = question.mine;
    const said =
      mine === null
        ? _("you did not answer")
        : mine === q.answer
          ? _("you predicted it")
          : fill(_("you predicted {choice}"), { choice: q.choices[mine] });
    const text = _("Revealed by the teacher: the answer is {answer} ({said}). It is outlined " +
      "on the projector's chart.");
    setText($("#predict-verdict"), fill(text, { answer: q.choices[q.answer], said }), "right");
  }
}

function predictDone(entry, ok, data) {
  if (!ok) {
    setText($("#predict-verdict"), data.message || _("Not sent."), "wrong");
    return;
  }
  if (question && question.qid === entry.body.qid) {
    question.mine = entry.body.choice;
    const choice = question.choices[entry.body.choice];
    setText($("#predict-verdict"), fill(_("Sent: {choice} (you can change it until the " +
      "reveal)."), { choice }));
  }
}

async function follow() {
  let since = "";
  let fails = 0;
  for (;;) {
    let res;
    try {
      res = await fetch(apiURL(`state?since=${encodeURIComponent(since)}`), {
        cache: "no-store",
      });
    } catch {
      res = null;
    }
    if (res && res.status === 200) {
      const state = await res.json();
      since = state.v;
      fails = 0;
      if (!document.body.classList.contains("closed") || state.closed) applyState(state);
      document.body.dataset.state = state.v; // the class as shown (tests and benchmarks wait on it)
      continue;
    }
    if (res && res.status === 204) {
      fails = 0;
      continue;
    }
    if (res && res.status === 404) {
      status(_("This class is over: it ended more than 24 hours ago, or its code is wrong."));
      return;
    }
    fails += 1;
    status(_("Reconnecting to the class… Your answers are kept on this device meanwhile."));
    await new Promise((ok) => setTimeout(ok, RETRY_MS[Math.min(fails - 1, RETRY_MS.length - 1)]));
  }
}

async function restore(student) {
  try {
    const res = await fetch(apiURL(`mine?student=${student}`), { cache: "no-store" });
    if (!res.ok) return;
    const mine = await res.json();
    for (const [item, a] of Object.entries(mine.answers)) {
      const form = $("form", cardOf(item));
      const input = form.elements.answer;
      if (input instanceof RadioNodeList) input.value = a.answer;
      else input.value = a.answer;
      showVerdict(item, { right: a.right, verdict: a.verdict });
    }
    if (mine.choice && mine.choice.choice !== null) {
      restored = mine.choice;
      if (question && question.qid === restored.qid) {
        question.mine = restored.choice;
        showQuestion(question);
        if (!question.revealed) predictDone({ body: restored }, true, {});
      }
    }
  } catch {
    // offline at load: the stored answers come back with the next reload
  }
}

function start() {
  if (!code) return;
  const student = studentId();
  const outbox = new Outbox(`attnviz-outbox-${code}-${student}`);
  const nickKey = `attnviz-nickname-${code}`;
  const nick = $("#nickname");
  const help = $("#nickname-help");
  const helpText = help.textContent; // "At most 24 characters…", in the page's language
  nick.value = store(nickKey) || "";
  nick.addEventListener("input", () => {
    store(nickKey, nick.value);
    const problem = nicknameProblem();
    help.textContent = problem || helpText;
    help.className = problem ? "help wrong" : "help";
  });
  for (const form of document.querySelectorAll("form.answer")) {
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      check(form, outbox, student);
    });
  }
  $("#predict-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const picked = event.target.elements.choice;
    if (!question || !picked || picked.value === "") {
      setText($("#predict-verdict"), _("Pick one first."), "wrong");
      return;
    }
    outbox.add({
      kind: "predict",
      target: question.qid,
      body: { student, cid: newCid(), qid: question.qid, choice: Number(picked.value) },
    });
  });
  for (const entry of outbox.items) pending(entry, _("Not sent yet: sending it now."));
  if (!store(`attnviz-hello-${code}-${student}`)) {
    // counted once on the projector's join screen (sent again until the server has it)
    outbox.add({ kind: "hello", target: 0, body: { student, cid: newCid() } });
    store(`attnviz-hello-${code}-${student}`, 1);
  }
  window.addEventListener("online", () => outbox.flush());
  outbox.flush();
  follow();
  restore(student);
}

start();
