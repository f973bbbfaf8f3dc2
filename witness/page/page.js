"use strict";
// The transcript page: render, play from a click, follow playback, search, rename speakers.
// Words live in flat arrays (with an index in start-time order), so the playing word is a
// binary search and one class change, however long the call.
(() => {
  const scriptStart = performance.now();
  const D = JSON.parse(document.getElementById("witness-data").textContent);
  const audio = document.getElementById("audio");
  const tx = document.getElementById("tx");
  const $ = (id) => document.getElementById(id);
  const esc = (s) => s.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);

  // --- words as flat arrays: ws/we (seconds), wu (utterance), uw (first word of each utterance)
  const U = D.u;
  const nWords = U.reduce((n, u) => n + Math.max(1, u[4].length), 0);
  const ws = new Float64Array(nWords), we = new Float64Array(nWords);
  const wu = new Int32Array(nWords), uw = new Int32Array(U.length + 1);
  const words = new Array(nWords);
  let n = 0;
  U.forEach((u, i) => {
    uw[i] = n;
    const list = u[4].length ? u[4] : [[u[0], u[1], u[5] || ""]];
    for (const w of list) { ws[n] = w[0]; we[n] = w[1]; wu[n] = i; words[n++] = w[2]; }
  });
  uw[U.length] = n;

  // --- render: one string, one innerHTML, each utterance's words as plain text; they become
  // spans (to click, mark, highlight) only when the utterance nears the screen or is played or
  // searched, and off-screen utterances skip layout (content-visibility), so hours load fast
  const speakerClass = (k) => (k < 0 ? "ku" : "k" + D.speakers[k].colour);
  const speakerName = (k) => (k < 0 ? "UNKNOWN" : D.speakers[k].name);
  const html = [];
  U.forEach((u, i) => {
    const k = u[2], name = D.speakers.length ? `<span class="n s${k}">${esc(speakerName(k))}</span>` : "";
    html.push(`<div class="u ${speakerClass(k)}" data-i="${i}"><a class="t">${u[3]}</a>${name}` +
      `<p>${esc(words.slice(uw[i], uw[i + 1]).join(" "))}</p></div>`);
  });
  tx.innerHTML = html.length ? html.join("") : '<p id="empty">No speech was found in this audio.</p>';
  const uEls = tx.children;
  const built = new Uint8Array(U.length);
  const marks = new Uint8Array(n);  // per word: 1 a search hit, 2 the current hit
  let nowWord = -1, nowUtt = -1;
  const markClass = (j) => (marks[j] & 1 ? "hit" : "") + (marks[j] & 2 ? " cur" : "") + (j === nowWord ? " now" : "");
  function build(i) {
    if (built[i]) return;
    built[i] = 1;
    const spans = [];
    for (let j = uw[i]; j < uw[i + 1]; j++) {
      const c = markClass(j).trim();
      spans.push(`<span${c ? ` class="${c}"` : ""}>${esc(words[j])}</span>`);
    }
    uEls[i].lastChild.innerHTML = spans.join(" ");
  }
  const wordEl = (i) => { build(wu[i]); return uEls[wu[i]].lastChild.children[i - uw[wu[i]]]; };
  const near = new IntersectionObserver((entries) => {
    for (const e of entries) if (e.isIntersecting) { build(+e.target.dataset.i); near.unobserve(e.target); }
  }, { rootMargin: "800px 0px" });
  if (U.length) for (const el of uEls) near.observe(el);

  // --- audio: embedded bytes (after this script in the page, so the transcript shows first)
  // become a Blob URL (seekable); a linked file is used as it is
  function attachAudio() {
    const bytes = $("witness-audio").textContent.trim();
    if (bytes) {
      const data = Uint8Array.fromBase64 ? Uint8Array.fromBase64(bytes) : base64Bytes(bytes);
      audio.src = URL.createObjectURL(new Blob([data], { type: D.audio.mime }));
    } else if (D.audio.href) {
      audio.src = D.audio.href;
    }
  }
  function base64Bytes(text) {
    const s = atob(text), out = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
    return out;
  }
  document.addEventListener("DOMContentLoaded", attachAudio);
  audio.addEventListener("loadedmetadata", () => { document.documentElement.dataset.audioReady = String(Math.round(performance.now())); }, { once: true });

  // --- playback
  const upper = (arr, t, hi) => { let lo = 0; while (lo < hi) { const m = (lo + hi) >> 1; if (arr[m] <= t) lo = m + 1; else hi = m; } return lo; };
  const duration = () => (isFinite(audio.duration) && audio.duration) || D.duration || 1;
  function playFrom(t) {
    audio.currentTime = Math.max(0, Math.min(t, duration()));
    sync();
    audio.play().catch(() => {});
  }
  function seekBy(dt) { audio.currentTime = Math.max(0, Math.min(audio.currentTime + dt, duration())); sync(); }
  // the word playing at t: the last to start by then (a split stereo call's two parties are
  // transcribed apart, so their utterances may overlap and ws is sorted only within each)
  const byStart = Int32Array.from({ length: n }, (_, i) => i).sort((a, b) => ws[a] - ws[b] || a - b);
  const startsInOrder = Float64Array.from(byStart, (i) => ws[i]);
  const wordAt = (t) => { const k = upper(startsInOrder, t + 1e-3, n) - 1; return k < 0 ? -1 : byStart[k]; };
  function utteranceNow() { const i = wordAt(audio.currentTime); return i < 0 ? -1 : wu[i]; }

  function sync() {
    const t = audio.currentTime;
    $("playhead").style.left = (100 * t / duration()) + "%";
    if (!n) return;
    const i = wordAt(t);
    if (i === nowWord) return;
    if (nowWord >= 0) wordEl(nowWord).classList.remove("now");
    nowWord = i;
    if (i < 0) return;
    wordEl(i).classList.add("now");
    if (wu[i] !== nowUtt) {
      if (nowUtt >= 0) uEls[nowUtt].classList.remove("on");
      nowUtt = wu[i];
      uEls[nowUtt].classList.add("on");
      if ($("follow").checked && !audio.paused) keepInView(uEls[nowUtt]);
    }
  }
  function keepInView(el) {
    const r = el.getBoundingClientRect(), top = document.querySelector("header").getBoundingClientRect().bottom;
    if (r.top < top || r.bottom > innerHeight) el.scrollIntoView({ block: "center" });
  }
  let ticking = false;
  function tick() { sync(); if (!audio.paused) requestAnimationFrame(tick); else ticking = false; }
  audio.addEventListener("play", () => { if (!ticking) { ticking = true; requestAnimationFrame(tick); } });
  for (const ev of ["seeked", "timeupdate", "loadedmetadata"]) audio.addEventListener(ev, sync);

  tx.addEventListener("click", (e) => {
    const el = e.target, u = el.closest(".u");
    if (!u) return;
    const i = +u.dataset.i;
    if (el.tagName === "SPAN" && el.parentElement.tagName === "P") {
      playFrom(ws[uw[i] + Array.prototype.indexOf.call(el.parentElement.children, el)]);
    } else if (el.classList.contains("t") || el.classList.contains("n")) {
      playFrom(U[i][0]);
    }
  });

  // --- speaker timeline: one row per speaker, drawn once per size on a canvas
  const canvas = document.querySelector("#timeline canvas");
  const rows = Math.max(1, D.speakers.length + (U.some((u) => u[2] < 0) && D.speakers.length ? 1 : 0));
  canvas.style.setProperty("--h", Math.min(12 * rows + 4, 64) + "px");
  function drawTimeline() {
    const dpr = devicePixelRatio || 1, w = canvas.clientWidth * dpr, h = canvas.clientHeight * dpr;
    canvas.width = w; canvas.height = h;
    const g = canvas.getContext("2d"), css = getComputedStyle(document.documentElement), rowH = h / rows;
    const colours = D.speakers.map((sp) => css.getPropertyValue("--c" + sp.colour)), unknown = css.getPropertyValue("--cu");
    const scale = w / duration();
    U.forEach((u) => {
      const k = u[2], row = k < 0 ? rows - 1 : (D.speakers.length ? k : 0);
      g.fillStyle = k < 0 ? unknown : colours[k];
      g.fillRect(u[0] * scale, row * rowH + 1, Math.max(1, (u[1] - u[0]) * scale), rowH - 2);
    });
    g.fillStyle = css.getPropertyValue("--cur");
    for (const hit of hits) g.fillRect(ws[hit[0]] * scale - dpr, 0, 2 * dpr, h);
  }
  $("timeline").addEventListener("click", (e) => {
    const r = canvas.getBoundingClientRect();
    playFrom((e.clientX - r.left) / r.width * duration());
  });
  addEventListener("resize", drawTimeline);
  audio.addEventListener("durationchange", drawTimeline);

  // --- search: words normalised (case, punctuation) and joined by spaces; a hit marks its words
  let norm = null, hits = [], hit = -1, searched = "";
  const clean = (s) => s.toLowerCase().replace(/[^\p{L}\p{N}'\s]+/gu, "").replace(/\s+/g, " ").trim();
  function mark([a, b], bit, on) {  // words a..b: the mark in ``marks``, and on their spans where built
    for (let j = a; j <= b; j++) {
      marks[j] = on ? marks[j] | bit : marks[j] & ~bit;
      if (built[wu[j]]) wordEl(j).className = markClass(j).trim();
    }
  }
  function buildIndex() {
    norm = U.map((u, i) => {
      let text = "", at = [], ids = [];
      for (let j = uw[i]; j < uw[i + 1]; j++) {
        const c = clean(words[j]);
        if (!c) continue;
        if (text) text += " ";
        at.push(text.length); ids.push(j); text += c;
      }
      return { text, at, ids };
    });
  }
  function search(query) {
    searched = query;
    for (const h of hits) mark(h, 3, false);
    hits = []; hit = -1;
    const q = clean(query);
    if (q) {
      if (!norm) buildIndex();
      norm.forEach((x) => {
        for (let p = x.text.indexOf(q); p >= 0; p = x.text.indexOf(q, p + 1)) {
          const a = upper(x.at, p, x.at.length) - 1, b = upper(x.at, p + q.length - 1, x.at.length) - 1;
          hits.push([x.ids[a], x.ids[b]]);
        }
      });
      for (const h of hits) mark(h, 1, true);
    }
    $("count").textContent = q ? (hits.length ? `${hits.length} found` : "not found") : "";
    drawTimeline();
  }
  function goToHit(step) {
    if (!hits.length) return;
    if (hit >= 0) mark(hits[hit], 2, false);
    hit = (hit + step + hits.length) % hits.length;
    mark(hits[hit], 2, true);
    wordEl(hits[hit][0]).scrollIntoView({ block: "center" });
    audio.currentTime = ws[hits[hit][0]];
    sync();
    $("count").textContent = `${hit + 1} of ${hits.length}`;
  }
  let pending = 0;
  $("q").addEventListener("input", () => { clearTimeout(pending); pending = setTimeout(() => search($("q").value), 120); });
  $("q").addEventListener("keydown", (e) => {
    if (e.key === "Enter") { clearTimeout(pending); if ($("q").value !== searched) search($("q").value); goToHit(e.shiftKey ? -1 : 1); e.preventDefault(); }
    if (e.key === "Escape") { $("q").blur(); e.preventDefault(); }
  });
  $("next").addEventListener("click", () => goToHit(1));
  $("prev").addEventListener("click", () => goToHit(-1));

  // --- speaker names: edit here, copy the --speaker-names option for the next run
  const box = $("speakers");
  $("names").hidden = !D.speakers.length;
  D.speakers.forEach((s, k) => {
    box.insertAdjacentHTML("beforeend", `<label class="k${s.colour}"><span class="sw"></span><code>${esc(s.label)}</code>` +
      `<input data-k="${k}" value="${esc(s.name)}" aria-label="Name for ${esc(s.label)}"></label>`);
  });
  const shellQuote = (s) => (/^[\w=,.:@%+\/-]+$/.test(s) ? s : "'" + s.replace(/'/g, "'\\''") + "'");
  function speakerNames() {
    const pairs = [];
    let bad = "";
    box.querySelectorAll("input").forEach((input) => {
      const s = D.speakers[+input.dataset.k], name = input.value.trim() || s.label;
      if (name.includes(",")) bad = `a name cannot hold a comma (${name})`;
      if (name !== s.label) pairs.push(`${s.label}=${name}`);
    });
    return { value: pairs.join(","), bad };
  }
  function renamed() {
    const { value, bad } = speakerNames();
    $("names-out").value = bad || !value ? "" : "--speaker-names " + shellQuote(value);
    $("names-msg").textContent = bad || (value ? "" : "rename a speaker to get the option");
  }
  box.addEventListener("input", (e) => {
    const k = +e.target.dataset.k, name = e.target.value.trim() || D.speakers[k].label;
    for (const el of tx.querySelectorAll(".n.s" + k)) el.textContent = name;
    renamed();
  });
  $("copy").addEventListener("click", () => {
    const out = $("names-out");
    out.select();
    (navigator.clipboard ? navigator.clipboard.writeText(out.value) : Promise.reject()).catch(() => document.execCommand("copy"));
    $("names-msg").textContent = out.value ? "copied" : $("names-msg").textContent;
  });
  renamed();

  // --- keys (the table in the page and `witness --help` list the same)
  const typing = (el) => el && (el.tagName === "INPUT" && el.type !== "checkbox" || el.tagName === "SELECT" || el.tagName === "TEXTAREA");
  const rates = Array.from($("rate").options, (o) => +o.value);
  function setRate(step) {
    const i = Math.max(0, Math.min(rates.length - 1, rates.indexOf(audio.playbackRate) + step));
    audio.playbackRate = rates[i]; $("rate").value = String(rates[i]);
  }
  $("rate").addEventListener("change", () => { audio.playbackRate = +$("rate").value; });
  document.addEventListener("keydown", (e) => {
    if (typing(e.target) || e.ctrlKey || e.metaKey || e.altKey) return;
    const u = utteranceNow(), key = e.key;
    const actions = {
      " ": () => (audio.paused ? audio.play().catch(() => {}) : audio.pause()),
      k: () => (audio.paused ? audio.play().catch(() => {}) : audio.pause()),
      ArrowLeft: () => seekBy(e.shiftKey ? -30 : -5),
      ArrowRight: () => seekBy(e.shiftKey ? 30 : 5),
      ArrowUp: () => U.length && playFrom(U[Math.max(0, u >= 0 && audio.currentTime - U[u][0] > 1 ? u : u - 1)][0]),
      ArrowDown: () => U.length && playFrom(U[Math.min(U.length - 1, u + 1)][0]),
      "/": () => { $("q").focus(); $("q").select(); },
      n: () => goToHit(1),
      N: () => goToHit(-1),
      "[": () => setRate(-1),
      "]": () => setRate(1),
      f: () => { $("follow").checked = !$("follow").checked; },
      "?": () => { $("keys").open = !$("keys").open; },
    };
    if (!actions[key]) return;
    e.preventDefault();
    if (e.target !== document.body && e.target.blur) e.target.blur();
    actions[key]();
  });

  drawTimeline();
  sync();
  (window.requestIdleCallback || setTimeout)(() => norm || buildIndex());  // the first search need not wait
  // ms since navigation when the transcript can be used, and of that, ms this script took
  document.documentElement.dataset.ready = String(Math.round(performance.now()));
  document.documentElement.dataset.scriptMs = String(Math.round(performance.now() - scriptStart));
})();
