// dom.js: small helpers to build the page from data without innerHTML, so
// nothing the API returns is ever parsed as markup.
import { state } from './api.js?v=__V__';

// h builds an element: h('a', {href: '#/', class: 'x', onclick: f}, 'text', child...).
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'value') el.value = v;
    else if (k === 'checked' || k === 'disabled' || k === 'selected' || k === 'required' || k === 'multiple') el[k] = !!v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

export function clear(el) { while (el.firstChild) el.removeChild(el.firstChild); return el; }

export function replace(el, ...children) { clear(el); append(el, children); return el; }

export function fmtDate(s) {
  if (!s) return '';
  const d = new Date(s);
  if (isNaN(d)) return s;
  return d.toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
}

export function fmtNum(n) {
  return typeof n === 'number' ? n.toLocaleString() : (n ?? '');
}

export function credits(n) {
  return `${fmtNum(n)} credit${n === 1 || n === -1 ? '' : 's'}`;
}

const statusClass = {
  succeeded: 'ok', processing: 'busy', failed: 'bad', needs_review: 'warn', canceled: 'muted',
  ok: 'ok', unreachable: 'bad', unknown: 'muted', revoked: 'muted', active: 'ok',
};

export function badge(text, kind) {
  return h('span', { class: 'badge ' + (kind || statusClass[text] || 'muted') }, String(text).replace('_', ' '));
}

export function placeholderTag() {
  return h('span', { class: 'badge placeholder', title: 'made by the sandbox engine: a deterministic placeholder, not AI output' }, 'placeholder');
}

// HTTP reason phrases are no titles for a person: an answer whose title is
// one shows its detail (or a plain word for its code) instead.
const reasonPhrases = new Set(['Bad Request', 'Unauthorized', 'Payment Required', 'Forbidden', 'Not Found', 'Method Not Allowed',
  'Conflict', 'Gone', 'Request Entity Too Large', 'Payload Too Large', 'Content Too Large', 'Unsupported Media Type', 'Unprocessable Entity',
  'Unprocessable Content', 'Too Many Requests', 'Internal Server Error', 'Bad Gateway', 'Service Unavailable', 'Gateway Timeout']);

// plainTitles say what went wrong for the codes a person meets most.
const plainTitles = {
  INPUT_UNSUPPORTED_TYPE: 'This file type cannot be used: choose a PNG, JPEG, WebP or GIF image, or an MP4, MOV or WebM video.',
  INPUT_UNDECODABLE: 'This file could not be read as an image or video.',
  INPUT_TOO_LARGE: 'This file is too large.',
  PAYLOAD_TOO_LARGE: 'This is too large to send.',
  INPUT_FETCH_FAILED: 'This URL could not be fetched: check that it is public and leads to the file itself.',
  INPUT_ADDRESS_NOT_ALLOWED: 'This URL points to a private or local network address, which this server does not fetch.',
  INPUT_FORBIDDEN: 'This file belongs to another account.',
  INSUFFICIENT_CREDITS: 'Not enough credits for this.',
  SPEND_LIMIT_EXCEEDED: 'This key has reached its daily spend limit.',
  RATE_LIMITED: 'Too many requests at once: wait a moment and try again.',
  NETWORK: 'The server could not be reached: check the connection and try again.',
  OVERLOADED: 'The server is busy: try again in a moment.',
};

// forPerson drops, for a member who is not an operator, the clauses of a
// message that name a server flag (--allow-private-inputs and the like):
// only the operator can act on them.
function forPerson(text) {
  const s = String(text || '');
  if (!s.includes('--') || (state.session && state.session.operator)) return s;
  return s.split(/(?<=[.;])\s+|;\s*/).filter(c => !/--[a-z]/.test(c)).join('; ').replace(/[;,]\s*$/, '');
}

function capital(s) { return s ? s.charAt(0).toUpperCase() + s.slice(1) : s; }

// problemBox shows an API refusal once, in plain words: a title (the
// code's plain words, the problem's own title unless it is an HTTP reason
// phrase, or else its detail), the detail when it adds something, each
// field's message by the field's label, and the code small for support.
// A refusal with fields leaves its detail out: the detail only repeats
// the first field's message under the field's API name ("input imageUrl:
// ..."), which the field's line says by its label.
export function problemBox(err) {
  const p = (err && err.problem) || { title: 'Error', detail: String(err && err.message || err) };
  const fields = (Array.isArray(p.errors) ? p.errors : [])
    .map(f => ({ label: labelWords(f.field || f.name || ''), message: forPerson(f.message || f.detail || '') }))
    .filter(f => f.message);
  const detail = fields.length ? '' : forPerson(p.detail);
  // The codes, the problem's and its fields' (INVALID_REQUEST with a field
  // INPUT_FORBIDDEN): the most specific one with plain words titles it.
  const codes = [...new Set([p.code, ...(Array.isArray(p.errors) ? p.errors : []).map(f => f.code)].filter(Boolean))];
  const plain = codes.map(c => plainTitles[c]).filter(Boolean).pop();
  let title = plain || (p.title && !reasonPhrases.has(p.title) ? p.title : '');
  let rest = detail;
  let shownFields = fields;
  if (!title && fields.length === 1) { title = fieldWords(fields[0]); shownFields = []; }
  if (!title && fields.length) title = 'Some settings cannot be used';
  if (!title) { title = capital(detail) || 'Something went wrong'; rest = ''; }
  if (rest && title.toLowerCase().includes(rest.toLowerCase())) rest = '';
  shownFields = shownFields.filter(f => !(title + ' ' + rest).toLowerCase().includes(f.message.toLowerCase()));
  return h('div', { class: 'problem', role: 'alert' },
    h('strong', {}, title),
    rest ? h('span', {}, ' ', capital(rest).replace(/([^.!?])$/, '$1.')) : null,
    shownFields.length ? h('ul', {}, shownFields.map(f => h('li', {}, fieldWords(f)))) : null,
    codes.length ? h('small', { class: 'code muted' }, codes.join(' · ')) : null);
}

// fieldWords is a field's message after its label: "Prompt is required",
// "Scale: 3 is not one of 2, 4".
function fieldWords(f) {
  if (!f.label) return capital(f.message);
  return f.label + (/^(is|must|has|was) /.test(f.message) ? ' ' : ': ') + f.message;
}

// labelWords turns a field name into words (aspectRatio -> "Aspect ratio"),
// as views.js's labelOf names the playground's fields.
function labelWords(name) {
  const n = String(name).replace(/^inputs\./, '');
  const w = n.replace(/Url$/, '').replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase().replace(/^num /, 'number of ');
  return capital(w);
}

// errorSlot returns an element to show a form's error in, with show/clear.
// Showing an error removes the success notes of the same form or card, so
// a stale green note never stands beside a new red error.
export function errorSlot() {
  const el = h('div', { class: 'error-slot' });
  el.show = (err) => {
    const scope = el.closest('form, section, .card');
    if (scope) scope.querySelectorAll('.note.ok').forEach(n => n.remove());
    replace(el, problemBox(err));
  };
  el.clear = () => clear(el);
  return el;
}

// flash shows a short success note that stays until replaced.
export function note(text, kind = 'ok') {
  return h('div', { class: 'note ' + kind, role: 'status' }, text);
}

// copyButton copies text to the clipboard.
export function copyButton(text, label = 'Copy') {
  const b = h('button', { type: 'button', class: 'btn small' }, label);
  b.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(text);
      b.textContent = 'Copied';
    } catch {
      // No clipboard permission: select the text next to the button.
      const code = b.parentElement && b.parentElement.querySelector('code, input');
      if (code) {
        const r = document.createRange();
        r.selectNodeContents(code);
        const s = getSelection(); s.removeAllRanges(); s.addRange(r);
      }
      b.textContent = 'Press Ctrl+C';
    }
    setTimeout(() => { b.textContent = label; }, 2000);
  });
  return b;
}

// secretBox shows a secret once, with a copy button and a warning.
export function secretBox(title, secret, warning, cls) {
  return h('div', { class: 'secret ' + (cls || '') },
    h('div', { class: 'secret-title' }, title),
    h('div', { class: 'secret-row' }, h('code', { class: 'secret-value' }, secret), copyButton(secret)),
    h('p', { class: 'muted' }, warning));
}

// field wraps a control with its label.
export function field(label, control, hint) {
  const id = control.id || ('f-' + Math.random().toString(36).slice(2, 9));
  control.id = id;
  return h('div', { class: 'field' }, h('label', { for: id }, label), control, hint ? h('small', { class: 'hint' }, hint) : null);
}

// table builds a table from column heads and rows of cells.
export function table(heads, rows, empty = 'Nothing yet.') {
  if (!rows.length) return h('p', { class: 'empty' }, empty);
  return h('div', { class: 'table-wrap' }, h('table', {},
    h('thead', {}, h('tr', {}, heads.map(x => h('th', { scope: 'col', class: x.startsWith('#') ? 'num' : '' }, x.replace(/^#/, ''))))),
    h('tbody', {}, rows.map(r => h('tr', r.attrs || {}, (r.cells || r).map((c, i) => h('td', {
      class: heads[i] && heads[i].startsWith('#') ? 'num' : '', 'data-label': heads[i] ? heads[i].replace(/^#/, '') : null }, c)))))));
}

// busy disables a button while f runs and returns f's result; the focus
// it had comes back to it.
export async function busy(button, f, label) {
  const old = button.textContent;
  const focused = document.activeElement === button;
  button.disabled = true;
  button.setAttribute('aria-busy', 'true');
  if (label) button.textContent = label;
  try {
    return await f();
  } finally {
    button.disabled = false;
    button.removeAttribute('aria-busy');
    if (label) button.textContent = old;
    // A disabled button loses the focus to the document's body: give it
    // back, so the keyboard goes on from where it was.
    if (focused && button.isConnected && (!document.activeElement || document.activeElement === document.body)) button.focus();
  }
}

// shownHere reports whether the page may show url as an image or video:
// its own origin, the output files' origin, or a data:/blob: URL. Anything
// else would be refused by the page's Content-Security-Policy (and would
// tell a stranger's server who looks), so it is shown as a link.
export function shownHere(url) {
  const u = String(url);
  if (/^(data|blob):/.test(u)) return true;
  let parsed;
  try { parsed = new URL(u, location.href); } catch { return false; }
  const meta = document.querySelector('meta[name="gengate-files-origin"]');
  const files = meta ? meta.getAttribute('content') : '';
  return parsed.origin === location.origin || (!!files && parsed.origin === files);
}

export function media(url, type, alt) {
  if (type === 'video' || /\.(mp4|webm|mov)(\?|$)/i.test(url)) {
    return h('video', { src: url, controls: true, preload: 'metadata', playsinline: true, class: 'media' });
  }
  return h('img', { src: url, alt: alt || 'output', loading: 'lazy', class: 'media' });
}

// outputsOf returns the output URLs of a task record.
export function outputsOf(t) {
  if (t.video) return [t.video];
  return Array.isArray(t.images) ? t.images : [];
}

// shortID shows an id by its last 8 characters: task ids are UUIDv7
// (time-ordered), so their first characters are the same for every task
// made within the same minute; the last ones are random for every id.
export function shortID(id) { return id ? String(id).slice(-8) : ''; }
