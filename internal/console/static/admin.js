// admin.js: the operator's pages (shown when the session's member has the
// operator role): accounts, the review queue, engines.
import { get, post, qs, loadModels } from './api.js?v=__V__';
import { h, replace, fmtDate, fmtNum, credits, badge, errorSlot, note, secretBox, field, table, busy, shortID } from './dom.js?v=__V__';
import { go, current, refreshBalance } from './nav.js?v=__V__';
import { dl, inputsView, optionPairs, modelName, costText, ledgerNote, thumbOf } from './views.js?v=__V__';

// ---------- accounts ----------

// codesCard makes redemption codes (POST /api/v1/admin/codes): shown once.
function codesCard() {
  const creditsIn = h('input', { type: 'number', name: 'credits', min: 1, step: 1, value: 100, required: true });
  const count = h('input', { type: 'number', name: 'count', min: 1, max: 10000, step: 1, value: 1, required: true });
  const expires = h('input', { type: 'date', name: 'expires' });
  const err = errorSlot();
  const made = h('div', { id: 'codes-made' });
  const button = h('button', { type: 'submit', class: 'btn primary' }, 'Make codes');
  const form = h('form', { id: 'codes-form', class: 'inline-form' }, field('Credits each', creditsIn), field('How many', count),
    field('Expires (end of UTC day)', expires), h('div', { class: 'field end' }, button));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    err.clear();
    const body = { credits: Number(creditsIn.value), count: Number(count.value) };
    if (expires.value) body.expiresAt = expires.value + 'T23:59:59Z';
    try {
      const r = await busy(button, () => post('/api/v1/admin/codes', body));
      replace(made, secretBox(`${r.codes.length} code(s) of ${fmtNum(r.credits)} credits`, r.codes.join('\n'),
        'Copy them now: codes are stored hashed and never shown again. Each redeems once.', 'codes'));
    } catch (e) { err.show(e); }
  });
  return h('section', { class: 'card' }, h('h2', {}, 'Redemption codes'), form, err, made);
}

export async function accountsPage(main, _rest, q, seq) {
  document.title = 'Accounts · gengate';
  const search = h('input', { type: 'search', name: 'q', value: q.get('q') || '', placeholder: 'id, name or member email' });
  const findForm = h('form', { class: 'inline-form', role: 'search', id: 'account-search' }, field('Find an account', search),
    h('div', { class: 'field end' }, h('button', { type: 'submit', class: 'btn' }, 'Search')));
  findForm.addEventListener('submit', (ev) => { ev.preventDefault(); go('#/admin/accounts' + qs({ q: search.value.trim() })); });

  const email = h('input', { type: 'email', name: 'email', required: true, autocomplete: 'off' });
  const name = h('input', { type: 'text', name: 'name' });
  const creditsIn = h('input', { type: 'number', name: 'credits', min: 0, step: 1, value: 0, required: true });
  const operator = h('input', { type: 'checkbox', name: 'operator', id: 'new-operator' });
  const err = errorSlot();
  const made = h('div', { id: 'account-created' });
  const create = h('button', { type: 'submit', class: 'btn primary' }, 'Create account');
  const createForm = h('form', { id: 'account-form', class: 'inline-form' },
    field('Member email', email), field('Account name', name), field('Credits', creditsIn),
    h('div', { class: 'field check' }, operator, h('label', { for: 'new-operator' }, 'Operator')),
    h('div', { class: 'field end' }, create));
  createForm.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    err.clear();
    const body = { email: email.value.trim(), credits: Number(creditsIn.value || 0) };
    if (name.value.trim()) body.name = name.value.trim();
    if (operator.checked) body.operator = true;
    try {
      const r = await busy(create, () => post('/api/v1/admin/accounts', body));
      replace(made, secretBox(`Account “${r.account.name || body.email}” created`, r.setupLink,
        'Send this set-up link to its holder: it works once, for 24 hours, and is not shown again.', 'setup-link'),
        h('p', {}, h('a', { href: '#/admin/accounts/' + encodeURIComponent(r.account.id) }, 'Open the account →')));
      createForm.reset();
      await loadList();
    } catch (e) { err.show(e); }
  });

  const list = h('div', { id: 'accounts-list' });
  const pager = h('div', { class: 'pager' });
  const loadList = async () => {
    const page = await get('/api/v1/admin/accounts' + qs({ q: q.get('q'), limit: 25, cursor: q.get('cursor') }));
    if (!current(seq)) return;
    replace(list, table(['Account', 'ID', 'Members', '#Balance', 'Created'], (page.data || []).map(a => [
      h('a', { href: '#/admin/accounts/' + encodeURIComponent(a.id) }, a.name || '(no name)'),
      h('code', {}, shortID(a.id)),
      (a.members || []).map(m => m.email).join(', '),
      fmtNum(a.remainingCredits), fmtDate(a.createdAt)]), 'No account matches.'));
    replace(pager,
      q.get('cursor') ? h('a', { class: 'btn', href: '#/admin/accounts' + qs({ q: q.get('q') }) }, '← First') : null,
      page.nextCursor ? h('a', { class: 'btn', href: '#/admin/accounts' + qs({ q: q.get('q'), cursor: page.nextCursor }) }, 'Next →') : null);
  };
  replace(main, h('h1', {}, 'Accounts'),
    h('section', { class: 'card' }, h('h2', {}, 'New account'), createForm, err, made),
    codesCard(),
    h('section', { class: 'card' }, findForm, list, pager));
  await loadList();
}

export async function accountPage(main, rest, _q, seq) {
  const id = rest[0];
  document.title = 'Account · gengate';
  await loadModels().catch(() => []); // its tasks and charges name their models
  const a = await get('/api/v1/admin/accounts/' + encodeURIComponent(id));
  if (!current(seq)) return;
  const balance = h('strong', { id: 'admin-balance' }, fmtNum(a.remainingCredits));
  const amount = h('input', { type: 'number', name: 'credits', step: 1, required: true, placeholder: 'e.g. 500 or -100' });
  const noteIn = h('input', { type: 'text', name: 'note', required: true, placeholder: 'why (kept in the ledger)' });
  const err = errorSlot();
  const done = h('div', { id: 'credits-done' });
  const grant = h('button', { type: 'submit', class: 'btn primary' }, 'Apply');
  const creditForm = h('form', { id: 'credits-form', class: 'inline-form' },
    field('Credits (negative removes)', amount), field('Note', noteIn), h('div', { class: 'field end' }, grant));
  creditForm.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    err.clear();
    const n = Number(amount.value);
    if (!Number.isInteger(n) || n === 0) {
      err.show({ problem: { title: 'Enter a whole number of credits', detail: 'positive grants, negative removes', errors: [] } });
      return;
    }
    try {
      const r = await busy(grant, () => post(`/api/v1/admin/accounts/${encodeURIComponent(id)}/credits`, { credits: n, note: noteIn.value.trim() }));
      balance.textContent = fmtNum(r.remainingCredits);
      replace(done, note(`${n > 0 ? 'Granted' : 'Removed'} ${credits(Math.abs(n))}. Balance: ${credits(r.remainingCredits)}.`));
      creditForm.reset();
      refreshBalance();
    } catch (e) { err.show(e); }
  });
  const members = a.members || [];
  const linkErr = errorSlot();
  const linkOut = h('div', {});
  const memberRows = members.map(m => {
    const b = h('button', { type: 'button', class: 'btn small' }, 'New sign-in link');
    b.addEventListener('click', async () => {
      linkErr.clear();
      try {
        const r = await busy(b, () => post(`/api/v1/admin/accounts/${encodeURIComponent(id)}/link`, { email: m.email }));
        replace(linkOut, secretBox('Sign-in link for ' + m.email, r.link, 'It works once, for 24 hours. Send it privately.'));
      } catch (e) { linkErr.show(e); }
    });
    return [m.email, badge(m.role, m.role === 'operator' ? 'info' : 'muted'), fmtDate(m.createdAt), b];
  });
  replace(main,
    h('p', { class: 'crumbs' }, h('a', { href: '#/admin/accounts' }, '← Accounts')),
    h('h1', {}, a.name || 'Account'),
    h('div', { class: 'grid2' },
      h('section', { class: 'card' }, h('h2', {}, 'Account'), dl([['ID', h('code', {}, a.id)], ['Balance', h('span', {}, balance, ' credits')], ['Created', fmtDate(a.createdAt)]])),
      h('section', { class: 'card' }, h('h2', {}, 'Grant or remove credits'), creditForm, err, done)),
    h('section', { class: 'card' }, h('h2', {}, 'Members'), table(['Email', 'Role', 'Since', ''], memberRows, 'No members.'), linkErr, linkOut),
    h('section', { class: 'card flush' }, h('h2', { class: 'pad' }, 'Keys'), table(['Name', 'Key', 'Created', 'Last used', '#Daily limit', 'Status'], (a.keys || []).map(k => [
      k.name, h('code', {}, k.prefix + '…'), fmtDate(k.createdAt), k.lastUsedAt ? fmtDate(k.lastUsedAt) : 'never',
      k.spendLimit != null ? fmtNum(k.spendLimit) : '—', k.revokedAt ? badge('revoked', 'muted') : badge('active', 'ok')]), 'No keys.')),
    accountListCard('Tasks', 'admin-tasks', '/api/v1/admin/accounts/' + encodeURIComponent(id) + '/tasks',
      ['Task', 'Prompt', 'Created', 'Model', 'Status', '#Cost'], t => [
        h('span', { class: 'task-cell' }, thumbOf(t), h('code', { title: t.jobId }, shortID(t.jobId))), t.prompt ? h('span', { class: 'prompt-cell', title: t.prompt }, t.prompt.length > 80 ? t.prompt.slice(0, 79) + '…' : t.prompt) : '—',
        fmtDate(t.createdAt), modelName(t.modelId), badge(t.status), costText(t)], 'No tasks.', seq),
    accountListCard('Ledger', 'admin-ledger', '/api/v1/admin/accounts/' + encodeURIComponent(id) + '/ledger',
      ['Date', 'Kind', 'Note', '#Amount', '#Balance after'], e => [
        fmtDate(e.createdAt), badge(e.kind, e.amount > 0 ? 'ok' : 'muted'), ledgerNote(e) || (e.taskId ? 'task ' + shortID(e.taskId) : ''),
        (e.amount > 0 ? '+' : '') + fmtNum(e.amount), fmtNum(e.balanceAfter)], 'No entries.', seq));
}

// accountListCard shows one of an account's lists (its tasks, its ledger),
// newest first, 10 at a time, with "Load more" and a CSV download.
function accountListCard(title, id, path, heads, row, empty, seq) {
  const body = h('div', { id });
  const more = h('button', { type: 'button', class: 'btn small', id: id + '-more', hidden: true }, 'Load more');
  const rows = [];
  let cursor = '';
  const load = async () => {
    const page = await get(path + qs({ limit: 10, cursor }));
    if (!current(seq)) return;
    rows.push(...(page.data || []).map(row));
    replace(body, table(heads, rows, empty));
    cursor = page.nextCursor || '';
    more.hidden = !cursor;
  };
  more.addEventListener('click', () => busy(more, load));
  load().catch(e => { const err = errorSlot(); replace(body, err); err.show(e); });
  return h('section', { class: 'card flush' },
    h('div', { class: 'card-head pad' }, h('h2', {}, title), h('a', { class: 'btn small', href: path + '?format=csv', download: '' }, 'Download CSV')),
    body, h('div', { class: 'pager' }, more));
}

// ---------- review queue ----------

export async function reviewPage(main, _rest, q, seq) {
  document.title = 'Review queue · gengate';
  await loadModels().catch(() => []);
  const page = await get('/api/v1/admin/review' + qs({ limit: 20, cursor: q.get('cursor') }));
  if (!current(seq)) return;
  const items = page.data || [];
  const list = h('div', { class: 'review-list', id: 'review-list' }, items.map(t => reviewItem(t)));
  replace(main, h('h1', {}, 'Review queue'),
    h('p', { class: 'muted' }, 'Tasks held for review (--review-terms, or an upstream that may have charged). Deliver runs the task with its charge kept; refund fails it and returns the credits.'),
    items.length ? list : h('p', { class: 'empty', id: 'review-empty' }, 'Nothing waits for review.'),
    h('div', { class: 'pager' }, page.nextCursor ? h('a', { class: 'btn', href: '#/admin/review' + qs({ cursor: page.nextCursor }) }, 'More →') : null));
}

function reviewItem(t) {
  const err = errorSlot();
  const deliver = h('button', { type: 'button', class: 'btn primary', 'data-action': 'deliver' }, 'Deliver');
  const refund = h('button', { type: 'button', class: 'btn danger', 'data-action': 'refund' }, 'Refund');
  const card = h('article', { class: 'card review-item', dataset: { jobId: t.jobId } },
    h('div', { class: 'card-head' },
      h('h2', {}, modelName(t.modelId), ' ', h('span', { class: 'muted mono' }, shortID(t.jobId))),
      h('span', {}, badge(t.reviewReason || 'review', 'warn'))),
    h('div', { class: 'prompt' }, t.prompt || h('span', { class: 'muted' }, 'No prompt.')),
    dl([['Account', h('a', { href: '#/admin/accounts/' + encodeURIComponent(t.accountId) }, t.accountName || t.accountId)],
      ['Model', t.modelId], ['Cost', credits(t.cost)], ['Created', fmtDate(t.createdAt)], ...optionPairs(t.options)]),
    inputsView(t.inputs),
    h('div', { class: 'actions' }, deliver, refund), err);
  const settle = (action, button) => async () => {
    err.clear();
    deliver.disabled = refund.disabled = true;
    try {
      const r = await busy(button, () => post('/api/v1/admin/review/' + encodeURIComponent(t.jobId), { action }));
      replace(card, note(`Task ${shortID(t.jobId)} ${action === 'deliver' ? 'delivered' : 'refunded'}: now ${String(r.status).replace('_', ' ')}.`));
      card.dataset.settled = action;
    } catch (e) {
      deliver.disabled = refund.disabled = false;
      err.show(e);
    }
  };
  deliver.addEventListener('click', settle('deliver', deliver));
  refund.addEventListener('click', settle('refund', refund));
  return card;
}

// ---------- engines ----------

// replicationCard shows serve --replicate's replica: its lag, and a
// warning when it is behind or failing (docs/operations.md, Backups).
function replicationCard(r) {
  const lag = (r.lagSeconds || 0).toFixed(1) + ' s';
  return h('section', { class: 'card replication', dataset: { replication: r.status } },
    h('div', { class: 'card-head' },
      h('h2', {}, 'Replica ', h('code', {}, r.target)),
      h('span', {}, badge(r.status, r.status === 'ok' ? 'ok' : 'warn'))),
    r.status !== 'ok' ? h('p', { class: 'note warn' }, r.status === 'failing'
      ? 'The last copy failed: writes since ' + (r.replicatedThrough ? fmtDate(r.replicatedThrough) : 'the start') + ' would be lost with this disk. ' + (r.error || '')
      : 'The replica is ' + lag + ' behind: writes since ' + fmtDate(r.replicatedThrough) + ' would be lost with this disk.') : null,
    table(['Lag', 'Replicated through', 'Files waiting', 'Every'], [[lag,
      r.replicatedThrough ? fmtDate(r.replicatedThrough) : '—', String(r.filesPending), r.interval]], ''));
}

// costsTable shows a provider's last 30 days by model: credits charged
// against what the provider charged (micro-USD), for the tasks whose
// upstream cost is known; a model whose credits per dollar fall is one
// that loses money.
function costsTable(costs) {
  const usd = m => '$' + (m / 1e6).toFixed(m >= 1e6 ? 2 : m >= 1e4 ? 4 : 6);
  return h('div', { class: 'upstream-costs' }, h('h3', {}, 'Last 30 days: credits charged vs upstream cost'),
    table(['Model', 'Tasks', 'Credits charged', 'Upstream cost', 'Credits per $1'], costs.map(c => [
      h('span', {}, modelName(c.modelId), ' ', h('code', { class: 'muted' }, c.modelId)),
      String(c.tasks), String(c.credits),
      c.pricedTasks ? h('span', {}, usd(c.upstreamMicroUsd), c.pricedTasks < c.tasks ? h('span', { class: 'muted small' }, ` (${c.pricedTasks} of ${c.tasks} tasks priced)`) : null) : h('span', { class: 'muted' }, 'unknown'),
      c.pricedTasks && c.upstreamMicroUsd > 0 ? (c.pricedCredits / (c.upstreamMicroUsd / 1e6)).toFixed(1) : '—']),
    'No tasks on this provider in the last 30 days.'));
}

export async function enginesPage(main, _rest, _q, seq) {
  document.title = 'Engines · gengate';
  const d = await get('/api/v1/admin/engines');
  if (!current(seq)) return;
  const engines = d.data || [];
  replace(main, h('h1', {}, 'Engines'),
    h('p', { class: 'muted' }, 'What serves each model here, by which routes, and whether each provider answers.'),
    d.replication ? replicationCard(d.replication) : null,
    engines.length ? engines.map(e => h('section', { class: 'card engine', dataset: { engine: e.name } },
      h('div', { class: 'card-head' },
        h('h2', {}, e.name, ' ', badge(e.kind, e.kind === 'sandbox' ? 'warn' : 'info')),
        h('span', {}, badge(e.status), e.checkedAt ? h('span', { class: 'muted small' }, ' checked ' + fmtDate(e.checkedAt)) : null)),
      e.kind === 'sandbox' ? h('p', { class: 'muted' }, 'Placeholders, not AI output: serves models no provider is configured for.') : null,
      table(['Model', 'Routes'], (e.models || []).map(m => [
        h('span', {}, modelName(m.modelId), ' ', h('code', { class: 'muted' }, m.modelId)),
        (m.routes || []).length ? h('ul', { class: 'routes' }, m.routes.map(r => h('li', {}, h('code', {}, r.provider), ' → ', h('code', {}, r.model)))) : h('span', { class: 'muted' }, '—')]),
        'No models.'),
      e.costs ? costsTable(e.costs) : null,
      e.registryUnreachable ? h('p', { class: 'note registry-unreachable' }, 'Model registry not read: ' + e.registryUnreachable + '. Its routes are as the last check left them.') : null,
      (e.retiredRoutes || []).length ? h('div', { class: 'retired-routes' }, h('h3', {}, 'Out of routing'),
        h('p', { class: 'muted small' }, "Routes this provider's model registry no longer lists or marks deprecated; back when a later check finds them."),
        table(['Model', 'Upstream', 'State', 'Reason'], e.retiredRoutes.map(r => [
          h('span', {}, modelName(r.modelId), ' ', h('code', { class: 'muted' }, r.modelId)), h('code', {}, r.upstream), badge(r.state, 'warn'), r.reason]))) : null)) : h('p', { class: 'empty' }, 'No engines.'));
}
