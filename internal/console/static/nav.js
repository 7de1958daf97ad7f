// nav.js: navigation state shared by the pages: the render counter (so an
// answer that arrives after the user moved on is dropped), hash moves and
// the balance in the header.
import { get } from './api.js?v=__V__';
import { credits } from './dom.js?v=__V__';

let seq = 0;

// nextSeq starts a new render and returns its number.
export function nextSeq() { return ++seq; }

// current reports whether the render numbered s is still the page shown.
export function current(s) { return s === seq; }

export function go(hash, replaceEntry) {
  if (replaceEntry) location.replace(hash); else location.hash = hash;
}

// refreshBalance shows the balance in the header: known, or read from the API.
export async function refreshBalance(known) {
  const el = document.getElementById('balance');
  if (!el) return;
  if (typeof known === 'number') { el.textContent = credits(known); return; }
  try {
    const a = await get('/api/v1/account');
    if (typeof a.remainingCredits === 'number') el.textContent = credits(a.remainingCredits);
  } catch {
    el.textContent = '';
  }
}

// redraw draws a page anew (draw replaces what main shows) and, when the
// focus was in the page, gives it back: to the element of the same id,
// else to the page's heading. Without it the focus would fall to the
// document's body, and the keyboard and a screen reader would start over
// from the top.
export function redraw(main, draw) {
  const had = document.activeElement;
  const inside = !!had && had !== main && main.contains(had);
  const id = inside ? had.id : '';
  draw();
  if (!inside || main.contains(document.activeElement)) return;
  const same = id ? document.getElementById(id) : null;
  const el = same && main.contains(same) ? same : main.querySelector('h1');
  if (!el) return;
  if (el.tagName === 'H1') el.setAttribute('tabindex', '-1');
  el.focus({ preventScroll: true });
}
