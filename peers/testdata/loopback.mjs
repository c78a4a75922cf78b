// loopback.mjs is a Node preload (node --import <this file> ...) that keeps
// a test server off every interface but loopback: server-everything calls
// Express's app.listen(PORT), which binds all interfaces and has no host
// option. Every net.Server.listen with no host, or with a wildcard host
// (0.0.0.0, ::), binds 127.0.0.1 instead. Unix sockets, file descriptors
// and handles are left alone.
import net from "node:net";

const LOOPBACK = "127.0.0.1";
const WILDCARD = new Set(["", "0.0.0.0", "::", "::0", "0:0:0:0:0:0:0:0"]);

function isWildcard(host) {
  return host === undefined || host === null || WILDCARD.has(host);
}

// isPort says whether a first listen argument is a TCP port, as Node's own
// argument parsing sees it: a number, or a string that reads as one (a
// string that does not is a pipe path).
function isPort(arg) {
  return typeof arg === "number" || (typeof arg === "string" && arg.trim() !== "" && !Number.isNaN(Number(arg)));
}

const listen = net.Server.prototype.listen;

net.Server.prototype.listen = function (...args) {
  const first = args[0];
  if (first !== null && typeof first === "object") {
    // listen(options[, cb]) or listen(handle[, backlog][, cb]).
    const isOptions = !("_handle" in first) && first.fd === undefined && first.path === undefined && first.handle === undefined;
    if (isOptions && isWildcard(first.host)) {
      args[0] = { ...first, host: LOOPBACK };
    }
  } else if (first === undefined || typeof first === "function") {
    // listen() or listen(cb): a random port on every interface.
    args.splice(0, first === undefined ? 1 : 0, 0, LOOPBACK);
  } else if (isPort(first)) {
    // listen(port[, host][, backlog][, cb]).
    if (typeof args[1] === "string") {
      if (isWildcard(args[1])) args[1] = LOOPBACK;
    } else {
      args.splice(1, 0, LOOPBACK);
    }
  }
  return listen.apply(this, args);
};
