// webhooks.js: the account's webhook endpoints (#/webhooks): add one with
// its event types (the signing secret shows once), rotate its secret,
// delete it; one endpoint's delivery attempts with their HTTP status and a
// replay of an event (#/webhooks/<id>); and the account's own secret, the
// one that signs each task's webhookUrl deliveries.
import { get, post, del, qs } from './api.js?v=__V__';
import { h, replace, fmtDate, badge, errorSlot, secretBox, field, table, busy, shortID, note } from './dom.js?v=__V__';
import { current, redraw } from './nav.js?v=__V__';

export const eventTypes = ['generation.succeeded', 'generation.failed', 'generation.needs_review', 'generation.canceled'];

const eventStatusKind = { delivered: 'ok', pending: 'busy', failed: 'bad' };

export async function webhooksPage(main, rest, q, seq) {
  if (rest[0]) return endpointPage(main, rest[0], q, seq);
  document.title = 'Webhooks · gengate';
  const url = h('input', { type: 'url', name: 'url', required: true, maxlength: 2048, placeholder: 'https://hooks.example.com/gengate' });
  const boxes = eventTypes.map(t => h('input', { type: 'checkbox', name: 'eventTypes', value: t, id: 'ev-' + t.replace('.', '-'), checked: true }));
  const err = errorSlot();
  const created = h('div', { id: 'webhook-created' });
  const button = h('button', { type: 'submit', class: 'btn primary' }, 'Add endpoint');
  const form = h('form', { id: 'webhook-form', class: 'stack', novalidate: true },
    field('Endpoint URL', url, 'It gets a POST, signed as Standard Webhooks are, for each event of every task of this account.'),
    h('fieldset', {}, h('legend', {}, 'Events'), h('div', { class: 'checks' },
      boxes.map(b => h('div', { class: 'field check' }, b, h('label', { for: b.id }, b.value))))),
    err, h('div', {}, button), created);
  const list = h('div', { id: 'webhooks-list' });
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    err.clear();
    const types = boxes.filter(b => b.checked).map(b => b.value);
    if (!url.value.trim()) {
      err.show({ problem: { title: 'Enter the endpoint’s URL', detail: 'an https:// address that takes POST requests' } });
      return;
    }
    if (!types.length) {
      err.show({ problem: { title: 'Choose at least one event', detail: 'the endpoint gets only the events checked' } });
      return;
    }
    try {
      const e = await busy(button, () => post('/api/v1/webhooks', { url: url.value.trim(), eventTypes: types }));
      replace(created, secretBox('Endpoint added. Its signing secret:', e.secret,
        'Copy it now: it is shown only this once. Verify each delivery’s webhook-signature with it.', 'webhook-secret'));
      url.value = '';
      await load();
    } catch (e) { err.show(e); }
  });
  const load = async () => {
    const d = await get('/api/v1/webhooks');
    if (!current(seq)) return;
    const eps = d.data || [];
    replace(list, eps.length ? eps.map(e => endpointCard(e, load)) : h('p', { class: 'empty' }, 'No endpoints yet. Add one above.'));
  };
  replace(main, h('h1', {}, 'Webhooks'),
    h('p', { class: 'muted' }, 'Endpoints get an event when a task of this account succeeds, fails, is held for review or is canceled. Failed deliveries are retried for about 25 hours; each attempt is listed under the endpoint.'),
    h('section', { class: 'card' }, h('h2', {}, 'New endpoint'), form),
    list,
    accountSecretCard());
  await load();
}

// endpointCard is one endpoint with its actions: attempts, rotate, delete.
function endpointCard(e, reload) {
  const err = errorSlot();
  const out = h('div', {});
  const rotate = h('button', { type: 'button', class: 'btn small', 'data-action': 'rotate' }, 'Rotate secret');
  const remove = h('button', { type: 'button', class: 'btn small danger', 'data-action': 'delete' }, 'Delete');
  confirmTwice(rotate, 'Confirm rotate', async () => {
    err.clear();
    try {
      const r = await busy(rotate, () => post('/api/v1/webhooks/' + encodeURIComponent(e.id) + '/rotate'));
      replace(out, secretBox('New signing secret:', r.secret,
        `Copy it now: it is shown only this once. Until ${fmtDate(r.previousSecretExpiresAt)} deliveries are signed with both the new and the old secret.`, 'webhook-secret'));
    } catch (x) { err.show(x); }
  });
  confirmTwice(remove, 'Confirm delete', async () => {
    err.clear();
    try {
      await busy(remove, () => del('/api/v1/webhooks/' + encodeURIComponent(e.id)));
      await reload();
    } catch (x) { err.show(x); }
  });
  return h('section', { class: 'card endpoint', dataset: { endpointId: e.id } },
    h('div', { class: 'card-head' }, h('h2', { class: 'endpoint-url' }, e.url),
      h('div', { class: 'row-actions' }, h('a', { class: 'btn small', href: '#/webhooks/' + encodeURIComponent(e.id), 'data-action': 'attempts' }, 'Attempts'), rotate, remove)),
    h('p', {}, (e.eventTypes || []).map(t => [badge(t, 'info'), ' '])),
    h('p', { class: 'muted small' }, 'Added ', fmtDate(e.createdAt),
      e.previousSecretExpiresAt ? ` · the previous secret also signs until ${fmtDate(e.previousSecretExpiresAt)}` : ''),
    err, out);
}

// confirmTwice makes button run f on its second click; the first changes
// its label to ask for confirmation.
function confirmTwice(button, confirmLabel, f) {
  const label = button.textContent;
  let armed = false;
  button.addEventListener('click', async () => {
    if (!armed) {
      armed = true;
      button.textContent = confirmLabel;
      button.dataset.armed = 'true';
      return;
    }
    armed = false;
    delete button.dataset.armed;
    button.textContent = label;
    await f();
  });
}

// accountSecretCard is the secret of the tasks' own webhookUrl: shown on
// demand (the API gives it again at any time), and rotated.
function accountSecretCard() {
  const err = errorSlot();
  const out = h('div', { id: 'account-secret' });
  const show = h('button', { type: 'button', class: 'btn small', id: 'account-secret-show' }, 'Show secret');
  const rotate = h('button', { type: 'button', class: 'btn small', id: 'account-secret-rotate' }, 'Rotate');
  show.addEventListener('click', async () => {
    err.clear();
    try {
      const r = await busy(show, () => get('/api/v1/webhooks/secret'));
      replace(out, secretBox('Secret of the tasks’ own webhookUrl:', r.secret, 'Keep it private: it proves that a delivery comes from this server.'));
    } catch (e) { err.show(e); }
  });
  confirmTwice(rotate, 'Confirm rotate', async () => {
    err.clear();
    try {
      const r = await busy(rotate, () => post('/api/v1/webhooks/secret/rotate'));
      replace(out, secretBox('New secret of the tasks’ own webhookUrl:', r.secret,
        r.previousSecretExpiresAt ? `Until ${fmtDate(r.previousSecretExpiresAt)} deliveries are signed with both the new and the old secret.` : ''));
    } catch (e) { err.show(e); }
  });
  return h('section', { class: 'card' }, h('h2', {}, 'A task’s own webhookUrl'),
    h('p', { class: 'muted' }, 'A generate request may name its own webhookUrl; those deliveries are signed with the account’s secret, and their attempts show on the task.'),
    h('div', { class: 'actions' }, show, rotate), err, out);
}

// endpointPage lists one endpoint's delivery attempts, newest first, with
// a Replay of each event. Drawn anew after a replay, it keeps the focus
// in the page (redraw).
async function endpointPage(main, id, q, seq) {
  document.title = 'Webhook attempts · gengate';
  const [eps, page] = await Promise.all([
    get('/api/v1/webhooks'),
    get('/api/v1/webhooks/' + encodeURIComponent(id) + '/attempts' + qs({ limit: 25, cursor: q.get('cursor') })),
  ]);
  if (!current(seq)) return;
  const ep = (eps.data || []).find(e => e.id === id);
  const attempts = page.data || [];
  const status = h('div', { class: 'status-region', id: 'replay-status', role: 'status', 'aria-live': 'polite' });
  const rows = attempts.map(a => {
    const replay = h('button', { type: 'button', class: 'btn small', 'data-action': 'replay', 'data-event-id': a.eventId }, 'Replay');
    replay.addEventListener('click', async () => {
      const err = errorSlot();
      try {
        const r = await busy(replay, () => post('/api/v1/webhooks/events/' + encodeURIComponent(a.eventId) + '/replay'));
        replace(status, note(`Event ${shortID(a.eventId)} is being sent again (${r.status}).`));
        // Wait for the replay's attempt, then show the list with it.
        const seen = new Set(attempts.filter(x => x.eventId === a.eventId).map(x => x.at + '/' + x.attempt));
        for (let i = 0; i < 60 && current(seq); i++) {
          await new Promise(res => setTimeout(res, 500));
          const d = await get('/api/v1/webhooks/' + encodeURIComponent(id) + '/attempts' + qs({ limit: 25 })).catch(() => ({ data: [] }));
          const fresh = (d.data || []).find(x => x.eventId === a.eventId && !seen.has(x.at + '/' + x.attempt));
          if (fresh) {
            if (!current(seq)) return;
            await endpointPage(main, id, new URLSearchParams(), seq);
            const st = document.getElementById('replay-status');
            if (st) replace(st, note(`Replayed event ${shortID(a.eventId)}: attempt ${fresh.attempt} got ${fresh.status ? 'HTTP ' + fresh.status : 'no answer'}.`, fresh.status >= 200 && fresh.status < 300 ? 'ok' : 'warn'));
            return;
          }
        }
      } catch (e) {
        replace(status, err);
        err.show(e);
      }
    });
    return { attrs: { dataset: { eventId: a.eventId, attempt: String(a.attempt) } }, cells: [
      fmtDate(a.at), h('code', {}, a.type), a.jobId ? h('a', { href: '#/tasks/' + encodeURIComponent(a.jobId), class: 'mono' }, shortID(a.jobId)) : '',
      String(a.attempt), h('span', { class: 'http-status' }, a.status ? String(a.status) : 'no answer'),
      a.error ? h('span', { class: 'muted' }, a.error) : '', badge(a.eventStatus, eventStatusKind[a.eventStatus]), replay] };
  });
  redraw(main, () => replace(main,
    h('p', { class: 'crumbs' }, h('a', { href: '#/webhooks' }, '← Webhooks')),
    h('h1', {}, 'Attempts'),
    ep ? h('p', {}, 'Deliveries to ', h('code', {}, ep.url), ' ', (ep.eventTypes || []).map(t => [badge(t, 'info'), ' '])) : null,
    h('p', { class: 'muted' }, 'HTTP status is the receiver’s answer (2xx is delivered). Replay sends an event again with the same webhook-id and payload, at once.'),
    status,
    h('section', { class: 'card flush', id: 'attempts-list' },
      table(['When', 'Event', 'Task', '#Attempt', 'HTTP status', 'Error', 'Event status', ''], rows, 'No attempts yet: none of this account’s tasks has finished since the endpoint was added.')),
    h('div', { class: 'pager' },
      q.get('cursor') ? h('a', { class: 'btn', href: '#/webhooks/' + encodeURIComponent(id) }, '← Newest') : null,
      page.nextCursor ? h('a', { class: 'btn', href: '#/webhooks/' + encodeURIComponent(id) + qs({ cursor: page.nextCursor }) }, 'Older →') : null)));
}
