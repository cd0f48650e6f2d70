// The page's language: the catalog of the browser table's texts (GET /i18n/<lang>.json, Django's
// djangojs domain, which translators fill) and t()/tn() to read a text in it. A text the catalog
// lacks reads in English. Texts are whole sentences with named placeholders: t("{name} drew",
// { name }); ops/messages.py extracts every t("...") and tn("...", "...") of these modules.

/** The languages the server speaks, each named in its own language. */
export const LANGUAGES = [
  ["en", "English"],
  ["fil", "Filipino"],
  ["es", "Español"],
  ["vi", "Tiếng Việt"],
  ["tr", "Türkçe"],
  ["ar", "العربية"],
];
const CODES = new Set(LANGUAGES.map(([code]) => code));
const RIGHT_TO_LEFT = new Set(["ar"]);
const SAVED_KEY = "tongits.language";
// A letter of a right-to-left script (Hebrew, Arabic, Syriac, Thaana, N'Ko and their forms).
const RTL_LETTER = /[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc]/;
// A plural rule as gettext writes it (C operators on n), and nothing else.
const PLURAL_EXPRESSION = /^[n0-9\s()?:!=<>&|%+\-*/]+$/;

const english = (n) => (n === 1 ? 0 : 1);
let current = "en";
let catalog = {};
let pluralIndex = english;

/** The language the page speaks now. */
export function language() {
  return current;
}

export function isRightToLeft() {
  return RIGHT_TO_LEFT.has(current);
}

/** One of LANGUAGES for a language tag ("fil-PH", "tl", "es-419", "AR"), else null. */
export function supported(tag) {
  if (!tag || typeof tag !== "string") return null;
  const primary = tag.trim().toLowerCase().split(/[-_]/)[0];
  if (primary === "tl") return "fil"; // phones say Tagalog for Filipino
  return CODES.has(primary) ? primary : null;
}

/** The language the switch saved on this browser for when no one is signed in. */
export function savedLanguage() {
  return supported(localStorage.getItem(SAVED_KEY));
}

export function saveLanguage(code) {
  localStorage.setItem(SAVED_KEY, code);
}

/** The first of the browser's preferred languages the server speaks, else null. */
export function browserLanguage() {
  const tags = navigator.languages && navigator.languages.length ?
    navigator.languages : [navigator.language];
  for (const tag of tags) {
    const code = supported(tag);
    if (code) return code;
  }
  return null;
}

/** The account's language, else the one saved here, else the browser's, else English. */
export function chooseLanguage(accountLanguage) {
  return supported(accountLanguage) || savedLanguage() || browserLanguage() || "en";
}

function pluralRule(expression) {
  if (typeof expression !== "string" || !PLURAL_EXPRESSION.test(expression)) return english;
  try {
    const rule = new Function("n", `return Number(${expression});`);
    rule(1);
    return rule;
  } catch {
    return english;
  }
}

/**
 * Speak `code` from now on: its catalog (none is needed for English), the document's lang and
 * its direction. A catalog that cannot be read leaves the page in English.
 */
export async function useLanguage(code) {
  let next = supported(code) || "en";
  let texts = {};
  let rule = english;
  if (next !== "en") {
    try {
      const response = await fetch(`/i18n/${next}.json`,
        { headers: { Accept: "application/json" } });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const body = await response.json();
      texts = body.catalog || {};
      rule = pluralRule(body.plural);
    } catch {
      next = "en";
    }
  }
  current = next;
  catalog = texts;
  pluralIndex = rule;
  document.documentElement.lang = next;
  document.documentElement.dir = isRightToLeft() ? "rtl" : "ltr";
  return next;
}

// A value put into a sentence is isolated from it (U+2068 ... U+2069) where the two may run in
// different directions: on a right-to-left page, or a right-to-left name on a left-to-right one.
function isolate(value) {
  const text = String(value);
  return isRightToLeft() || RTL_LETTER.test(text) ? `\u2068${text}\u2069` : text;
}

function fill(text, params) {
  if (!params) return text;
  return text.replace(/\{(\w+)\}/g, (whole, name) =>
    (Object.prototype.hasOwnProperty.call(params, name) ? isolate(params[name]) : whole));
}

/** A text in the page's language, its {placeholders} filled from `params`. */
export function t(text, params) {
  const found = catalog[text];
  return fill(typeof found === "string" && found ? found : text, params);
}

/** A text that depends on a count `n`: the language's plural form of it ({n} is n itself). */
export function tn(one, many, n, params) {
  const found = catalog[one];
  let text = null;
  // A compiled catalog may hold an untranslated plural as the English forms themselves
  // (Babel's .mo): those follow English's rule, not the language's.
  const untranslated = Array.isArray(found) &&
    found.every((form, i) => form === (i ? many : one));
  if (Array.isArray(found) && !untranslated) text = found[pluralIndex(n)] || null;
  if (!text) text = n === 1 ? one : many;
  return fill(text, { n: formatNumber(n), ...params });
}

/** A number as the page's language writes it (1,000; 1.000; ١٬٠٠٠). */
export function formatNumber(n, options) {
  return new Intl.NumberFormat(current, options).format(n);
}

/** Items as the page's language lists them, one after another ("a, b, c"; "a، b، c"). */
export function formatList(items) {
  return new Intl.ListFormat(current, { style: "long", type: "unit" })
    .format(items.map(String));
}

/** A date and time as the page's language writes it. */
export function formatDateTime(value) {
  return new Date(value).toLocaleString(current);
}
