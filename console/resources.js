// The resources tab: read a server's resource by its URI (POST
// /api/mcp/resources/read) and subscribe to its updates (POST and DELETE
// /api/mcp/resources/subscriptions), whose resource_updated events are
// listed as they arrive. The API has no route that lists a server's
// resources, so the URI is typed in.
import { h, fill, toast } from './dom.js';
import { api, seg } from './api.js';
import { block } from './schemaform.js';

let updates; // the list of resource_updated events, once the tab is built
const pendingUpdates = []; // events that came before it was

// item renders one content item of a read.
const item = (c) => (c.text != null
  ? block({ type: 'resource', resource: { uri: c.uri, text: c.text } })
  : h('p', { class: 'muted' }, `[${c.mime_type || 'binary'} ${c.uri}, ${Math.floor((c.blob || '').length * 3 / 4)} bytes]`));

// resourcesTab builds the tab once; names gives the servers to offer.
export function resourcesTab(tab, names) {
  let server = tab.querySelector('select[name=server]');
  if (!server) {
    server = h('select', { name: 'server' });
    const uri = h('input', { type: 'text', name: 'uri', placeholder: 'demo://readme', spellcheck: 'false', autocomplete: 'off', size: 40 });
    const out = h('div', { class: 'result', 'data-read': '' });
    const subs = h('tbody', {});
    const read = async () => {
      try {
        const res = await api('POST', '/api/mcp/resources/read', { server: server.value, uri: uri.value });
        fill(out, (res.contents || []).map(item));
      } catch (e) { fill(out, h('p', { class: 'error' }, e.message)); }
    };
    const subscribe = async () => {
      const s = server.value;
      const u = uri.value;
      try {
        const { id } = await api('POST', '/api/mcp/resources/subscriptions', { server: s, uri: u });
        const row = h('tr', { 'data-sub': id }, h('td', {}, s), h('td', {}, u), h('td', {}, id), h('td', {},
          h('button', { type: 'button', onclick: async () => {
            try { await api('DELETE', `/api/mcp/resources/subscriptions/${seg(id)}`); row.remove(); } catch (e) { toast(e.message, true); }
          } }, 'Unsubscribe')));
        subs.append(row);
      } catch (e) { toast(e.message, true); }
    };
    updates = h('ul', { 'data-updates': '' });
    fill(tab,
      h('form', { class: 'toolbar', onsubmit: (ev) => { ev.preventDefault(); read(); } }, server, uri,
        h('button', { type: 'submit', 'data-action': 'read' }, 'Read'), h('button', { type: 'button', 'data-action': 'subscribe', onclick: subscribe }, 'Subscribe')),
      out,
      h('h3', {}, 'Subscriptions'), h('p', { class: 'muted' }, 'A subscription lives until its Unsubscribe, not only while this page is open.'),
      h('table', {}, h('thead', {}, h('tr', {}, ['server', 'uri', 'id', ''].map((x) => h('th', {}, x)))), subs),
      h('h3', {}, 'Updates'), updates);
    for (const e of pendingUpdates.splice(0)) resourceUpdated(e);
  }
  const was = server.value;
  fill(server, names.map((n) => h('option', { value: n }, n)));
  if (names.includes(was)) server.value = was;
}

// resourceUpdated lists a resource_updated event (the newest first, at
// most 100).
export function resourceUpdated(e) {
  if (!updates) { pendingUpdates.push(e); pendingUpdates.splice(0, pendingUpdates.length - 100); return; }
  updates.prepend(h('li', { 'data-update': e.uri }, `${new Date(e.time).toLocaleTimeString()} ${e.server} `, h('code', {}, e.uri)));
  while (updates.children.length > 100) updates.lastChild.remove();
}
