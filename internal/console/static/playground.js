// playground.js: the form for any model, built from GET /api/v1/models:
// every input and option with its allowed values and default; image and
// video inputs by file (sent as a data: URL) or by URL. The price comes
// from POST /api/v1/quote as the settings change. A submission sends one
// Idempotency-Key (crypto.randomUUID) and Prefer: respond-async, with the
// button disabled while the request is in flight, then polls the task
// until it is finished.
import { state, api, get, loadModels, modelByID } from './api.js?v=__V__';
import { h, replace, credits, badge, placeholderTag, errorSlot, field, problemBox, shortID, clear } from './dom.js?v=__V__';
import { go, current, refreshBalance } from './nav.js?v=__V__';
import { outputsView, labelOf, elapsedText } from './views.js?v=__V__';

// A 1×1 PNG: what the quote gets for an image input not chosen yet, or
// chosen as a file (the quote never fetches inputs; the price does not
// depend on them).
const standInImage = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

let runID = 0; // the latest submission; older polls stop showing

export async function playgroundPage(main, rest, q, seq) {
  document.title = 'Playground · gengate';
  const models = await loadModels();
  if (!current(seq)) return;
  if (!models.length) {
    replace(main, h('h1', {}, 'Playground'), h('p', { class: 'empty' }, 'This server serves no model.'));
    return;
  }
  const model = modelByID(rest[0]) || models[0];
  // Run again: a task's settings fill the form (?from=<jobId>).
  let from = null;
  if (q && q.get('from')) {
    from = await get('/api/generation/jobs/' + encodeURIComponent(q.get('from'))).catch(() => null);
    if (!current(seq)) return;
    if (from && from.modelId !== model.id) from = null;
  }
  // The model picker: grouped (images, videos, operations on files), with
  // a search box that narrows the list by name, id or description.
  const groups = [
    ['Images', m => m.type === 'image' && m.engine !== 'builtin'],
    ['Videos', m => m.type === 'video' && m.engine !== 'builtin'],
    ['Operations on files', m => m.engine === 'builtin'],
  ];
  const picker = h('select', { id: 'pg-model', name: 'model' },
    groups.map(([label, pick]) => {
      const ms = models.filter(pick);
      return ms.length ? h('optgroup', { label },
        ms.map(m => h('option', { value: m.id, selected: m.id === model.id, dataset: { search: (m.name + ' ' + m.id + ' ' + (m.description || '')).toLowerCase() } },
          m.name + (m.placeholder ? ' (placeholder)' : '')))) : null;
    }));
  picker.addEventListener('change', () => go('#/playground/' + encodeURIComponent(picker.value)));
  const search = h('input', { type: 'search', id: 'pg-model-search', placeholder: 'Name, id or words of its description', autocomplete: 'off' });
  const found = h('small', { class: 'hint', id: 'pg-model-found', role: 'status' });
  const narrow = () => {
    const words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
    let n = 0;
    let first = null;
    for (const o of picker.querySelectorAll('option')) {
      const ok = words.every(w => o.dataset.search.includes(w));
      o.hidden = !ok;
      if (ok) { n++; first = first || o; }
    }
    for (const g of picker.querySelectorAll('optgroup')) g.hidden = !g.querySelector('option:not([hidden])');
    found.textContent = words.length ? (n ? `${n} model${n === 1 ? '' : 's'} match; choose one below.` : 'No model matches.') : '';
    return first;
  };
  search.addEventListener('input', narrow);
  search.addEventListener('keydown', (ev) => {
    if (ev.key !== 'Enter') return;
    ev.preventDefault();
    const first = narrow();
    if (first && first.value !== model.id) go('#/playground/' + encodeURIComponent(first.value));
  });

  const controls = []; // {f, get(forQuote) -> value | undefined}
  const form = h('form', { id: 'pg-form', class: 'stack', novalidate: true });
  for (const f of model.inputs || []) controls.push(inputControl(f, form));
  const optionBox = h('div', { class: 'options-grid' });
  for (const f of model.options || []) controls.push(optionControl(f, optionBox));

  const price = h('div', { class: 'price', id: 'pg-price', 'aria-live': 'polite' }, 'Price: …');
  const err = errorSlot();
  err.id = 'pg-error';
  const submit = h('button', { type: 'submit', class: 'btn primary wide', id: 'pg-submit' }, 'Generate');
  const result = h('section', { class: 'card result', id: 'pg-result', 'aria-live': 'polite' },
    h('h2', {}, 'Result'), h('p', { class: 'muted' }, 'Fill in the form and press Generate. The result appears here.'));
  if (from) {
    for (const c of controls) {
      const n = c.f.name;
      const v = n === 'prompt' ? from.prompt
        : n.startsWith('inputs.') || c.f.kind === 'image' || c.f.kind === 'video' ? (from.inputs || {})[n] ?? (from.inputs || {})[n.replace(/^inputs\./, '')]
        : (from.options || {})[n];
      if (v !== undefined && v !== null && c.set) c.set(v);
    }
  }
  if ((model.options || []).length) form.appendChild(h('fieldset', { class: 'options' }, h('legend', {}, 'Options'), optionBox));
  form.append(price, err, submit);

  // body builds the generate body; forQuote puts stand-ins for what the
  // price does not depend on.
  const body = (forQuote) => {
    const b = { type: model.type, modelId: model.id };
    for (const c of controls) {
      const v = c.get(forQuote);
      if (v === undefined) continue;
      if (c.f.name.startsWith('inputs.')) {
        b.inputs = b.inputs || {};
        b.inputs[c.f.name.slice(7)] = v;
      } else {
        b[c.f.name] = v;
      }
    }
    return b;
  };

  let quoteSeq = 0;
  let quoteTimer = null;
  let overBalance = false; // the price is more than the balance: Generate waits
  let running = false;      // a submission is in flight
  const setSubmit = () => { submit.disabled = running || overBalance; };
  const quote = async () => {
    const n = ++quoteSeq;
    // A required field without a default and not filled in yet: say what
    // to choose, rather than asking a quote that can only be refused.
    const missing = controls.filter(c => c.f.required && c.get(true) === undefined);
    if (missing.length) {
      overBalance = false;
      setSubmit();
      replace(price, h('span', { class: 'muted', id: 'pg-price-empty' }, 'Choose ' + missing.map(c => labelOf(c.f.name).toLowerCase()).join(' and ') + ' to see the price.'));
      submit.textContent = 'Generate';
      return;
    }
    try {
      const q = await api('POST', '/api/v1/quote', body(true)).then(r => r.data);
      if (n !== quoteSeq || !current(seq)) return;
      overBalance = typeof q.remainingCredits === 'number' && q.cost > q.remainingCredits;
      setSubmit();
      refreshBalance(q.remainingCredits);
      replace(price, h('span', {}, 'Price: ', h('strong', { id: 'pg-cost', 'data-cost': q.cost }, credits(q.cost))),
        h('span', { class: 'muted' }, ` · balance ${credits(q.remainingCredits)}`), q.placeholder ? [' ', placeholderTag()] : null,
        overBalance ? h('p', { class: 'note warn', id: 'pg-over-balance' }, `This costs more than the balance of ${credits(q.remainingCredits)}. `,
          h('a', { href: '#/' }, 'Add credits'), ' or choose cheaper options.') : null);
      submit.textContent = `Generate · ${credits(q.cost)}`;
    } catch (e) {
      if (n !== quoteSeq || !current(seq)) return;
      overBalance = false;
      setSubmit();
      // One short line here; the full refusal shows once, under the form,
      // if Generate is pressed.
      replace(price, h('span', { class: 'muted' }, 'Price unavailable: ', problemBox(e).querySelector('strong').textContent));
      submit.textContent = 'Generate';
    }
  };
  const requote = () => { clearTimeout(quoteTimer); quoteTimer = setTimeout(quote, 250); };
  form.addEventListener('change', requote);
  // Typing a prompt never changes the price: only the options' fields requote.
  form.addEventListener('input', (ev) => { if (ev.target.tagName !== 'TEXTAREA') requote(); });

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    if (submit.disabled) return;
    err.clear();
    if (controls.some(c => c.busy && c.busy())) {
      err.show({ problem: { title: 'Upload in progress', detail: 'wait until the file is uploaded, then generate', errors: [] } });
      return;
    }
    const missing = controls.filter(c => c.f.required && c.get(false) === undefined).map(c => c.f.name);
    if (missing.length) {
      err.show({ problem: { title: 'Missing input', detail: 'fill in ' + missing.join(', '), errors: [] } });
      return;
    }
    const run = ++runID;
    const key = crypto.randomUUID(); // one per submission: a retried request cannot charge twice
    // Disabled, the button loses the focus to the document's body; it
    // gets it back once answered, so the keyboard goes on from here.
    const focused = document.activeElement === submit;
    const answered = () => {
      running = false;
      setSubmit();
      submit.removeAttribute('aria-busy');
      if (focused && !submit.disabled && document.activeElement === document.body) submit.focus();
    };
    running = true;
    setSubmit();
    submit.setAttribute('aria-busy', 'true');
    replace(result, h('h2', {}, 'Result'), h('p', { class: 'status', 'data-status': 'submitting' }, h('span', { class: 'spinner' }), ' Submitting…'));
    let r;
    try {
      r = await api('POST', '/api/v1/generate', body(false), {
        headers: { 'Idempotency-Key': key, Prefer: 'respond-async' },
        accept: [202],
      });
    } catch (e) {
      answered();
      if (!current(seq)) return;
      const jobId = e.problem && e.problem.jobId;
      replace(result, h('h2', {}, 'Result'), h('p', { class: 'status', 'data-status': jobId ? (e.problem.jobStatus || 'failed') : 'refused' },
        jobId ? badge(e.problem.jobStatus || 'failed') : badge('refused', 'bad'), jobId ? [' ', h('a', { href: '#/tasks/' + jobId }, 'Task ' + shortID(jobId))] : null));
      if (e.code === 'GENERATION_NEEDS_REVIEW') {
        result.appendChild(h('p', { class: 'note warn', id: 'pg-review' }, 'This generation is held for review by an operator. Its credits stay held until then; do not submit it again.'));
      } else {
        err.show(e);
      }
      // A task held for review is charged: the header and the price box
      // say the balance after it.
      refreshBalance();
      quote();
      return;
    }
    answered();
    quote(); // the task is charged: the header and the price box say so at once
    const jobId = r.data.jobId;
    await follow(result, jobId, run, seq);
    if (run === runID) quote();
  });

  replace(main,
    h('h1', {}, 'Playground'),
    h('div', { class: 'playground' },
      h('section', { class: 'card' },
        field('Find a model', search), found,
        field('Model', picker),
        h('div', { class: 'model-info' },
          h('div', {}, h('strong', {}, model.name), ' ', h('code', {}, model.id), ' ', badge(model.type, 'info'), ' ', model.placeholder ? placeholderTag() : badge(model.engine, 'muted')),
          model.description ? h('p', { class: 'muted' }, model.description) : null,
          model.placeholder ? h('p', { class: 'note warn' }, 'No upstream provider serves this model here: the sandbox engine answers with placeholder images and videos, not AI output.') : null,
          h('p', { class: 'muted small' }, `From ${credits(model.credits)}`, model.pricing && model.pricing.note ? ` · ${pricingNote(model.pricing.note)}` : '',
            model.typicalLatencySeconds ? ` · typically ${model.typicalLatencySeconds} s` : '')),
        form),
      result));
  quote();
}

// follow polls a task until it is finished and shows it in result.
async function follow(result, jobId, run, seq) {
  const show = (...c) => { if (run === runID && current(seq)) replace(result, h('h2', {}, 'Result'), ...c); };
  let delay = 500;
  for (;;) {
    let t;
    try {
      t = await get('/api/generation/jobs/' + encodeURIComponent(jobId));
    } catch (e) {
      show(problemBox(e));
      return;
    }
    if (run !== runID || !current(seq)) return;
    const link = h('a', { href: '#/tasks/' + encodeURIComponent(jobId), class: 'mono' }, 'Task ' + shortID(jobId));
    if (t.status === 'processing') {
      show(h('p', { class: 'status', 'data-status': 'processing' }, h('span', { class: 'spinner' }), ' Processing… ', link,
        h('span', { class: 'muted', id: 'pg-elapsed' }, ' · ' + elapsedText(t))));
      await new Promise(res => setTimeout(res, delay));
      delay = Math.min(delay * 1.5, 3000);
      continue;
    }
    const placeholder = t.placeholder || (modelByID(t.modelId) || {}).placeholder;
    const rec = { ...t, placeholder };
    show(h('p', { class: 'status', 'data-status': t.status }, badge(t.status), ' ', link, ' · ', credits(t.cost)),
      placeholder ? h('p', { class: 'note warn' }, 'Placeholder output from the sandbox engine, not AI output.') : null,
      t.status === 'needs_review' ? h('p', { class: 'note warn', id: 'pg-review' }, 'This generation is held for review by an operator.') : null,
      t.error && t.status !== 'needs_review' ? problemBox({ problem: { title: 'The generation failed', detail: t.error.message, code: t.error.reason || t.error.code } }) : null,
      outputsView(rec));
    refreshBalance();
    return;
  }
}

// inputControl builds the control of an input (prompt, image, video).
function inputControl(f, form) {
  const label = labelOf(f.name);
  if (f.kind === 'image' || f.kind === 'video') {
    const accept = f.kind === 'image' ? 'image/png,image/jpeg,image/webp,image/gif' : 'video/mp4,video/quicktime,video/webm';
    const file = h('input', { type: 'file', accept, name: f.name + '.file', 'data-input': f.name, id: 'pg-file-' + f.name.replace('.', '-') });
    const url = h('input', { type: 'url', name: f.name, placeholder: 'https://…', 'data-input-url': f.name, id: 'pg-url-' + f.name.replace('.', '-') });
    const preview = h('div', { class: 'preview' });
    let data = '';     // the chosen file: its upload's URL, or a data: URL
    let pending = null; // the upload in flight
    const clearBtn = h('button', { type: 'button', class: 'btn small ghost', hidden: true }, 'Remove file');
    const err = errorSlot();
    file.addEventListener('change', () => {
      const fl = file.files && file.files[0];
      data = '';
      delete file.dataset.ready;
      clear(preview);
      err.clear();
      if (!fl) { url.disabled = false; clearBtn.hidden = true; pending = null; form.dispatchEvent(new Event('change')); return; }
      url.disabled = true;
      clearBtn.hidden = false;
      const local = URL.createObjectURL(fl);
      const shown = f.kind === 'image' ? h('img', { src: local, alt: 'chosen ' + f.name }) : h('video', { src: local, controls: true, muted: true });
      const status = h('small', { class: 'muted' }, `${fl.name} · ${fmtSize(fl.size)} · uploading…`);
      replace(preview, shown, status);
      const p = pending = uploadFile(fl).then((u) => {
        if (p !== pending) return;
        data = u;
        file.dataset.ready = 'true';
        status.textContent = `${fl.name} · ${fmtSize(fl.size)} · uploaded`;
        form.dispatchEvent(new Event('change'));
      }, (e) => {
        if (p !== pending) return;
        status.textContent = `${fl.name} · not uploaded`;
        err.show(e);
      });
    });
    clearBtn.addEventListener('click', () => { file.value = ''; file.dispatchEvent(new Event('change')); });
    form.appendChild(h('fieldset', { class: 'file-input' }, h('legend', {}, label, f.required ? h('span', { class: 'req' }, ' required') : null),
      f.description ? h('small', { class: 'hint' }, f.description) : null,
      h('div', { class: 'file-row' }, h('label', { for: file.id }, 'Upload a file'), file, clearBtn),
      h('div', { class: 'file-row' }, h('label', { for: url.id }, 'or its URL'), url), preview, err));
    return {
      f, busy: () => !!(file.files && file.files[0]) && !data && !!pending,
      // A task keeps a data: input only as its type and size: only a URL
      // can be used again.
      set(v) { if (/^(https?:\/\/|\/files\/)/.test(String(v))) url.value = String(v); },
      get(forQuote) {
        if (data) return forQuote && data.startsWith('data:') ? standInImage : data;
        if (url.value.trim()) return url.value.trim();
        if (forQuote && f.required && f.kind === 'image') return standInImage;
        return undefined;
      },
    };
  }
  // text
  const ta = h('textarea', { name: f.name, id: 'pg-' + f.name, rows: 4, maxlength: f.maxLength || null, required: f.required, placeholder: f.name === 'prompt' ? 'Describe what to make…' : '' });
  form.appendChild(field(label + (f.required ? ' *' : ''), ta, f.description));
  return {
    f, set(v) { ta.value = String(v); },
    get(forQuote) {
      const v = ta.value.trim();
      if (v) return v;
      return forQuote && f.required ? 'x' : undefined; // the price never depends on the words
    },
  };
}

// optionControl builds the control of an option (enum, int, number, bool, text).
function optionControl(f, box) {
  const id = 'pg-opt-' + f.name.replace('.', '-');
  const label = labelOf(f.name);
  const hint = [f.description, f.min != null || f.max != null ? `${f.min ?? ''}–${f.max ?? ''}` : ''].filter(Boolean).join(' · ');
  let el, get;
  if (f.kind === 'bool') {
    el = h('input', { type: 'checkbox', id, name: f.name, checked: f.default === true });
    box.appendChild(h('div', { class: 'field check' }, el, h('label', { for: id }, label), hint ? h('small', { class: 'hint' }, hint) : null));
    return { f, get: () => el.checked, set(v) { el.checked = v === true; } };
  }
  if (Array.isArray(f.values) && f.values.length) {
    const opts = f.values.map(v => h('option', { value: String(v), selected: f.default !== undefined && String(f.default) === String(v) }, String(v) + (f.default !== undefined && String(f.default) === String(v) ? ' (default)' : '')));
    if (f.default === undefined) opts.unshift(h('option', { value: '', selected: true }, f.required ? 'Choose…' : 'Model default'));
    el = h('select', { id, name: f.name }, opts);
    get = () => el.value === '' ? undefined : (f.kind === 'int' || f.kind === 'number' ? Number(el.value) : el.value);
  } else if (f.kind === 'int' || f.kind === 'number') {
    el = h('input', { type: 'number', id, name: f.name, step: f.kind === 'int' ? 1 : 'any', min: f.min ?? null, max: f.max ?? null,
      value: f.default ?? '', placeholder: f.default === undefined ? 'any' : '' });
    get = () => el.value === '' ? undefined : Number(el.value);
  } else {
    el = h('input', { type: 'text', id, name: f.name, value: f.default ?? '', maxlength: f.maxLength || null });
    get = () => el.value.trim() === '' ? undefined : el.value.trim();
  }
  box.appendChild(field(label, el, hint));
  return { f, get, set(v) { el.value = String(v); } };
}

// uploadFile sends a chosen file to POST /api/v1/files and returns its URL,
// usable as an input of this account's generations. A server without that
// endpoint (404/405) gets the file inline as a data: URL instead.
async function uploadFile(fl) {
  try {
    const r = await api('POST', '/api/v1/files', undefined, { raw: fl, headers: { 'Content-Type': fl.type || 'application/octet-stream' } });
    return r.data.url;
  } catch (e) {
    if (e.status !== 404 && e.status !== 405) throw e;
    return await new Promise((resolve, reject) => {
      const rd = new FileReader();
      rd.onload = () => resolve(rd.result);
      rd.onerror = () => reject(rd.error);
      rd.readAsDataURL(fl);
    });
  }
}

function fmtSize(n) {
  if (n < 1024) return n + ' bytes';
  if (n < 1024 * 1024) return (n / 1024).toFixed(1) + ' KB';
  return (n / 1024 / 1024).toFixed(1) + ' MB';
}

// pricingNote is a model's pricing note for the holder: without the
// spec's jargon, and without the upstream's own prices unless the reader
// is an operator.
function pricingNote(text) {
  let t = String(text).replace(/\s*\(spec:[^)]*\)/g, '');
  if (!(state.session && state.session.operator)) t = t.replace(/\s*Upstream:.*$/, '');
  return t.trim();
}
