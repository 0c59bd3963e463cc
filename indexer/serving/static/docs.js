// The API reference at /docs, drawn from the server's own OpenAPI description (/openapi.json), so
// it cannot drift from the code; each operation can be tried from the page. It replaces Swagger UI,
// which FastAPI loads from a CDN: this page works offline, under the same Content-Security-Policy.

import { element, hasToken, request, withCode } from "./api.js";

const $ = (id) => document.getElementById(id);

async function start() {
  let description;
  try {
    const response = await request("/openapi.json");
    if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
    description = await response.json();
  } catch (error) {
    $("message").textContent = `The API description did not load: ${error.message}`;
    $("message").className = "message error";
    return;
  }
  showIntro(description);
  const sections = [];
  for (const [path, operations] of Object.entries(description.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      sections.push(operationSection(path, method, operation));
    }
  }
  $("operations").replaceChildren(...sections);
}

function showIntro(description) {
  const intro = $("intro");
  intro.append(element("h1", "", `${description.info.title} API`));
  for (const paragraph of (description.info.description || "").split(/\n\s*\n/)) {
    if (paragraph.trim()) intro.append(withCode("p", paragraph.replace(/\s+/g, " ")));
  }
  const machine = element("p", "muted");
  const link = element("a", "", "/openapi.json");
  link.href = "/openapi.json";
  machine.append("The machine-readable description, for any OpenAPI tool: ", link, ".");
  intro.append(machine);
}

function operationSection(path, method, operation) {
  const section = element("section", "operation");
  section.id = operation.operationId || `${method}-${path}`;
  const title = element("h2", "operation-title");
  title.append(element("span", `method ${method}`, method.toUpperCase()), element("code", "", path));
  section.append(title);
  if (operation.summary) {
    const summary = withCode("p", operation.summary);
    summary.className = "summary-line";
    section.append(summary);
  }
  for (const paragraph of (operation.description || "").split(/\n\s*\n/)) {
    if (paragraph.trim()) section.append(withCode("p", paragraph.replace(/\s+/g, " ")));
  }
  const parameters = operation.parameters || [];
  if (parameters.length) section.append(parameterTable(parameters));
  section.append(tryForm(path, method, parameters));
  return section;
}

function parameterTable(parameters) {
  const table = element("table", "table");
  const head = document.createElement("tr");
  for (const name of ["Parameter", "In", "Type", "Default", "Description"])
    head.append(element("th", "", name));
  table.append(head);
  for (const parameter of parameters) {
    const row = document.createElement("tr");
    const name = element("td");
    name.append(element("code", "", parameter.name));
    if (parameter.required) name.append(element("span", "required", " required"));
    const schema = parameter.schema || {};
    row.append(
      name,
      element("td", "", parameter.in),
      element("td", "", typeOf(schema)),
      element(
        "td",
        "",
        schema.default === undefined || schema.default === null ? "" : String(schema.default),
      ),
      withCode("td", parameter.description || schema.description || ""),
    );
    table.append(row);
  }
  return table;
}

function typeOf(schema) {
  if (schema.anyOf)
    return schema.anyOf
      .map(typeOf)
      .filter((kind) => kind !== "null")
      .join(" or ");
  if (schema.enum) return `one of ${schema.enum.join(", ")}`;
  if (schema.type === "array") return `${typeOf(schema.items || {})}, repeatable`;
  const kind = schema.type || "any";
  const { minimum, maximum } = schema;
  if (minimum !== undefined && maximum !== undefined) return `${kind}, ${minimum} to ${maximum}`;
  if (minimum !== undefined) return `${kind}, at least ${minimum}`;
  if (maximum !== undefined) return `${kind}, at most ${maximum}`;
  return kind;
}

function isList(schema) {
  return schema.type === "array" || (schema.anyOf || []).some((kind) => kind.type === "array");
}

function tryForm(path, method, parameters) {
  const form = element("form", "try");
  const inputs = parameters.map((parameter) => {
    const label = element("label", "", parameter.name);
    const input = element("input");
    input.name = parameter.name;
    input.autocomplete = "off";
    input.spellcheck = false;
    const schema = parameter.schema || {};
    input.placeholder = isList(schema)
      ? "values, comma-separated"
      : schema.default !== undefined
        ? String(schema.default)
        : "";
    label.append(input);
    form.append(label);
    return { parameter, input, list: isList(schema) };
  });
  const send = element("button", "", "Send");
  send.type = "submit";
  form.append(send);
  const answer = element("div", "answer");
  answer.hidden = true;
  form.append(answer);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (method !== "get") return;
    let address = path;
    const query = new URLSearchParams();
    for (const { parameter, input, list } of inputs) {
      const value = input.value.trim();
      if (!value) continue;
      if (parameter.in === "path")
        address = address.replace(`{${parameter.name}}`, value.split("/").map(encodeURIComponent).join("/"));
      else if (list)
        value
          .split(",")
          .map((part) => part.trim())
          .filter(Boolean)
          .forEach((part) => query.append(parameter.name, part));
      else query.set(parameter.name, value);
    }
    const url = `${address}${query.toString() ? `?${query}` : ""}`;
    answer.hidden = false;
    answer.replaceChildren(element("p", "muted", `GET ${url} …`));
    try {
      const response = await request(url);
      const text = await response.text();
      let shown = text;
      try {
        shown = JSON.stringify(JSON.parse(text), null, 2);
      } catch {
        // not JSON: shown as it came
      }
      const header = hasToken() ? ' -H "Authorization: Bearer $INDEX_TOKEN"' : "";
      const curl = `curl${header} '${location.origin}${url}'`;
      answer.replaceChildren(
        element("p", `status ${response.ok ? "ok" : "failed"}`, `${response.status} ${response.statusText}`),
        element("pre", "curl", curl),
        element("pre", "json", shown),
      );
    } catch (error) {
      answer.replaceChildren(element("p", "status failed", error.message));
    }
  });
  return form;
}

start();
