// tasks.js: the task list (filters, paging, CSV) and one task's page:
// its settings, status, elapsed time while processing, inputs, outputs,
// what it cost and what was refunded, Cancel while it is unfinished, and
// Run again in the playground.
import { get, api, qs, loadModels, modelByID } from './api.js?v=__V__';
import { h, replace, fmtDate, credits, badge, placeholderTag, errorSlot, note, field, table, busy, shortID } from './dom.js?v=__V__';
import { go, current, refreshBalance, redraw } from './nav.js?v=__V__';
import { taskHeads, taskRow, dl, outputsView, inputsView, optionsView, costText, elapsedText } from './views.js?v=__V__';

export const taskStatuses = [['processing', 'Processing'], ['succeeded', 'Succeeded'], ['failed', 'Failed'], ['needs_review', 'Needs review'], ['canceled', 'Canceled']];

export async function tasksPage(main, _rest, q, seq) {
  document.title = 'Tasks · gengate';
  const models = await loadModels().catch(() => []);
  const f = { status: q.get('status') || '', modelId: q.get('modelId') || '', type: q.get('type') || '', test: q.get('test') || '' };
  const sel = (name, label, options) => {
    const s = h('select', { name, id: 'filter-' + name }, options.map(([v, t]) => h('option', { value: v, selected: f[name] === v }, t)));
    s.addEventListener('change', () => {
      f[name] = s.value;
      go('#/tasks' + qs(f));
    });
    return field(label, s);
  };
  const list = h('div', { id: 'tasks-list' }, h('p', { class: 'muted' }, 'Loading…'));
  replace(main, h('h1', {}, 'Tasks'),
    h('form', { class: 'filters', 'aria-label': 'Filter tasks' },
      sel('status', 'Status', [['', 'Any status'], ...taskStatuses]),
      sel('modelId', 'Model', [['', 'Any model'], ...models.map(m => [m.id, m.name])]),
      sel('type', 'Type', [['', 'Images and videos'], ['image', 'Images'], ['video', 'Videos']]),
      sel('test', 'Keys', [['', 'Live and test'], ['false', 'Live keys'], ['true', 'Test keys']]),
      h('div', { class: 'field end' }, h('a', { class: 'btn', id: 'tasks-csv', href: '/api/generation/jobs' + qs({ ...f, format: 'csv' }), download: '' }, 'Download CSV'))),
    list);
  const page = await get('/api/generation/jobs' + qs({ ...f, limit: 20, cursor: q.get('cursor') }));
  if (!current(seq)) return;
  replace(list, h('section', { class: 'card flush' }, table(taskHeads, (page.data || []).map(taskRow), 'No tasks match.')),
    h('div', { class: 'pager' },
      q.get('cursor') ? h('a', { class: 'btn', href: '#/tasks' + qs(f) }, '← Newest') : null,
      page.nextCursor ? h('a', { class: 'btn', id: 'tasks-next', href: '#/tasks' + qs({ ...f, cursor: page.nextCursor }) }, 'Older →') : null));
}

export async function taskPage(main, rest, _q, seq) {
  const id = rest[0];
  document.title = 'Task ' + shortID(id) + ' · gengate';
  await loadModels().catch(() => []);
  const t = await get('/api/generation/jobs/' + encodeURIComponent(id));
  if (!current(seq)) return;
  showTask(main, t, seq, null);
}

// showTask draws a task record; notice (an element) is shown above it,
// such as the outcome of a cancel. An unfinished task is read again every
// 2 seconds, and its elapsed time counts every second meanwhile. Drawn
// anew, the page keeps the focus (redraw).
function showTask(main, t, seq, notice) {
  const m = modelByID(t.modelId);
  const unfinished = t.status === 'processing' || t.status === 'needs_review';
  const hasOutputs = !!(t.video || (t.images && t.images.length));
  const elapsed = h('span', { id: 'task-elapsed' }, elapsedText(t));
  const status = h('div', { class: 'status-region', id: 'task-status', role: 'status', 'aria-live': 'polite' }, notice);
  const actions = h('div', { class: 'row-actions' },
    unfinished ? cancelButton(t, main, seq, status) : null,
    m ? h('a', { class: 'btn', id: 'task-rerun', href: '#/playground/' + encodeURIComponent(t.modelId) + '?from=' + encodeURIComponent(t.jobId) }, 'Run again') : null);
  const props = [
    ['ID', h('code', {}, t.jobId)], ['Status', badge(t.status)], ['Model', m ? `${m.name} (${t.modelId})` : t.modelId],
    ['Type', t.type], ['Engine', t.engine], ['Cost', h('span', { id: 'task-cost' }, costText(t))], ['Created', fmtDate(t.createdAt)],
    ['Updated', fmtDate(t.updatedAt)], ['Completed', fmtDate(t.completedAt)], ['Elapsed', t.status === 'processing' ? elapsed : null]];
  const canceled = t.status === 'canceled';
  redraw(main, () => replace(main,
    h('p', { class: 'crumbs' }, h('a', { href: '#/tasks' }, '← Tasks')),
    h('div', { class: 'title-row' }, h('h1', {}, 'Task ', h('span', { class: 'mono' }, shortID(t.jobId))), badge(t.status),
      t.placeholder && hasOutputs ? placeholderTag() : null, t.test ? badge('test', 'info') : null, actions),
    status,
    t.placeholder && hasOutputs ? h('p', { class: 'note warn' }, 'The sandbox engine made this task\'s outputs: they are placeholders, not AI output.') : null,
    h('div', { class: 'grid2' },
      h('section', { class: 'card' }, h('h2', {}, 'Task'), dl(props),
        progressView(t)),
      h('section', { class: 'card' }, h('h2', {}, 'Settings'),
        t.prompt ? h('div', { class: 'prompt' }, t.prompt) : h('p', { class: 'muted' }, 'No prompt.'),
        optionsView(t.options, m))),
    canceled ? h('section', { class: 'card', id: 'task-canceled' }, h('h2', {}, 'Canceled'), h('p', {}, canceledText(t))) : null,
    t.error && !canceled ? h('section', { class: 'card' }, h('h2', {}, t.status === 'needs_review' ? 'Held for review' : 'Error'), h('div', { class: t.status === 'needs_review' ? 'note warn' : 'problem' },
      h('strong', {}, t.error.message || t.error.code), ' ', h('code', { class: 'code' }, t.error.reason || t.error.code),
      t.error.creditsRefunded ? h('div', {}, credits(t.error.creditsRefunded) + ' refunded.') : null)) : null,
    t.inputs && Object.keys(t.inputs).length ? h('section', { class: 'card' }, h('h2', {}, 'Inputs'), inputsView(t.inputs)) : null,
    h('section', { class: 'card' }, h('h2', {}, 'Outputs'), outputsView(t) || h('p', { class: 'muted', id: 'task-no-outputs' },
      t.status === 'processing' ? 'Still processing; this page updates when it is done.'
        : canceled ? 'None: the task was canceled before it delivered any.' : 'No outputs.'))));
  if (!unfinished) return;
  const tick = setInterval(() => {
    if (!current(seq) || !elapsed.isConnected) { clearInterval(tick); return; }
    elapsed.textContent = elapsedText(t);
  }, 1000);
  // Read the task again until it changes; only then draw it anew (so a
  // Cancel armed meanwhile stays armed).
  const poll = async () => {
    if (!current(seq) || !status.isConnected) return;
    let next = t;
    try { next = await get('/api/generation/jobs/' + encodeURIComponent(t.jobId)); } catch { /* try again */ }
    if (!current(seq) || !status.isConnected) return;
    if (next.status === t.status && next.updatedAt === t.updatedAt) { setTimeout(poll, 2000); return; }
    clearInterval(tick);
    showTask(main, next, seq, status.firstChild);
    if (next.status !== 'processing') refreshBalance();
  };
  setTimeout(poll, 2000);
}

// cancelButton asks POST .../cancel (a second click confirms) and shows
// what came back: refunded in full, or nothing refunded because the
// provider may already have charged.
function cancelButton(t, main, seq, status) {
  const b = h('button', { type: 'button', class: 'btn danger', id: 'task-cancel' }, 'Cancel task');
  let armed = false;
  b.addEventListener('click', async () => {
    if (!armed) {
      armed = true;
      b.textContent = 'Confirm cancel';
      b.dataset.armed = 'true';
      replace(status, h('p', { class: 'note warn', id: 'cancel-rule' }, cancelRule(t)));
      return;
    }
    const err = errorSlot();
    let r;
    try {
      r = await busy(b, () => api('POST', '/api/generation/jobs/' + encodeURIComponent(t.jobId) + '/cancel').then(x => x.data));
    } catch (e) {
      if (!current(seq)) return;
      const words = {
        TASK_FINISHED: 'The task finished before the cancel arrived; it was not canceled.',
        TASK_BUSY: 'The task is being sent to its provider right now. Try again in a moment.',
        CONFLICT: 'An operator must settle this task; it cannot be canceled here.',
        OVERLOADED: 'The provider could not be asked to stop the task. Try again in a moment.',
      }[e.code];
      if (words) {
        replace(status, h('p', { class: 'note warn', id: 'cancel-outcome' }, words));
        armed = false;
        b.textContent = 'Cancel task';
        delete b.dataset.armed;
      } else {
        replace(status, err);
        err.show(e);
      }
      return;
    }
    if (!current(seq)) return;
    if (typeof r.remainingCredits === 'number') refreshBalance(r.remainingCredits);
    showTask(main, r, seq, h('p', { class: 'note ok', id: 'cancel-outcome' }, canceledText(r),
      typeof r.remainingCredits === 'number' ? ` Balance: ${credits(r.remainingCredits)}.` : ''));
  });
  return b;
}

// cancelRule says, before the cancel, what it will refund (the API's rule:
// gengate.Service.Cancel, docs/api.md).
function cancelRule(t) {
  const held = credits(t.cost);
  if (t.status === 'needs_review') {
    return `Canceling a task held for review refunds its ${held} when no engine has run it; otherwise an operator settles it. Click again to cancel.`;
  }
  if (t.engine === 'sandbox' || t.engine === 'builtin') {
    return `This task runs on this server: canceling stops it and refunds its ${held} in full. Click again to cancel.`;
  }
  return `Canceling refunds the ${held} only if the provider confirms it had not started the work. ` +
    'If the provider may already have charged for it, the task stops with nothing refunded. Click again to cancel.';
}

// canceledText says what a canceled task's cancel refunded.
function canceledText(t) {
  const e = t.error || {};
  if (e.refunded || e.creditsRefunded) return `Canceled: ${credits(e.creditsRefunded || t.cost)} refunded.`;
  return 'Canceled after the provider may have charged for the work: nothing was refunded.';
}

// progressView shows what the provider last said of the work: its status
// word, its queue position, and its percentage in words and as a bar.
function progressView(t) {
  const p = t.progress;
  if (!p || t.status !== 'processing') return null;
  const pairs = [];
  if (p.upstreamStatus) pairs.push(['Provider says', p.upstreamStatus]);
  if (typeof p.queuePosition === 'number') pairs.push(['Queue position', String(p.queuePosition + 1)]);
  if (typeof p.percent === 'number') pairs.push(['Progress', Math.floor(p.percent) + ' %']);
  const bar = typeof p.percent === 'number' ? h('progress', { max: 100, value: p.percent, 'aria-label': 'progress' }, p.percent + '%') : null;
  return h('div', { class: 'progress' }, pairs.length ? dl(pairs) : null, bar,
    Array.isArray(p.logs) && p.logs.length ? h('pre', { class: 'logs' }, p.logs.join('\n')) : null);
}
