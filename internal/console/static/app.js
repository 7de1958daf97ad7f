// app.js: the console's shell: boot, the hash router, the layout, and the
// account holder's pages. The playground and the operator pages live in
// their own modules.
import { state, api, get, post, patch, del, qs, loadSession, loadConfig, loadModels, modelByID, setUnauthorizedHandler } from './api.js?v=__V__';
import { h, clear, replace, fmtDate, fmtNum, credits, badge, placeholderTag, errorSlot, note, secretBox, field, table, busy, media, outputsOf, shortID, copyButton } from './dom.js?v=__V__';
import { go, current, nextSeq, refreshBalance } from './nav.js?v=__V__';
import { taskHeads, taskRow, dl, outputsView, inputsView, optionsView, modelName, ledgerNote } from './views.js?v=__V__';
import { playgroundPage } from './playground.js?v=__V__';
import { accountsPage, accountPage, reviewPage, enginesPage } from './admin.js?v=__V__';
import { accountSelfPage } from './account.js?v=__V__';
import { tasksPage, taskPage } from './tasks.js?v=__V__';
import { webhooksPage } from './webhooks.js?v=__V__';

const root = document.getElementById('app');

// route parses location.hash: "#/tasks/abc?status=x" -> {parts: ["tasks","abc"], query}.
function route() {
  const raw = location.hash.replace(/^#\/?/, '');
  const [p, q] = raw.split('?');
  return { parts: p.split('/').filter(Boolean).map(decodeURIComponent), query: new URLSearchParams(q || '') };
}

const publicPages = { signin: signinPage, signup: signupPage, link: linkPage };

const holderNav = [
  ['', 'Overview'], ['playground', 'Playground'], ['tasks', 'Tasks'], ['gallery', 'Gallery'],
  ['ledger', 'Ledger'], ['keys', 'API keys'], ['webhooks', 'Webhooks'], ['account', 'Account'],
];
const operatorNav = [['admin/accounts', 'Accounts'], ['admin/review', 'Review queue'], ['admin/engines', 'Engines']];

const pages = {
  '': overviewPage, playground: playgroundPage, tasks: tasksPage, gallery: galleryPage,
  ledger: ledgerPage, keys: keysPage, webhooks: webhooksPage, account: accountSelfPage,
};
const adminPages = { accounts: accountsPage, review: reviewPage, engines: enginesPage };

async function render() {
  const seq = nextSeq();
  const { parts, query } = route();
  const name = parts[0] || '';
  if (publicPages[name]) {
    document.title = 'gengate';
    const page = h('main', { class: 'auth-main', id: 'main' });
    replace(root, page);
    root.className = 'auth';
    await publicPages[name](page, parts.slice(1), query, seq);
    return;
  }
  if (!state.session) {
    go('#/signin', true);
    return;
  }
  let page;
  if (name === 'admin') {
    if (!state.session.operator) { go('#/', true); return; }
    if (parts[1] === 'accounts' && parts[2]) page = accountPage;
    else page = adminPages[parts[1]] || accountsPage;
  } else if (name === 'tasks' && parts[1]) {
    page = taskPage;
  } else {
    page = pages[name];
  }
  const main = shell(parts);
  if (!page) {
    document.title = 'Not found · gengate';
    replace(main, h('h1', {}, 'Not found'), h('p', {}, 'There is no such page. ', h('a', { href: '#/' }, 'Back to the overview.')));
    focusHeading(main);
    return;
  }
  try {
    await page(main, parts.slice(name === 'admin' ? 2 : 1), query, seq);
  } catch (err) {
    if (!current(seq)) return;
    const slot = errorSlot();
    main.appendChild(slot);
    slot.show(err);
  }
  if (current(seq)) focusHeading(main);
}

// focusHeading moves the focus to the new page's heading, so a screen
// reader announces the page and the next Tab starts in it, not in the
// navigation. A page that put the focus in its own first field keeps it.
function focusHeading(main) {
  if (main.contains(document.activeElement) && document.activeElement !== main) return;
  const h1 = main.querySelector('h1');
  if (!h1) { main.focus(); return; }
  h1.setAttribute('tabindex', '-1');
  h1.focus({ preventScroll: true });
}

// shell draws the signed-in layout (header, navigation) and returns <main>.
function shell(parts) {
  const s = state.session;
  const here = parts[0] === 'admin' ? 'admin/' + (parts[1] || 'accounts') : (parts[0] || '');
  const link = ([hash, label]) => h('a', { href: '#/' + hash, class: here === hash ? 'active' : '', 'aria-current': here === hash ? 'page' : null }, label);
  const balance = h('span', { class: 'balance', id: 'balance', title: 'remaining credits' }, '…');
  const signout = h('button', { type: 'button', class: 'btn ghost small', id: 'signout' }, 'Sign out');
  signout.addEventListener('click', () => signOut(signout));
  const main = h('main', { id: 'main', class: 'content', tabindex: '-1' });
  root.className = 'signed-in';
  // The skip link jumps over the header and navigation; it moves the focus
  // itself (an href="#main" would be taken for a route).
  const skip = h('a', { href: '#/', class: 'skip-link', id: 'skip-link' }, 'Skip to content');
  skip.addEventListener('click', (ev) => { ev.preventDefault(); focusHeading(main); });
  replace(root,
    skip,
    h('header', { class: 'top' },
      h('a', { href: '#/', class: 'brand' }, h('img', { src: '/console/logo.svg?v=__V__', alt: '', width: 24, height: 24 }), 'gengate'),
      h('div', { class: 'who' },
        h('a', { class: 'account-name', href: '#/account', title: 'your account' }, s.accountName || 'account'),
        balance,
        s.member && s.member.email !== s.accountName ? h('span', { class: 'email muted' }, s.member.email) : null,
        s.operator ? badge('operator', 'info') : null,
        signout)),
    h('div', { class: 'layout' },
      h('nav', { class: 'side', 'aria-label': 'Console' },
        h('div', { class: 'nav-group' }, holderNav.map(link)),
        s.operator ? h('div', { class: 'nav-group' }, h('div', { class: 'nav-title' }, 'Operator'), operatorNav.map(link)) : null),
      main));
  refreshBalance();
  return main;
}

async function signOut(button) {
  try {
    await busy(button, () => api('POST', '/api/v1/auth/signout'));
  } catch (e) { /* the session may be gone already */ }
  state.session = null;
  state.models = null;
  go('#/signin');
}

function signedIn(session) {
  state.session = session;
  state.models = null;
  go('#/', true);
}

// ---------- sign in, sign up, set-up link ----------

function authCard(title, ...body) {
  return h('section', { class: 'card auth-card' },
    h('div', { class: 'brand big' }, h('img', { src: '/console/logo.svg?v=__V__', alt: '', width: 32, height: 32 }), 'gengate'),
    h('h1', {}, title), ...body);
}

async function signinPage(main) {
  if (state.session) { go('#/', true); return; }
  const email = h('input', { type: 'email', name: 'email', autocomplete: 'username', required: true });
  const password = h('input', { type: 'password', name: 'password', autocomplete: 'current-password', required: true });
  const err = errorSlot();
  const button = h('button', { type: 'submit', class: 'btn primary wide' }, 'Sign in');
  const form = h('form', { id: 'signin-form', class: 'stack' }, field('Email', email), field('Password', password), err, button);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    err.clear();
    try {
      const s = await busy(button, () => post('/api/v1/auth/signin', { email: email.value.trim(), password: password.value }));
      signedIn(s);
    } catch (e) { err.show(e); }
  });
  replace(main, authCard('Sign in', form,
    h('p', { class: 'muted small' }, 'No password yet? Use the set-up link your operator gave you.'),
    state.config.openSignup ? h('p', {}, 'New here? ', h('a', { href: '#/signup' }, 'Create an account')) : null));
  email.focus();
}

async function signupPage(main) {
  if (!state.config.openSignup) {
    replace(main, authCard('Sign up', h('p', {}, 'This server does not take new accounts on its own. Ask its operator for a set-up link.'),
      h('p', {}, h('a', { href: '#/signin' }, 'Back to sign in'))));
    return;
  }
  const name = h('input', { type: 'text', name: 'name', autocomplete: 'organization' });
  const email = h('input', { type: 'email', name: 'email', autocomplete: 'username', required: true });
  const password = h('input', { type: 'password', name: 'password', autocomplete: 'new-password', required: true, minlength: 10 });
  const err = errorSlot();
  const button = h('button', { type: 'submit', class: 'btn primary wide' }, 'Create account');
  const form = h('form', { id: 'signup-form', class: 'stack', novalidate: true }, field('Email', email), field('Password', password, 'At least 10 characters.'),
    field('Account name (optional)', name), err, button);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    err.clear();
    const body = { email: email.value.trim(), password: password.value };
    if (name.value.trim()) body.name = name.value.trim();
    try {
      signedIn(await busy(button, () => post('/api/v1/auth/signup', body)));
    } catch (e) { err.show(e); }
  });
  replace(main, authCard('Create an account', form, h('p', {}, 'Have an account? ', h('a', { href: '#/signin' }, 'Sign in'))));
}

async function linkPage(main, rest) {
  const token = rest.join('/');
  const password = h('input', { type: 'password', name: 'password', autocomplete: 'new-password', minlength: 10 });
  const confirm = h('input', { type: 'password', name: 'confirm', autocomplete: 'new-password', minlength: 10 });
  const err = errorSlot();
  const button = h('button', { type: 'submit', class: 'btn primary wide' }, 'Set password and sign in');
  const skip = h('button', { type: 'button', class: 'btn ghost wide', id: 'link-skip' }, 'Sign in without changing the password');
  const use = async (btn, body) => {
    err.clear();
    try {
      const s = await busy(btn, () => post('/api/v1/auth/link', body));
      signedIn(s); // replaces the history entry that holds the token
    } catch (e) { err.show(e); }
  };
  const form = h('form', { id: 'link-form', class: 'stack' },
    field('New password', password, 'At least 10 characters.'), field('Repeat the password', confirm), err, button, skip);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    if (password.value.length < 10) {
      err.show({ problem: { title: 'Choose a longer password', detail: 'at least 10 characters', errors: [] } });
      return;
    }
    if (password.value !== confirm.value) {
      err.show({ problem: { title: 'The passwords differ', detail: 'type the same password twice', errors: [] } });
      return;
    }
    use(button, { token, password: password.value });
  });
  skip.addEventListener('click', () => use(skip, { token }));
  replace(main, authCard('Welcome to gengate', h('p', {}, 'Choose a password for your account. The link works once and for 24 hours.'), form));
  password.focus();
}

// ---------- overview ----------

async function overviewPage(main, _rest, q, seq) {
  document.title = 'Overview · gengate';
  replace(main, h('h1', {}, 'Overview'), h('p', { class: 'muted' }, 'Loading…'));
  const [acct, usage, recent] = await Promise.all([
    get('/api/v1/account'),
    get('/api/v1/account/usage?days=30'),
    get('/api/generation/jobs?limit=5'),
    loadModels().catch(() => []),
  ]);
  if (!current(seq)) return;
  refreshBalance(acct.remainingCredits);
  const rows = usage.data || [];
  const spent = rows.reduce((a, r) => a + (r.credits || 0), 0);
  const tasks = rows.reduce((a, r) => a + (r.tasks || 0), 0);
  const top = Math.max(1, ...rows.map(r => r.credits || 0));
  const bar = (v) => { const b = h('span', { class: 'bar' }); b.style.width = Math.max(2, Math.round(100 * v / top)) + '%'; return h('span', { class: 'bar-track' }, b); };
  const checkout = q.get('checkout');
  replace(main,
    h('h1', {}, 'Overview'),
    checkout === 'success' ? noteWithID('checkout-note', 'Payment received. The credits are added as soon as Stripe confirms it, usually within seconds; reload to see them.') : null,
    checkout === 'canceled' ? noteWithID('checkout-note', 'The payment was canceled; nothing was charged.', 'warn') : null,
    h('div', { class: 'cards' },
      h('div', { class: 'card stat' }, h('div', { class: 'stat-label' }, 'Balance'), h('div', { class: 'stat-value', id: 'overview-balance' }, fmtNum(acct.remainingCredits)), h('div', { class: 'muted' }, 'credits')),
      h('div', { class: 'card stat' }, h('div', { class: 'stat-label' }, 'Spent, 30 days'), h('div', { class: 'stat-value' }, fmtNum(spent)), h('div', { class: 'muted' }, 'credits')),
      h('div', { class: 'card stat' }, h('div', { class: 'stat-label' }, 'Tasks, 30 days'), h('div', { class: 'stat-value' }, fmtNum(tasks)), h('div', { class: 'muted' }, h('a', { href: '#/playground' }, 'New generation →')))),
    creditsCard(),
    dailyCard(),
    h('section', { class: 'card' }, h('h2', {}, 'Spend by model, last 30 days'),
      table(['Model', 'Share', '#Tasks', '#Credits'], rows.map(r => [modelName(r.modelId), bar(r.credits || 0), fmtNum(r.tasks), fmtNum(r.credits)]),
        'No spending in the last 30 days.')),
    h('section', { class: 'card' }, h('div', { class: 'card-head' }, h('h2', {}, 'Recent tasks'), h('a', { href: '#/tasks' }, 'All tasks →')),
      table(taskHeads, (recent.data || []).map(taskRow), 'No tasks yet. Try the playground.')));
}

function noteWithID(id, text, kind) {
  const n = note(text, kind);
  n.id = id;
  return n;
}

// creditsCard is the overview's "Buy credits" (only when the server sells
// by card: GET /api/v1/auth/config has topUp) and its redeem box.
function creditsCard() {
  const t = state.config.topUp;
  const parts = [];
  if (t) {
    const amount = h('input', { type: 'number', id: 'buy-credits', name: 'credits', min: t.minCredits, max: t.maxCredits, step: 1, value: t.minCredits, required: true });
    const price = h('span', { class: 'muted', id: 'buy-price' });
    const show = () => { price.textContent = amount.value ? (Number(amount.value) * t.unitAmount / 100).toFixed(2) + ' ' + t.currency.toUpperCase() : ''; };
    amount.addEventListener('input', show);
    show();
    const err = errorSlot();
    const button = h('button', { type: 'submit', class: 'btn primary', id: 'buy-button' }, 'Buy credits');
    const form = h('form', { id: 'buy-form', class: 'inline-form' }, field('Credits', amount, price), h('div', { class: 'field end' }, button));
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      err.clear();
      try {
        const c = await busy(button, () => post('/api/v1/account/checkout', { credits: Number(amount.value) }));
        location.assign(c.url); // Stripe's hosted page; it brings the buyer back here
      } catch (e) { err.show(e); }
    });
    parts.push(form, err);
  }
  const code = h('input', { type: 'text', id: 'redeem-code', name: 'code', required: true, autocomplete: 'off', placeholder: 'GG-XXXX-XXXX-XXXX-XXXX' });
  const rerr = errorSlot();
  const done = h('div', { id: 'redeem-done' });
  const rbutton = h('button', { type: 'submit', class: 'btn', id: 'redeem-button' }, 'Redeem');
  const rform = h('form', { id: 'redeem-form', class: 'inline-form' }, field('Redemption code', code), h('div', { class: 'field end' }, rbutton));
  rform.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    rerr.clear();
    try {
      const r = await busy(rbutton, () => post('/api/v1/account/redeem', { code: code.value }));
      refreshBalance(r.remainingCredits);
      const b = document.getElementById('overview-balance');
      if (b) b.textContent = fmtNum(r.remainingCredits);
      replace(done, note('Code redeemed: the balance is now ' + fmtNum(r.remainingCredits) + ' credits.'));
      rform.reset();
    } catch (e) { rerr.show(e); }
  });
  parts.push(rform, rerr, done);
  return h('section', { class: 'card', id: 'credits-card' }, h('h2', {}, t ? 'Add credits' : 'Redeem a code'), ...parts);
}

// dailyCard charts the credits spent per UTC day over 30 or 90 days, split
// by model or by key (each bar's title lists the split), with downloads.
function dailyCard() {
  // The bars say their figures only in their titles (a mouse's tooltip):
  // the chart as a whole says in words what it shows.
  const chart = h('div', { class: 'daychart', id: 'daychart', role: 'img', 'aria-label': 'Credits spent per day: loading' }, h('p', { class: 'muted' }, 'Loading…'));
  const days = h('select', { id: 'daychart-days', 'aria-label': 'Period' }, h('option', { value: '30' }, '30 days'), h('option', { value: '90' }, '90 days'));
  const by = h('select', { id: 'daychart-by', 'aria-label': 'Split by' }, h('option', { value: 'modelId' }, 'by model'), h('option', { value: 'keyId' }, 'by key'));
  const csv = h('a', { class: 'btn small', id: 'daychart-csv', download: '' }, 'Download CSV');
  const draw = async () => {
    csv.href = '/api/v1/account/usage/daily' + qs({ days: days.value, format: 'csv' });
    const d = await get('/api/v1/account/usage/daily' + qs({ days: days.value })).catch(() => ({ data: [] }));
    const perDay = new Map();
    for (const r of d.data || []) {
      const e = perDay.get(r.day) || { total: 0, split: {} };
      const k = r[by.value] || (by.value === 'keyId' ? 'console' : '');
      e.total += r.credits;
      e.split[k] = (e.split[k] || 0) + r.credits;
      perDay.set(r.day, e);
    }
    const n = Number(days.value);
    const top = Math.max(1, ...[...perDay.values()].map(e => e.total));
    const bars = [];
    for (let i = n - 1; i >= 0; i--) {
      const day = new Date(Date.now() - i * 86400000).toISOString().slice(0, 10);
      const e = perDay.get(day) || { total: 0, split: {} };
      const bar = h('span', { class: 'daybar', title: day + ': ' + fmtNum(e.total) + ' credits' +
        Object.entries(e.split).map(([k, v]) => '\n' + (by.value === 'modelId' ? modelName(k) : k.slice(-8)) + ': ' + fmtNum(v)).join('') });
      bar.style.height = Math.round(100 * e.total / top) + '%';
      bars.push(bar);
    }
    replace(chart, perDay.size ? bars : h('p', { class: 'muted' }, 'No spending in this period.'));
    const ranked = [...perDay.entries()].sort((a, b) => b[1].total - a[1].total);
    const total = ranked.reduce((a, [, e]) => a + e.total, 0);
    chart.setAttribute('aria-label', perDay.size
      ? `Credits spent per day over the last ${n} days: ${credits(total)} in all, on ${ranked.length} day${ranked.length === 1 ? '' : 's'}; the most, ${credits(ranked[0][1].total)}, on ${ranked[0][0]}.`
      : `No credits spent in the last ${n} days.`);
  };
  days.addEventListener('change', draw);
  by.addEventListener('change', draw);
  draw();
  return h('section', { class: 'card' }, h('div', { class: 'card-head' }, h('h2', {}, 'Spend per day'), h('div', { class: 'row-actions' }, days, by, csv,
    h('a', { class: 'btn small', id: 'daychart-ledger-csv', href: '/api/v1/account/ledger?format=csv', download: '' }, 'Ledger CSV'),
    h('a', { class: 'btn small', id: 'daychart-tasks-csv', href: '/api/generation/jobs?format=csv', download: '' }, 'Tasks CSV'))), chart);
}

// ---------- gallery ----------

async function galleryPage(main, _rest, _q, seq) {
  document.title = 'Gallery · gengate';
  await loadModels().catch(() => []);
  const grid = h('div', { class: 'gallery', id: 'gallery' });
  const more = h('button', { type: 'button', class: 'btn', id: 'gallery-more' }, 'Load more');
  const empty = h('p', { class: 'empty' }, 'No outputs yet. Generate something in the playground.');
  let cursor = '';
  const load = async () => {
    const page = await get('/api/generation/jobs' + qs({ status: 'succeeded', limit: 24, cursor }));
    if (!current(seq)) return;
    for (const t of page.data || []) {
      const m = modelByID(t.modelId);
      for (const u of outputsOf(t)) {
        grid.appendChild(h('figure', { class: 'tile' },
          // A video keeps its own controls; an image opens its task.
          t.type === 'video' ? media(u, t.type, (m ? m.name : t.modelId) + ' output')
            : h('a', { href: '#/tasks/' + encodeURIComponent(t.jobId), 'aria-label': 'task ' + shortID(t.jobId) }, media(u, t.type, (m ? m.name : t.modelId) + ' output')),
          t.placeholder ? placeholderTag() : null,
          h('figcaption', {}, h('a', { class: 'tile-model', href: '#/tasks/' + encodeURIComponent(t.jobId) }, m ? m.name : t.modelId),
            h('a', { href: u, download: '', class: 'tile-dl', 'aria-label': 'download' }, '↓'))));
      }
    }
    cursor = page.nextCursor || '';
    more.hidden = !cursor;
    empty.hidden = grid.children.length > 0;
  };
  more.addEventListener('click', () => busy(more, load));
  replace(main, h('h1', {}, 'Gallery'), empty, grid, h('div', { class: 'pager' }, more));
  await load();
}

// ---------- ledger ----------

async function ledgerPage(main, _rest, _q, seq) {
  document.title = 'Ledger · gengate';
  await loadModels().catch(() => []); // the charges' notes name their models
  const body = h('tbody', {});
  const more = h('button', { type: 'button', class: 'btn', id: 'ledger-more' }, 'Load more');
  const wrap = h('section', { class: 'card flush' }, h('div', { class: 'table-wrap' }, h('table', { id: 'ledger' },
    h('thead', {}, h('tr', {}, ['Date', 'Kind', 'Task', 'Note'].map(x => h('th', { scope: 'col' }, x)), ['Amount', 'Balance after'].map(x => h('th', { scope: 'col', class: 'num' }, x)))),
    body)));
  let cursor = '';
  const load = async () => {
    const page = await get('/api/v1/account/ledger' + qs({ limit: 25, cursor }));
    if (!current(seq)) return;
    for (const e of page.data || []) {
      body.appendChild(h('tr', {},
        h('td', { 'data-label': 'Date' }, fmtDate(e.createdAt)), h('td', { 'data-label': 'Kind' }, badge(e.kind, e.kind === 'charge' ? 'muted' : ['refund', 'grant', 'purchase', 'redemption'].includes(e.kind) ? 'ok' : 'info')),
        h('td', { 'data-label': 'Task' }, e.taskId ? h('a', { href: '#/tasks/' + encodeURIComponent(e.taskId), class: 'mono' }, shortID(e.taskId)) : ''),
        h('td', { 'data-label': 'Note' }, ledgerNote(e)),
        h('td', { class: 'num ' + (e.amount < 0 ? 'neg' : 'pos'), 'data-label': 'Amount' }, (e.amount > 0 ? '+' : '') + fmtNum(e.amount)),
        h('td', { class: 'num', 'data-label': 'Balance after' }, fmtNum(e.balanceAfter))));
    }
    cursor = page.nextCursor || '';
    more.hidden = !cursor;
    if (!body.children.length) wrap.replaceWith(h('p', { class: 'empty' }, 'No entries yet.'));
  };
  more.addEventListener('click', () => busy(more, load));
  replace(main, h('div', { class: 'card-head' }, h('h1', {}, 'Ledger'), h('a', { class: 'btn', id: 'ledger-csv', href: '/api/v1/account/ledger?format=csv', download: '' }, 'Download CSV')),
    h('p', { class: 'muted' }, 'Every change to the balance, newest first: charges and refunds of tasks, grants, purchases by card, redeemed codes.'), wrap, h('div', { class: 'pager' }, more));
  await load();
}

// ---------- keys ----------

async function keysPage(main, _rest, _q, seq) {
  document.title = 'API keys · gengate';
  const name = h('input', { type: 'text', name: 'name', required: true, maxlength: 100, placeholder: 'e.g. production' });
  const limit = h('input', { type: 'number', name: 'spendLimit', min: 1, step: 1, placeholder: 'no limit' });
  const err = errorSlot();
  const created = h('div', { id: 'key-created' });
  const button = h('button', { type: 'submit', class: 'btn primary' }, 'Create key');
  const form = h('form', { id: 'key-form', class: 'inline-form' },
    field('Name', name), field('Spend limit (credits per UTC day)', limit), h('div', { class: 'field end' }, button));
  const list = h('div', { id: 'keys-list' });
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    err.clear();
    const body = { name: name.value.trim() };
    if (limit.value !== '') body.spendLimit = Number(limit.value);
    try {
      const k = await busy(button, () => post('/api/v1/keys', body));
      replace(created, secretBox(`Key “${k.name}” created`, k.key, 'Copy it now: this is the only time the secret is shown. Send it as Authorization: Bearer <key>.', 'new-key'));
      form.reset();
      await loadKeys();
    } catch (e) { err.show(e); }
  });
  const loadKeys = async () => {
    const d = await get('/api/v1/keys');
    if (!current(seq)) return;
    const keys = d.data || [];
    replace(list, table(['Name', 'Key', 'Created', 'Last used', '#Spent today', '#Daily limit', 'Status', ''],
      keys.map(k => ({ attrs: { dataset: { keyId: k.id } }, cells: [
        k.name, h('code', {}, k.prefix + '…'), fmtDate(k.createdAt), k.lastUsedAt ? fmtDate(k.lastUsedAt) : h('span', { class: 'muted' }, 'never'),
        fmtNum(k.spentToday), k.spendLimit != null ? fmtNum(k.spendLimit) : h('span', { class: 'muted' }, 'none'),
        k.revokedAt ? badge('revoked', 'muted') : badge('active', 'ok'),
        k.revokedAt ? h('span', { class: 'muted' }, fmtDate(k.revokedAt)) : keyActions(k, loadKeys)] })),
      'No keys yet. Create one above.'));
  };
  replace(main, h('h1', {}, 'API keys'),
    h('p', { class: 'muted' }, 'Keys call the API on behalf of this account. A key with a spend limit is refused (402 SPEND_LIMIT_EXCEEDED) once it has spent that many credits in a UTC day.'),
    h('section', { class: 'card' }, h('h2', {}, 'New key'), form, err, created),
    h('section', { class: 'card flush' }, list));
  await loadKeys();
}

function keyActions(k, reload) {
  const err = errorSlot();
  const edit = h('button', { type: 'button', class: 'btn small', 'data-action': 'edit' }, 'Edit');
  const revoke = h('button', { type: 'button', class: 'btn small danger', 'data-action': 'revoke' }, 'Revoke');
  const box = h('div', { class: 'row-actions' }, edit, revoke, err);
  let armed = false;
  revoke.addEventListener('click', async () => {
    if (!armed) { // a second click confirms
      armed = true;
      revoke.textContent = 'Confirm revoke';
      revoke.setAttribute('data-action', 'confirm-revoke');
      return;
    }
    try {
      await busy(revoke, () => del('/api/v1/keys/' + encodeURIComponent(k.id)));
      await reload();
    } catch (e) { err.show(e); }
  });
  edit.addEventListener('click', () => {
    const name = h('input', { type: 'text', value: k.name });
    const lim = h('input', { type: 'number', min: 1, step: 1, value: k.spendLimit ?? '', placeholder: 'no limit' });
    const save = h('button', { type: 'submit', class: 'btn small primary' }, 'Save');
    const cancel = h('button', { type: 'button', class: 'btn small ghost' }, 'Cancel');
    // Visible labels: in the row, "50" alone would not say what it is.
    const f = h('form', { class: 'row-edit' }, h('label', {}, 'Name', name), h('label', {}, 'Daily limit', lim), save, cancel, err);
    cancel.addEventListener('click', () => reload());
    f.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      try {
        await busy(save, () => patch('/api/v1/keys/' + encodeURIComponent(k.id), { name: name.value.trim(), spendLimit: lim.value === '' ? null : Number(lim.value) }));
        await reload();
      } catch (e) { err.show(e); }
    });
    box.replaceWith(f);
    name.focus();
  });
  return box;
}

// ---------- boot ----------

setUnauthorizedHandler(() => go('#/signin'));
window.addEventListener('hashchange', render);
(async function boot() {
  await Promise.all([loadSession(), loadConfig()]);
  root.classList.remove('boot');
  render();
})();

