// The status view: what `index status --json` knows (GET /status), with the last builds drawn as
// two small bar charts, oldest on the left. The charts are SVG made with DOM calls (no library).

import { count, element, getJSON } from "./api.js";

const BUILDS = 30;
const SVG = "http://www.w3.org/2000/svg";
const $ = (id) => document.getElementById(id);

export async function showStatus() {
  const status = await getJSON(`/status?builds=${BUILDS}`);
  showCards(status);
  const builds = [...status.builds].reverse(); // oldest first, as time runs
  $("build-charts").replaceChildren(
    chart("Build duration", builds, (build) => build.seconds, seconds),
    chart(
      "Chunks embedded",
      builds,
      (build) => build.chunks_embedded,
      (value) => count(value, "chunk"),
    ),
  );
  $("builds").replaceChildren(...buildRows(status.builds));
  $("roots").replaceChildren(
    row("th", ["Folder", "Files", "Chunks"]),
    ...status.roots.map((root) => {
      const tr = row("td", [root.path, number(root.files), number(root.chunks)]);
      tr.firstChild.className = "path";
      return tr;
    }),
  );
  const types = status.types || [];
  $("types").replaceChildren(
    ...(types.length
      ? types.map((kind) => element("span", "chip", `.${kind.type} ${number(kind.files)}`))
      : [document.createTextNode("No files indexed yet.")]),
  );
}

function showCards(status) {
  const backend = status.backend && status.backend.backend;
  const cards = [
    ["Files", number(status.files)],
    ["Chunks", number(status.chunks)],
    ["Model", status.model || "none yet", [backend, status.dimension && `${status.dimension} dimensions`]],
    ["Size", megabytes(status.size_bytes)],
    ["Index", status.index],
  ];
  $("status-cards").replaceChildren(
    ...cards.map(([label, value, notes]) => {
      const card = element("div", "card");
      const long = String(value).length > 12 ? " long" : "";
      card.append(element("div", "card-label", label), element("div", `card-value${long}`, value));
      const note = (notes || []).filter(Boolean).join(" · ");
      if (note) card.append(element("div", "card-note", note));
      return card;
    }),
  );
}

function buildRows(builds) {
  const head = row("th", [
    "#",
    "Started",
    "Duration",
    "Outcome",
    "Files +/~/−",
    "Failed",
    "Embedded",
    "Re-used",
  ]);
  if (!builds.length) return [head, row("td", ["No builds yet."])];
  return [
    head,
    ...builds.map((build) => {
      const tr = row("td", [
        build.id,
        when(build.started_at),
        seconds(build.seconds),
        build.outcome,
        `+${number(build.files_added)} ~${number(build.files_changed)} −${number(build.files_removed)}`,
        number(build.files_failed),
        number(build.chunks_embedded),
        number(build.chunks_reused),
      ]);
      tr.children[3].className = `outcome ${build.outcome}`;
      if (build.error) tr.children[3].title = build.error;
      return tr;
    }),
  ];
}

function row(cell, values) {
  const tr = document.createElement("tr");
  for (const value of values) tr.append(element(cell, "", value));
  return tr;
}

// A bar per build, scaled to the largest; each bar's <title> tells its build.
function chart(title, builds, value, format) {
  const figure = element("figure", "chart");
  const caption = element("figcaption", "", title);
  const width = 360;
  const height = 120;
  const top = 8;
  const bottom = 18;
  const values = builds.map(value);
  const largest = Math.max(...values, 0);
  if (largest > 0) caption.append(element("span", "chart-max", `up to ${format(largest)}`));
  figure.append(caption);
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", `${title} of the last ${builds.length} builds`);
  svg.append(shape("line", { x1: 0, y1: height - bottom, x2: width, y2: height - bottom, class: "axis" }));
  const slot = width / Math.max(builds.length, 1);
  const barWidth = Math.max(2, Math.min(28, slot * 0.7));
  builds.forEach((build, index) => {
    const share = largest > 0 ? values[index] / largest : 0;
    const barHeight = Math.max(values[index] > 0 ? 2 : 0, share * (height - top - bottom));
    const bar = shape("rect", {
      x: index * slot + (slot - barWidth) / 2,
      y: height - bottom - barHeight,
      width: barWidth,
      height: barHeight,
      rx: 2,
      class: `bar ${build.outcome}`,
    });
    const tip = document.createElementNS(SVG, "title");
    const shown = format(values[index]);
    tip.textContent = `build #${build.id}, ${when(build.started_at)}: ${shown} (${build.outcome})`;
    bar.append(tip);
    svg.append(bar);
  });
  if (builds.length) {
    const first = builds[0].started_at;
    const last = builds.at(-1).started_at;
    const moment = day(first) === day(last) ? time : day; // one day's builds: their times
    svg.append(label(4, height - 4, moment(first), "start"));
    if (builds.length > 1) svg.append(label(width - 4, height - 4, moment(last), "end"));
  } else {
    svg.append(label(width / 2, height / 2, "no builds yet", "middle"));
  }
  figure.append(svg);
  return figure;
}

function shape(name, attributes) {
  const made = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) made.setAttribute(key, value);
  return made;
}

function label(x, y, text, anchor) {
  const made = shape("text", { x, y, "text-anchor": anchor, class: "chart-label" });
  made.textContent = text;
  return made;
}

function number(value) {
  return Number(value || 0).toLocaleString("en");
}

function megabytes(bytes) {
  return `${(bytes / 2 ** 20).toFixed(1)} MB`;
}

function seconds(value) {
  if (value < 60) return `${value.toFixed(value < 10 ? 1 : 0)} s`;
  const minutes = Math.floor(value / 60);
  return minutes < 60 ? `${minutes} min ${Math.round(value % 60)} s` : `${(value / 3600).toFixed(1)} h`;
}

function when(iso) {
  return new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

function time(iso) {
  return new Date(iso).toLocaleTimeString(undefined, { timeStyle: "short" });
}

function day(iso) {
  return new Date(iso).toLocaleDateString(undefined, { month: "short", day: "numeric" });
}
