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
