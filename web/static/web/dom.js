// A few DOM helpers: build elements without innerHTML (no markup from the server is trusted).

/** h("button", {type: "button", onclick: f, "data-testid": "x"}, "text", child, [more]) */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2), value);
    } else if (key === "class") {
      el.className = value;
    } else if (value === true) {
      el.setAttribute(key, "");
    } else {
      el.setAttribute(key, String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replace what `el` holds with `children` (nested arrays, null and false as h() takes them). */
export function fill(el, ...children) {
  clear(el);
  append(el, children);
  return el;
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

/** A message in the page's live region (read out by screen readers). */
export function say(text, isError = false) {
  const status = document.getElementById("status");
  if (!status) return;
  status.textContent = text;
  status.classList.toggle("error", Boolean(isError));
}

/** A selector that finds `el` again once it is drawn anew: its data-focus-key, else its
 * data-testid with the person (data-username) it is about. */
function focusSelector(el) {
  const { focusKey, testid, username } = el.dataset;
  if (focusKey) return `[data-focus-key="${CSS.escape(focusKey)}"]`;
  if (!testid) return null;
  const who = username ? `[data-username="${CSS.escape(username)}"]` : "";
  return `[data-testid="${CSS.escape(testid)}"]${who}`;
}

/** Run `draw`, which redraws part of `container`, keeping the keyboard on the same control. */
export function keepFocus(container, draw) {
  const el = document.activeElement;
  const selector = el && el !== container && container.contains(el) ? focusSelector(el) : null;
  draw();
  if (!selector) return;
  const again = container.querySelector(selector);
  if (again && again !== document.activeElement) again.focus({ preventScroll: true });
}
