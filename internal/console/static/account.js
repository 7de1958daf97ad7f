// account.js: the signed-in member's own account page: the account's name
// (renamed here by its owner or an operator) and members, a password
// change, and this member's sessions (each with its browser; one can be
// ended) with "sign out everywhere".
import { state, api, get, post, patch, del, qs } from './api.js?v=__V__';
import { h, replace, fmtDate, badge, errorSlot, note, field, table, busy } from './dom.js?v=__V__';
import { go, current } from './nav.js?v=__V__';

export async function accountSelfPage(main, _rest, _q, seq) {
  document.title = 'Account · gengate';
  const a = await get('/api/v1/account');
  if (!current(seq)) return;
  const s = state.session;
  const me = s.member || {};
  const name = h('dd', { id: 'account-name' }, a.name || '(no name)');
  replace(main,
    h('h1', {}, 'Account'),
    h('div', { class: 'grid2' },
      h('section', { class: 'card', id: 'account-info' }, h('h2', {}, 'This account'),
        h('dl', { class: 'props' },
          h('dt', {}, 'Name'), name,
          h('dt', {}, 'ID'), h('dd', {}, h('code', {}, a.id)),
          h('dt', {}, 'Created'), h('dd', {}, fmtDate(a.createdAt)),
          h('dt', {}, 'Signed in as'), h('dd', {}, me.email || '', ' ', me.role ? badge(me.role, me.role === 'operator' ? 'info' : 'muted') : null)),
        managesAccount(me) ? renameForm(a, name) : h('p', { class: 'muted' }, 'Only the account\'s owner can rename it.')),
      passwordCard()),
    sessionsCard(me, seq),
    h('section', { class: 'card flush', id: 'account-members' }, h('h2', { class: 'pad' }, 'Members'),
      table(['Email', 'Role', 'Since'], (a.members || []).map(m => [m.email, badge(m.role, m.role === 'operator' ? 'info' : 'muted'), fmtDate(m.createdAt)]), 'No members.')));
}

// managesAccount mirrors the API's rule (gengate.Member.ManagesAccount):
// the owner or an operator renames the account. The API decides; this
// only spares the others a form that would be refused.
function managesAccount(me) { return me.role === 'owner' || me.role === 'operator'; }

// renameForm renames the account (PATCH /api/v1/account). The new name
// shows at once here and in the header.
function renameForm(a, shown) {
  const input = h('input', { type: 'text', name: 'name', value: a.name || '', required: true, maxlength: 200, autocomplete: 'organization' });
  const err = errorSlot();
  const done = h('div', { id: 'rename-done' });
  const button = h('button', { type: 'submit', class: 'btn' }, 'Rename');
  const form = h('form', { id: 'rename-form', class: 'stack', novalidate: true },
    field('Account name', input, 'Shown in the header and to the operators. Up to 200 bytes, one line.'), err, button, done);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    err.clear();
    replace(done);
    if (!input.value.trim()) {
      err.show({ problem: { title: 'Choose a name', detail: 'the account needs a name' } });
      return;
    }
    let acct;
    try {
      acct = await busy(button, () => patch('/api/v1/account', { name: input.value }));
    } catch (e) {
      err.show(e);
      return;
    }
    input.value = acct.name;
    shown.textContent = acct.name;
    if (state.session) state.session.accountName = acct.name;
    const header = document.querySelector('.account-name');
    if (header) header.textContent = acct.name;
    replace(done, note('Renamed.'));
  });
  return form;
}

// passwordCard changes the member's password. A wrong current password
// answers 401: that is a refusal shown next to the form, not the end of
// the session, so the call does not take the page to the sign-in form.
function passwordCard() {
  const cur = h('input', { type: 'password', name: 'currentPassword', autocomplete: 'current-password', required: true });
  const next = h('input', { type: 'password', name: 'password', autocomplete: 'new-password', required: true, minlength: 10 });
  const again = h('input', { type: 'password', name: 'confirm', autocomplete: 'new-password', required: true, minlength: 10 });
  const err = errorSlot();
  const done = h('div', { id: 'password-done' });
  const button = h('button', { type: 'submit', class: 'btn primary' }, 'Change password');
  const form = h('form', { id: 'password-form', class: 'stack', novalidate: true },
    field('Current password', cur), field('New password', next, 'At least 10 characters.'), field('Repeat the new password', again), err, button, done);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    err.clear();
    replace(done);
    if (next.value.length < 10) {
      err.show({ problem: { title: 'Choose a longer password', detail: 'at least 10 characters' } });
      return;
    }
    if (next.value !== again.value) {
      err.show({ problem: { title: 'The new passwords differ', detail: 'type the same new password twice' } });
      return;
    }
    try {
      await busy(button, () => api('POST', '/api/v1/account/password', { currentPassword: cur.value, password: next.value }, { noRedirect: true }));
      form.reset();
      replace(done, note('Password changed. Every other session of yours has ended; this one stays signed in.'));
    } catch (e) {
      if (e.code === 'INVALID_CREDENTIALS') {
        err.show({ problem: { title: 'The current password is wrong', detail: 'nothing was changed' } });
      } else {
        err.show(e);
      }
    }
  });
  return h('section', { class: 'card' }, h('h2', {}, 'Password'), form);
}

// sessionsCard is this member's sessions, newest first, each with the
// browser it began in and its last use: the one of this browser is
// marked, and any one can be ended (DELETE /api/v1/account/sessions/{id});
// ending this browser's is signing out. A button ends every one of them
// (POST /api/v1/auth/signout-all).
function sessionsCard(me, seq) {
  const err = errorSlot();
  const list = h('div', { id: 'sessions-list' }, h('p', { class: 'muted' }, 'Loading…'));
  const more = h('button', { type: 'button', class: 'btn small', id: 'sessions-more', hidden: true }, 'Load more');
  const sessions = [];
  let cursor = '';
  const draw = () => replace(list, table(['Browser', 'Signed in', 'Last used', ''], sessions.map(x => ({
    attrs: { 'data-session': x.id, class: x.current ? 'current' : '' },
    cells: [h('span', {}, x.browser || 'Unknown browser', x.current ? [' ', badge('this browser', 'info')] : null),
      fmtDate(x.createdAt), fmtDate(x.lastUsedAt), endButton(x)],
  })), 'No sessions.'));
  const endButton = (x) => {
    const b = h('button', { type: 'button', class: 'btn small' + (x.current ? '' : ' danger'), 'data-end': x.id,
      'aria-label': (x.current ? 'Sign out of this browser' : 'End the session of ' + (x.browser || 'an unknown browser') + ', signed in ' + fmtDate(x.createdAt)) },
    x.current ? 'Sign out' : 'End');
    b.addEventListener('click', async () => {
      err.clear();
      try {
        await busy(b, () => del('/api/v1/account/sessions/' + encodeURIComponent(x.id)));
      } catch (e) {
        err.show(e);
        return;
      }
      if (x.current) { signedOut(); return; }
      sessions.splice(sessions.indexOf(x), 1);
      draw();
    });
    return b;
  };
  const load = async () => {
    const page = await get('/api/v1/account/sessions' + qs({ limit: 20, cursor }));
    if (!current(seq)) return;
    sessions.push(...(page.data || []));
    cursor = page.nextCursor || '';
    more.hidden = !cursor;
    draw();
  };
  more.addEventListener('click', () => busy(more, load).catch(e => err.show(e)));
  load().catch(e => { replace(list); err.show(e); });

  const button = h('button', { type: 'button', class: 'btn danger', id: 'signout-all' }, 'Sign out everywhere');
  let armed = false;
  button.addEventListener('click', async () => {
    if (!armed) { // a second click confirms
      armed = true;
      button.textContent = 'Confirm: sign out everywhere';
      button.dataset.armed = 'true';
      return;
    }
    err.clear();
    try {
      await busy(button, () => post('/api/v1/auth/signout-all'));
    } catch (e) {
      err.show(e);
      return;
    }
    signedOut();
  });
  return h('section', { class: 'card', id: 'account-sessions' }, h('h2', {}, 'Sessions'),
    h('p', {}, 'You are signed in as ', h('strong', {}, me.email || 'this member'), ' in these browsers. A session ends 14 days after its last use, 30 days after signing in, or when you sign out. "Last used" is to within an hour.'),
    list, h('div', { class: 'actions' }, more), err,
    h('p', { class: 'muted' }, 'Signed in on another computer, or on one you no longer use? End its session above, or sign out everywhere: that ends every session of yours, on every browser, this one too. API keys are not affected: revoke those on the API keys page.'),
    h('div', { class: 'actions' }, button));
}

// signedOut forgets the ended session and shows the sign-in form.
function signedOut() {
  state.session = null;
  state.models = null;
  go('#/signin');
}
