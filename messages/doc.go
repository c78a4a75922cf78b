// Package messages holds every message the actors exchange, one file per
// conversation. Messages are plain values. A report between actors goes
// to the sender named in the conversation's doc comment; a request from
// outside the tree carries its own reply channel (request.go). Nothing
// goes through a future (two actors waiting on each other can deadlock).
package messages
