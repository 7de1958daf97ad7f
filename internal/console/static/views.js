// views.js: pieces of pages that show tasks, shared by the holder's and the
// operator's pages.
import { modelByID } from './api.js?v=__V__';
import { h, fmtDate, fmtNum, credits, badge, placeholderTag, media, outputsOf, shortID, shownHere } from './dom.js?v=__V__';

export const taskHeads = ['Task', 'Prompt', 'Created', 'Model', 'Status', '#Cost'];

export function modelName(id) {
  const m = modelByID(id);
  return m ? m.name : id;
}

// labelOf turns an option's or input's name into words: aspectRatio ->
// "Aspect ratio", inputs.imageUrl -> "Image", numOutputs -> "Number of
// outputs".
export function labelOf(name) {
  const n = String(name).replace(/^inputs\./, '');
  const words = n.replace(/Url$/, '').replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase().replace(/^num /, 'number of ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

// refundWords say why a task's credits came back; a refund's ledger
// note is the task's error code.
const refundWords = {
  CANCELED_BEFORE_CHARGE: 'Canceled before any charge: refunded',
  REFUSED_AFTER_REVIEW: 'Refused after review: refunded',
};

// ledgerNote says what a ledger entry was, in words: a task's charge by
// its model's name (the entry's note is the model's id), a refund by
// what happened to the task (the note is its error code), any other
// entry by its note.
export function ledgerNote(e) {
  const n = e.note || '';
  if (e.kind === 'charge' && e.taskId && n) return modelName(n);
  if (e.kind === 'refund' && /^[A-Z_]+$/.test(n)) return refundWords[n] || 'The task failed: refunded';
  return n;
}

// keptCredits is what a task cost after its refunds.
export function keptCredits(t) {
  const refunded = (t.error && t.error.creditsRefunded) || 0;
  return Math.max(0, (t.cost || 0) - refunded);
}

// costText says what a task cost and what of it was refunded.
export function costText(t) {
  const e = t.error || {};
  const refunded = e.creditsRefunded || 0;
  if (t.status === 'canceled' && !refunded) return `${credits(t.cost)}, kept: the provider may have charged for the work`;
  if (refunded && refunded >= (t.cost || 0)) return `${credits(t.cost)}, refunded`;
  if (refunded) return `${credits(keptCredits(t))} (${credits(refunded)} refunded)`;
  return credits(t.cost);
}

// elapsedText is how long a task ran (so far, while it is unfinished).
export function elapsedText(t) {
  const start = Date.parse(t.createdAt);
  const end = t.completedAt ? Date.parse(t.completedAt) : Date.now();
  if (isNaN(start)) return '';
  const s = Math.max(0, Math.round((end - start) / 1000));
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

// thumbOf is a small image of a task's first output, when the page may show it.
export function thumbOf(t) {
  const u = t.type === 'image' && Array.isArray(t.images) ? t.images[0] : '';
  if (!u || !shownHere(u)) return null;
  return h('img', { src: u, alt: '', loading: 'lazy', class: 'thumb', width: 40, height: 40 });
}

export function taskRow(t) {
  const prompt = t.prompt || '';
  const refunded = (t.error && t.error.creditsRefunded) || 0;
  return [
    h('span', { class: 'task-cell' }, thumbOf(t), h('a', { href: '#/tasks/' + encodeURIComponent(t.jobId), class: 'mono' }, shortID(t.jobId))),
    prompt ? h('span', { class: 'prompt-cell', title: prompt }, prompt.length > 80 ? prompt.slice(0, 79) + '…' : prompt) : h('span', { class: 'muted' }, '—'),
    fmtDate(t.createdAt),
    h('span', {}, modelName(t.modelId), ' ', t.placeholder && outputsOf(t).length ? placeholderTag() : null, t.test ? badge('test', 'info') : null),
    badge(t.status),
    refunded ? h('span', { title: credits(refunded) + ' refunded' }, fmtNum(keptCredits(t)), h('small', { class: 'muted' }, ` (${fmtNum(refunded)} refunded)`)) : fmtNum(t.cost),
  ];
}

// dl is a definition list of [term, value] pairs; empty values are left out.
export function dl(pairs) {
  return h('dl', { class: 'props' }, pairs.filter(p => p && p[1] !== undefined && p[1] !== null && p[1] !== '').map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

// outputsView shows a task's outputs with download links.
export function outputsView(t) {
  const urls = outputsOf(t);
  if (!urls.length) return null;
  return h('div', { class: 'outputs' }, urls.map((u, i) => h('figure', { class: 'output' },
    media(u, t.type, `output ${i + 1} of task ${shortID(t.jobId)}`),
    h('figcaption', {}, h('a', { href: u, download: '', class: 'btn small' }, 'Download'), ' ',
      h('a', { href: u, target: '_blank', rel: 'noopener' }, 'Open'), t.placeholder ? [' ', placeholderTag()] : null))));
}

// inputsView shows the input files a task used, by name. A file sent as a
// data: URL is kept in the record only as its type and size.
export function inputsView(inputs) {
  const entries = Object.entries(inputs || {});
  if (!entries.length) return null;
  return h('div', { class: 'outputs inputs' }, entries.map(([k, u]) => {
    u = String(u);
    const name = k.replace(/^inputs\./, '');
    let shown;
    if (/^https?:\/\//.test(u) && !shownHere(u)) {
      shown = h('a', { href: u, target: '_blank', rel: 'noopener noreferrer', class: 'upload-note' }, 'External file: ' + new URL(u).host);
    } else if (/^(https?:\/\/|\/files\/)/.test(u) || (u.startsWith('data:') && u.includes(','))) {
      shown = h('a', { href: u, target: '_blank', rel: 'noopener' }, media(u, /video/i.test(k) || /^data:video/.test(u) ? 'video' : 'image', 'input ' + name));
    } else {
      const m = /^data:([^;]*);(\d+) bytes$/.exec(u);
      shown = h('div', { class: 'upload-note' }, m ? `Uploaded ${m[1] || 'file'}, ${fmtSize(Number(m[2]))}` : u);
    }
    return h('figure', { class: 'output' }, shown, h('figcaption', {}, h('code', {}, name)));
  }));
}

function fmtSize(n) {
  if (n < 1024) return n + ' bytes';
  if (n < 1024 * 1024) return (n / 1024).toFixed(1) + ' KB';
  return (n / 1024 / 1024).toFixed(1) + ' MB';
}

// optionPairs are a task's options as [name, text] pairs for dl.
export function optionPairs(options) {
  return Object.entries(options || {}).map(([k, v]) => [labelOf(k), typeof v === 'object' ? JSON.stringify(v) : String(v)]);
}

// optionsView lists a task's options.
export function optionsView(options) {
  const o = optionPairs(options);
  return o.length ? dl(o) : null;
}
