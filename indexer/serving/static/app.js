// The search page: search as you type, filters, results, the passage view, the status view.
//
// Every text from the index (snippets, headings, paths, passages) goes into the page as text nodes
// (textContent, append), never as HTML: a document holding <script> shows as text. Control
// characters and BiDi controls in it are shown as the escapes the server names (`shown`), as every
// front end shows them. A hit's snippet is the server's: its lines that match, without markup.
//
// The address holds the question, its filters and the hit open (`open=CITATION&in=ROOT`): a hit
// opened is a page of its own in the history, so it can be shared and the back button closes it.

import { ApiError, count, element, getJSON, shortFolder } from "./api.js";
import { showStatus } from "./status.js";

const DEBOUNCE_MS = 180; // a pause in typing this long starts a search
const RESULTS = 20;
const CONTEXT_LINES = 12; // lines shown around a hit when its passage opens
const MORE_LINES = 40; // added by "Show more above/below"

const $ = (id) => document.getElementById(id);
const form = { q: $("q"), mode: $("mode"), root: $("root"), type: $("type"), path: $("path") };
const resultsList = $("results");
const message = $("message");

const state = {
  settings: { modes: ["hybrid"], stopwords: [], escapes: {} },
  unsafe: null, // a pattern of the characters `settings.escapes` names
  minScore: "", // "0" when the user asked for the hits under the threshold
  wantedOpen: null, // the citation and root the address asks to open, until it is opened
  hits: [],
  selected: -1,
  controller: null, // the search in flight, aborted by the next one
  timer: 0,
  opened: null, // the passage shown: its hit, the lines asked, whether the file ends there
  passageController: null,
};

// -- start -----------------------------------------------------------------------------------

async function start() {
  readAddress();
  bindKeys();
  for (const name of ["mode", "root", "type"]) form[name].addEventListener("change", searchNow);
  form.q.addEventListener("input", searchSoon);
  form.path.addEventListener("input", searchSoon);
  $("search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    searchNow();
  });
  window.addEventListener("hashchange", showView);
  window.addEventListener("popstate", followAddress);
  new ResizeObserver(() => keepSearchInView()).observe($("search-form"));
  $("close-passage").addEventListener("click", () => closePassage(true));
  $("copy-citation").addEventListener("click", copyCitation);
  $("more-above").addEventListener("click", () => widen(-MORE_LINES));
  $("more-below").addEventListener("click", () => widen(MORE_LINES));
  showView();
  if (!$("search-view").hidden) form.q.focus();
  try {
    const [settings, status] = await Promise.all([getJSON("/page/settings"), getJSON("/status?builds=0")]);
    state.settings = settings;
    const characters = Object.keys(settings.escapes || {});
    state.unsafe = characters.length ? new RegExp(`[${characters.map(escapeClass).join("")}]`, "gu") : null;
    fillFilters(settings, status);
  } catch (error) {
    say(errorText(error), "error");
    return;
  }
  if (form.q.value.trim()) await searchNow();
  else sayHint();
  if (state.wantedOpen) openWanted();
}

function escapeClass(character) {
  return `\\u{${character.codePointAt(0).toString(16)}}`;
}

// `text` with every character the server names shown as its escape (`\x1b`, `\u202e`)
function shown(text) {
  return state.unsafe ? text.replace(state.unsafe, (character) => state.settings.escapes[character]) : text;
}

// the search form's height, which the open passage stays below (the search box stays reachable)
function keepSearchInView() {
  const height = $("search-form").getBoundingClientRect().height;
  document.documentElement.style.setProperty("--search-height", `${Math.ceil(height)}px`);
}

function readAddress() {
  const params = new URLSearchParams(location.search);
  form.q.value = params.get("q") || "";
  form.path.value = params.get("path") || "";
  form.mode.dataset.wanted = params.get("mode") || "";
  form.root.dataset.wanted = params.get("root") || "";
  form.type.dataset.wanted = params.get("type") || "";
  state.minScore = params.get("min_score") || "";
  state.wantedOpen = params.get("open") ? { citation: params.get("open"), root: params.get("in") || "" } : null;
}

// back or forward: the question and filters of that address, and its hit open or none
async function followAddress() {
  const before = addressQuery(false);
  readAddress();
  for (const name of ["mode", "root", "type"]) {
    const wanted = form[name].dataset.wanted;
    form[name].value = [...form[name].options].some((item) => item.value === wanted) ? wanted : form[name].options[0]?.value ?? "";
  }
  if (addressQuery(false) !== before) await searchNow(false);
  if (state.wantedOpen) openWanted();
  else if (state.opened) closePassage(false, false);
}

function fillFilters(settings, status) {
  form.mode.replaceChildren(...settings.modes.map((mode) => option(mode, mode)));
  for (const root of status.roots) {
    form.root.append(option(root.path, `${shortFolder(root.path)} (${root.files})`, root.path));
  }
  for (const kind of status.types || []) {
    form.type.append(option(kind.type, `.${kind.type} (${kind.files})`));
  }
  for (const name of ["mode", "root", "type"]) {
    const wanted = form[name].dataset.wanted;
    if (wanted && [...form[name].options].some((item) => item.value === wanted)) form[name].value = wanted;
  }
  $("summary").textContent = `${count(status.files, "file")} · ${count(status.chunks, "chunk")}`;
  state.status = status;
}

function option(value, label, title) {
  const made = element("option", "", label);
  made.value = value;
  if (title) made.title = title;
  return made;
}

// -- views -----------------------------------------------------------------------------------

function showView() {
  const status = location.hash === "#status";
  $("search-view").hidden = status;
  $("status-view").hidden = !status;
  for (const [tab, current] of [
    ["tab-search", !status],
    ["tab-status", status],
  ]) {
    if (current) $(tab).setAttribute("aria-current", "page");
    else $(tab).removeAttribute("aria-current");
  }
  document.title = status ? "Status · indexer" : "Search · indexer";
  if (!status) return;
  const said = $("status-message");
  said.textContent = "";
  showStatus().catch((error) => {
    said.textContent = errorText(error);
    said.className = "message error";
  });
}

// -- searching -------------------------------------------------------------------------------

function searchSoon() {
  clearTimeout(state.timer);
  state.timer = setTimeout(searchNow, DEBOUNCE_MS);
}

async function searchNow(record = true) {
  clearTimeout(state.timer);
  if (state.controller) state.controller.abort();
  const question = form.q.value.trim();
  if (record) writeAddress();
  if (!question) {
    state.controller = null;
    showHits([]);
    sayHint();
    return;
  }
  const controller = new AbortController();
  state.controller = controller;
  const params = new URLSearchParams({
    q: question,
    k: RESULTS,
    mode: form.mode.value || state.settings.modes[0],
  });
  for (const name of ["root", "type", "path"]) {
    const value = form[name].value.trim();
    if (value) params.set(name, value);
  }
  if (state.minScore) params.set("min_score", state.minScore);
  const started = performance.now();
  resultsList.setAttribute("aria-busy", "true");
  try {
    const hits = await getJSON(`/search?${params}`, { signal: controller.signal });
    const elapsed = Math.round(performance.now() - started);
    showHits(hits, question);
    if (hits.length) say(`${count(hits.length, "result")} in ${elapsed} ms`);
    else sayNoResults(question);
  } catch (error) {
    if (error.name === "AbortError") return;
    showHits([]);
    say(errorText(error), "error");
  } finally {
    if (state.controller === controller) {
      state.controller = null;
      resultsList.removeAttribute("aria-busy");
    }
  }
}

// "No results", and what to try, each a button that tries it: another mode, the hits under the
// threshold, without the filters; and fewer words for a long question.
function sayNoResults(question) {
  const mode = form.mode.value || state.settings.modes[0];
  message.replaceChildren(`No results for “${shown(question)}” in ${mode} mode. Try `);
  message.className = "message empty";
  const tries = [];
  for (const other of state.settings.modes.filter((item) => item !== mode)) {
    tries.push(tryButton(`${other} mode`, () => {
      form.mode.value = other;
      searchNow();
    }));
  }
  if (!state.minScore) {
    const button = tryButton("showing weaker hits", () => {
      state.minScore = "0";
      searchNow();
    });
    button.title = "hits under the score threshold (min_score 0), likely not answers";
    tries.push(button);
  }
  const filters = [["root", "folder"], ["type", "type"], ["path", "path"]]
    .filter(([name]) => form[name].value.trim())
    .map(([name, label]) => `${label} ${shown(form[name].value.trim())}`);
  if (filters.length) {
    tries.push(tryButton(`without the filters (${filters.join(", ")})`, () => {
      form.root.value = form.type.value = form.path.value = "";
      searchNow();
    }));
  }
  tries.forEach((button, index) => message.append(index ? (index === tries.length - 1 ? " or " : ", ") : "", button));
  const words = question.split(/\s+/).filter(Boolean).length;
  message.append(words > 3 ? ", or fewer words." : ".");
}

function tryButton(label, action) {
  const button = element("button", "try", label);
  button.type = "button";
  button.addEventListener("click", action);
  return button;
}

// The address of what is shown: the question, its filters, and the hit open. Typing replaces the
// entry; opening or closing a hit adds one (`push`), so the back button closes what it opened.
function writeAddress(push = false) {
  const query = addressQuery(true);
  const address = `${location.pathname}${query ? `?${query}` : ""}${location.hash}`;
  if (push) history.pushState(null, "", address);
  else history.replaceState(null, "", address);
}

function addressQuery(withOpen) {
  const params = new URLSearchParams();
  for (const name of ["q", "mode", "root", "type", "path"]) {
    const value = form[name].value.trim();
    if (value && !(name === "mode" && value === state.settings.modes[0])) params.set(name, value);
  }
  if (state.minScore) params.set("min_score", state.minScore);
  if (withOpen && state.opened) {
    params.set("open", citation(state.opened.hit));
    params.set("in", state.opened.hit.root);
  }
  return params.toString();
}

function sayHint() {
  const status = state.status;
  say(status ? `Search ${count(status.files, "file")} and ${count(status.chunks, "chunk")}.` : "");
}

function say(text, kind = "") {
  message.textContent = text;
  message.className = `message ${kind}`;
}

function errorText(error) {
  if (error instanceof ApiError) return `The server said: ${error.message}`;
  return `The server did not answer (${error.message}). Is index serve still running?`;
}

// -- results ---------------------------------------------------------------------------------

function showHits(hits, question = "") {
  state.hits = hits;
  state.selected = -1;
  resultsList.dataset.question = question; // which question the list answers
  const terms = highlightTerms(question);
  resultsList.replaceChildren(...hits.map((hit, index) => resultItem(hit, index, terms)));
}

function resultItem(hit, index, terms) {
  const item = element("li", "result");
  item.id = `result-${index}`;
  item.setAttribute("role", "option");
  item.setAttribute("aria-selected", "false");
  item.tabIndex = -1;
  const top = element("div", "result-top");
  top.append(element("span", "citation", shown(citation(hit))), scoreBadge(hit.score));
  item.append(top);
  if (hit.copies?.length) {
    // the same text in other files, folded into this hit (indexer/search/copies.py)
    const where = hit.copies.map((copy) => copy.citation + (copy.root === hit.root ? "" : ` in ${copy.root}`));
    item.append(element("div", "copies", shown(`also in ${where.join(", ")}`)));
  }
  if (hit.heading) {
    const heading = element("div", "heading");
    heading.append(...highlighted(shown(hit.heading), terms));
    item.append(heading);
  }
  const snippet = element("p", "snippet");
  snippet.append(...highlighted(shown(hit.snippet ?? ""), terms));
  item.append(snippet);
  item.addEventListener("click", () => {
    select(index);
    openPassage(hit, true);
  });
  return item;
}

function scoreBadge(score) {
  const badge = element("span", "score");
  badge.title = "score (0 to 1, higher is better)";
  const bar = element("span", "score-bar");
  const fill = element("span", "score-fill");
  fill.style.width = `${Math.round(Math.max(0, Math.min(1, score)) * 100)}%`;
  bar.append(fill);
  badge.append(bar, element("span", "score-value", score.toFixed(2)));
  return badge;
}

// `path:12-30`, or `path:page 3` where lines do not say where (as Hit.citation in indexer/search.py)
function citation(hit) {
  return `${hit.path}:${hit.locator || `${hit.start_line}-${hit.end_line}`}`;
}

function select(index) {
  const items = resultsList.children;
  if (!items.length) return;
  index = Math.max(0, Math.min(items.length - 1, index));
  if (state.selected >= 0 && items[state.selected])
    items[state.selected].setAttribute("aria-selected", "false");
  state.selected = index;
  const item = items[index];
  item.setAttribute("aria-selected", "true");
  item.focus({ preventScroll: true });
  item.scrollIntoView({ block: "nearest" });
}

// -- highlighting ----------------------------------------------------------------------------

// The words of the question to mark, as the keyword search reads them: letters and digits, without
// the words it leaves out, `-word` exclusions, and quotes. Each is matched by a rough stem, so
// "punctures" marks "puncture" and "punctured" as the search's stemmer finds them.
function highlightTerms(question) {
  const stopwords = new Set(state.settings.stopwords);
  const terms = [];
  for (const match of question.matchAll(/(?<![\p{L}\p{N}_])(-?)([\p{L}\p{N}_]+)(\*?)/gu)) {
    const [, minus, word, star] = match;
    const lower = fold(word);
    if (minus || stopwords.has(lower) || lower.length < 2) continue;
    terms.push({ stem: stem(lower), prefix: star ? lower : null });
  }
  return terms;
}

function fold(word) {
  return word.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase();
}

const SUFFIXES = [
  ["ingly", ""],
  ["edly", ""],
  ["ing", ""],
  ["ies", "y"],
  ["ied", "y"],
  ["es", ""],
  ["ed", ""],
  ["ly", ""],
  ["s", ""],
  ["e", ""],
];

function stem(word) {
  for (const [suffix, replacement] of SUFFIXES) {
    if (word.length - suffix.length >= 3 && word.endsWith(suffix))
      return word.slice(0, -suffix.length) + replacement;
  }
  return word;
}

function matches(word, terms) {
  const lower = fold(word);
  const stemmed = stem(lower);
  return terms.some((term) => (term.prefix ? lower.startsWith(term.prefix) : stemmed === term.stem));
}

// Text nodes and <mark> elements for `text`, the words matching `terms` marked.
function highlighted(text, terms) {
  if (!terms.length) return [text];
  const parts = [];
  let last = 0;
  for (const match of text.matchAll(/[\p{L}\p{N}_]+/gu)) {
    if (!matches(match[0], terms)) continue;
    if (match.index > last) parts.push(text.slice(last, match.index));
    parts.push(element("mark", "", match[0]));
    last = match.index + match[0].length;
  }
  if (last < text.length) parts.push(text.slice(last));
  return parts;
}

// -- the passage -----------------------------------------------------------------------------

// `record`: a new entry in the history (a hit the user opened), else the address stays as it is
function openPassage(hit, record = false) {
  const first = Math.max(1, hit.start_line - CONTEXT_LINES);
  state.opened = { hit, first, last: hit.end_line + CONTEXT_LINES, atEnd: false };
  state.wantedOpen = null;
  if (record) writeAddress(true);
  $("passage-empty").hidden = true;
  $("passage-body").hidden = false;
  $("passage").classList.add("open");
  $("passage-title").textContent = shown(citation(hit));
  $("passage-heading").textContent = shown(hit.heading || "");
  $("copied").textContent = "";
  $("file-link").hidden = true;
  loadPassage();
  showFileLink(hit);
}

// `scroll`: "hit" brings the hit into view, "top" shows the lines added above, "keep" stays put
async function loadPassage(scroll = "hit") {
  const { hit, first, last } = state.opened;
  if (state.passageController) state.passageController.abort();
  const controller = new AbortController();
  state.passageController = controller;
  const wanted = `${hit.path}:${first}-${last}`;
  const query = new URLSearchParams({ root: hit.root });
  const text = $("passage-text");
  text.setAttribute("aria-busy", "true");
  try {
    const passage = await getJSON(`/chunks/${encodePath(wanted)}?${query}`, { signal: controller.signal });
    if (state.opened?.hit !== hit) return;
    state.opened.first = passage.start_line;
    state.opened.last = passage.end_line;
    state.opened.atEnd ||= passage.end_line < last; // the file ends before what was asked
    showLines(passage, hit, scroll);
    $("more-above").hidden = passage.start_line <= 1;
    $("more-below").hidden = state.opened.atEnd;
  } catch (error) {
    if (error.name === "AbortError") return;
    text.replaceChildren(element("span", "error", errorText(error)));
  } finally {
    text.removeAttribute("aria-busy");
  }
}

function showLines(passage, hit, scroll) {
  const terms = highlightTerms(form.q.value);
  const text = $("passage-text");
  const lines = passage.text.split("\n");
  const width = String(passage.start_line + lines.length - 1).length;
  const rows = lines.map((line, offset) => {
    const number = passage.start_line + offset;
    const row = element("span", number >= hit.start_line && number <= hit.end_line ? "line hit" : "line");
    const content = element("span", "text");
    content.append(...highlighted(shown(line), terms));
    row.append(element("span", "number", String(number).padStart(width)), content);
    return row;
  });
  const kept = text.scrollTop;
  text.replaceChildren(...rows);
  const firstHit = text.querySelector(".hit");
  if (scroll === "top") text.scrollTop = 0;
  else if (scroll === "keep") text.scrollTop = kept;
  else if (firstHit)
    text.scrollTop = Math.max(0, firstHit.offsetTop - text.offsetTop - text.clientHeight / 5);
}

function widen(lines) {
  if (!state.opened) return;
  if (lines < 0) state.opened.first = Math.max(1, state.opened.first + lines);
  else state.opened.last += lines;
  loadPassage(lines < 0 ? "top" : "keep");
}

async function showFileLink(hit) {
  try {
    const query = new URLSearchParams({ root: hit.root, path: hit.path });
    const file = await getJSON(`/page/file?${query}`);
    if (state.opened?.hit !== hit || !file.url) return;
    const link = $("file-link");
    link.href = file.url;
    link.title = `${file.url} (your browser may only let you copy this link)`;
    link.hidden = false;
  } catch {
    // no link: the index is read on another machine than the one that built it
  }
}

async function copyCitation() {
  if (!state.opened) return;
  const text = citation(state.opened.hit);
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const scratch = element("textarea", "visually-hidden", text); // pages not served on loopback
    document.body.append(scratch);
    scratch.select();
    document.execCommand("copy");
    scratch.remove();
  }
  $("copied").textContent = `Copied ${shown(text)}`;
}

// The hit the address names (a shared address, or back and forward): one of the results when it
// is, else read from the index by its citation.
async function openWanted() {
  const { citation: wanted, root } = state.wantedOpen;
  const listed = state.hits.find((hit) => citation(hit) === wanted && (!root || hit.root === root));
  if (listed) {
    openPassage(listed);
    return;
  }
  try {
    const query = new URLSearchParams(root ? { root } : {});
    const passage = await getJSON(`/chunks/${encodePath(wanted)}?${query}`);
    if (state.wantedOpen?.citation !== wanted) return;
    openPassage({ ...passage, heading: "", score: null });
  } catch (error) {
    say(errorText(error), "error");
  }
}

// `record`: the user closed it here (a new entry in the history); not when the address said so
function closePassage(focusResult, record = true) {
  const wasOpen = state.opened !== null;
  state.opened = null;
  if (record && wasOpen) writeAddress(true);
  $("passage-body").hidden = true;
  $("passage-empty").hidden = false;
  $("passage").classList.remove("open");
  if (focusResult && state.selected >= 0) select(state.selected);
}

function encodePath(path) {
  return path.split("/").map(encodeURIComponent).join("/");
}

// -- keys ------------------------------------------------------------------------------------

function bindKeys() {
  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
    if ($("token-dialog").open || location.hash === "#status") return;
    const editing = event.target.closest("input, select, textarea"); // keys of its own
    if (event.key === "/" && !event.target.closest("input, textarea")) {
      event.preventDefault();
      form.q.focus();
      form.q.select();
    } else if (event.key === "ArrowDown" && (event.target === form.q || inResults(event) || !editing)) {
      event.preventDefault();
      select(state.selected + 1);
      followSelection();
    } else if (event.key === "ArrowUp" && inResults(event)) {
      event.preventDefault();
      if (state.selected <= 0) form.q.focus();
      else {
        select(state.selected - 1);
        followSelection();
      }
    } else if (event.key === "Enter" && inResults(event) && state.hits[state.selected]) {
      event.preventDefault();
      openPassage(state.hits[state.selected], true);
    } else if (event.key === "Escape") {
      if (state.opened) closePassage(true);
      else if (!editing) form.q.focus();
    }
  });
}

function inResults(event) {
  return resultsList.contains(event.target);
}

// with a passage open, moving through the results shows each one's
function followSelection() {
  if (state.opened && state.hits[state.selected]) {
    openPassage(state.hits[state.selected]);
    writeAddress();
  }
}

start();
