// views.js: pieces of pages that show tasks, shared by the holder's and the
// operator's pages.
import { modelByID } from './api.js?v=__V__';
import { h, fmtDate, fmtNum, badge, placeholderTag, media, outputsOf, shortID, shownHere } from './dom.js?v=__V__';

export const taskHeads = ['Task', 'Created', 'Model', 'Type', 'Status', '#Cost'];

export function modelName(id) {
  const m = modelByID(id);
  return m ? m.name : id;
}

export function taskRow(t) {
  return [
    h('a', { href: '#/tasks/' + encodeURIComponent(t.jobId), class: 'mono' }, shortID(t.jobId)),
    fmtDate(t.createdAt),
    h('span', {}, modelName(t.modelId), ' ', t.placeholder ? placeholderTag() : null),
    t.type,
    badge(t.status),
    fmtNum(t.cost),
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
  return Object.entries(options || {}).map(([k, v]) => [k, typeof v === 'object' ? JSON.stringify(v) : String(v)]);
}

// optionsView lists a task's options.
export function optionsView(options) {
  const o = optionPairs(options);
  return o.length ? dl(o) : null;
}
