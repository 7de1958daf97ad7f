// account.js: the signed-in member's own account page: the account's name
// and members, a password change, and this member's sessions with
// "sign out everywhere".
import { state, api, get, post } from './api.js?v=__V__';
import { h, replace, fmtDate, badge, errorSlot, note, field, table, busy } from './dom.js?v=__V__';
import { go, current } from './nav.js?v=__V__';

export async function accountSelfPage(main, _rest, _q, seq) {
  document.title = 'Account · gengate';
  const a = await get('/api/v1/account');
  if (!current(seq)) return;
  const s = state.session;
  const me = s.member || {};
  replace(main,
    h('h1', {}, 'Account'),
    h('div', { class: 'grid2' },
      h('section', { class: 'card', id: 'account-info' }, h('h2', {}, 'This account'),
        h('dl', { class: 'props' },
          h('dt', {}, 'Name'), h('dd', { id: 'account-name' }, a.name || '(no name)'),
          h('dt', {}, 'ID'), h('dd', {}, h('code', {}, a.id)),
          h('dt', {}, 'Created'), h('dd', {}, fmtDate(a.createdAt)),
          h('dt', {}, 'Signed in as'), h('dd', {}, me.email || '', ' ', me.role ? badge(me.role, me.role === 'operator' ? 'info' : 'muted') : null))),
      passwordCard()),
    sessionsCard(me),
    h('section', { class: 'card flush', id: 'account-members' }, h('h2', { class: 'pad' }, 'Members'),
      table(['Email', 'Role', 'Since'], (a.members || []).map(m => [m.email, badge(m.role, m.role === 'operator' ? 'info' : 'muted'), fmtDate(m.createdAt)]), 'No members.')));
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

// sessionsCard is this member's sessions: the one of this browser, and a
// button that ends every one of them (POST /api/v1/auth/signout-all).
function sessionsCard(me) {
  const err = errorSlot();
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
    state.session = null;
    state.models = null;
    go('#/signin');
  });
  return h('section', { class: 'card', id: 'account-sessions' }, h('h2', {}, 'Sessions'),
    h('p', {}, 'You are signed in here as ', h('strong', {}, me.email || 'this member'), '. A session ends 14 days after its last use, 30 days after signing in, or when you sign out.'),
    h('p', { class: 'muted' }, 'Signed in on another computer, or on one you no longer use? Sign out everywhere ends every session of yours, on every browser, this one too. API keys are not affected: revoke those on the API keys page.'),
    h('div', { class: 'actions' }, button), err);
}
