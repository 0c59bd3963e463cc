// Requests to the index's JSON API, shared by the search page and the API reference.
//
// With `index serve --token`, every API request needs `Authorization: Bearer TOKEN`. The token is
// asked once, when the server first answers 401, and kept in sessionStorage: for this tab only,
// gone when it closes, sent in a header and never put in an address.

const TOKEN_KEY = "indexer.token";

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

let asking = null; // one question at a time, however many requests were refused together

// The server's answer to GET `path`, asking for the token as long as the server refuses it.
export async function request(path, { signal } = {}) {
  for (;;) {
    const token = sessionStorage.getItem(TOKEN_KEY);
    const headers = { Accept: "application/json" };
    if (token) headers.Authorization = `Bearer ${token}`;
    const response = await fetch(path, { headers, signal, cache: "no-store" });
    if (response.status !== 401) return response;
    // a token entered meanwhile (for another request) is tried before asking again
    if (token !== sessionStorage.getItem(TOKEN_KEY)) continue;
    if (token) sessionStorage.removeItem(TOKEN_KEY);
    await askToken(Boolean(token));
  }
}

// The JSON of a successful answer; an ApiError with the server's message otherwise.
export async function getJSON(path, options) {
  const response = await request(path, options);
  const body = await response.json().catch(() => null);
  if (!response.ok) {
    const message = body && typeof body.error === "string" ? body.error : response.statusText;
    throw new ApiError(response.status, message);
  }
  return body;
}

export function hasToken() {
  return sessionStorage.getItem(TOKEN_KEY) !== null;
}

function askToken(wasRefused) {
  if (!asking) {
    asking = showTokenDialog(wasRefused).finally(() => {
      asking = null;
    });
  }
  return asking;
}

function showTokenDialog(wasRefused) {
  const dialog = document.getElementById("token-dialog");
  const form = document.getElementById("token-form");
  const input = document.getElementById("token-input");
  document.getElementById("token-refused").hidden = !wasRefused;
  input.value = "";
  return new Promise((resolve, reject) => {
    const done = () => {
      form.removeEventListener("submit", submitted);
      dialog.removeEventListener("cancel", cancelled);
    };
    const submitted = (event) => {
      event.preventDefault();
      const token = input.value.trim();
      if (!token) return;
      sessionStorage.setItem(TOKEN_KEY, token);
      done();
      dialog.close();
      resolve();
    };
    const cancelled = () => {
      done();
      reject(new ApiError(401, "This server needs the token it was started with (index serve --token)."));
    };
    form.addEventListener("submit", submitted);
    dialog.addEventListener("cancel", cancelled);
    dialog.showModal();
    input.focus();
  });
}

// Text for people: an element holding `text`, with `code` spans where the text has `backticks`.
export function withCode(tag, text) {
  const element = document.createElement(tag);
  String(text)
    .split("`")
    .forEach((part, index) => {
      if (!part) return;
      if (index % 2) {
        const code = document.createElement("code");
        code.textContent = part;
        element.append(code);
      } else {
        element.append(part);
      }
    });
  return element;
}

export function element(tag, className, text) {
  const made = document.createElement(tag);
  if (className) made.className = className;
  if (text !== undefined && text !== null) made.textContent = String(text);
  return made;
}

export function count(number, noun) {
  return `${Number(number).toLocaleString("en")} ${noun}${number === 1 ? "" : "s"}`;
}

// The last two folders of a long path, for a narrow place (the whole path goes in a title).
export function shortFolder(path) {
  const parts = path.split(/[\\/]/).filter(Boolean);
  return parts.length > 2 ? `…/${parts.slice(-2).join("/")}` : path;
}
