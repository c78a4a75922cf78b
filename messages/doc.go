// Package messages holds every message the actors exchange, one file per
// conversation. Messages are plain values; a reply goes to the sender named
// in the conversation's doc comment, never through a future between actors
// (two actors waiting on each other can deadlock).
package messages
