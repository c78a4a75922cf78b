// DOM helpers. Everything the page shows is built here with
// createElement and text nodes: no value is ever parsed as HTML, so
// what a server sends (names, descriptions, stderr, errors) stays text.

const props = new Set(['value', 'checked', 'disabled', 'hidden', 'selected', 'open', 'readOnly']);

// refused are the attributes h never sets: a style attribute (the CSP
// refuses inline style; app.css styles the page), srcdoc (a document from
// a string) and href (a link is made by httpLink only, which checks its
// scheme).
const refused = new Set(['style', 'srcdoc', 'href']);

// h makes an element: attrs are attributes (props above are set as
// properties, on* as listeners, class as className); children are nodes or
// strings (text), arrays flattened, null/false skipped.
export function h(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (refused.has(k.toLowerCase())) throw new Error(`h: the attribute ${k} is not set here`);
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k === 'class') e.className = v;
    else if (props.has(k)) e[k] = v;
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  add(e, children);
  return e;
}

// add appends children to e as h does.
export function add(e, children) {
  for (const c of children.flat(Infinity)) {
    if (c == null || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

// fill replaces e's children.
export function fill(e, ...children) {
  e.replaceChildren();
  return add(e, children);
}

// toast shows a short message at the bottom of the page.
export function toast(msg, bad) {
  const t = document.getElementById('toast');
  t.className = bad ? 'bad show' : 'show';
  t.textContent = msg;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { t.className = ''; }, bad ? 8000 : 3000);
}

// httpLink is a link to an http(s) URL a server gave, opened in a new
// browsing context that gets neither this page nor its address; any other
// scheme is shown as text only.
export function httpLink(url, text) {
  if (!/^https?:\/\//i.test(url)) return h('span', { class: 'url' }, url);
  const a = h('a', { target: '_blank', rel: 'noopener noreferrer' }, text || url);
  a.setAttribute('href', url);
  return a;
}

// debounce runs fn once, wait ms after the last of a burst of calls.
export function debounce(fn, wait) {
  let timer;
  return (...args) => { clearTimeout(timer); timer = setTimeout(() => fn(...args), wait); };
}
